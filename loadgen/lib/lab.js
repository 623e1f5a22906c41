// Shared pieces of every k6 script in the lab: the target, the load shapes
// (as k6 scenarios) and the summary written for the scenario runner.
// Everything comes from __ENV so one script serves every step of a scenario.
import http from 'k6/http';
import { Counter } from 'k6/metrics';

// env NAME [default]: a string from the environment, or the default.
export function env(name, fallback) {
  const value = __ENV[name];
  return value === undefined || value === '' ? fallback : value;
}

// intEnv NAME default: a positive integer from the environment, checked, so a
// typo fails the test at once instead of running a wrong load.
export function intEnv(name, fallback) {
  const raw = env(name, String(fallback));
  if (!/^[0-9]+$/.test(raw) || Number(raw) <= 0) {
    throw new Error(`${name} must be a positive integer (got "${raw}")`);
  }
  return Number(raw);
}

export const target = env('TARGET', 'http://haproxy:8080');

// Closed model: a fixed number of clients, each sending its next request when
// the previous one ends (gobench, ab -c).
export function constantVus(vus, duration) {
  return { executor: 'constant-vus', vus, duration, gracefulStop: '0s' };
}

// A fixed number of requests shared by the clients (ab -n N -c C).
export function sharedIterations(vus, iterations, maxDuration) {
  return { executor: 'shared-iterations', vus, iterations, maxDuration };
}

// Open model: a fixed arrival rate whatever the latency (vegeta -rate).
// GRACEFUL_STOP: how long requests in flight at the end may still finish and
// be counted (0s: cut and not counted).
export function constantArrivalRate(rate, duration, preAllocatedVUs, maxVUs) {
  return {
    executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration,
    preAllocatedVUs, maxVUs, gracefulStop: env('GRACEFUL_STOP', '0s'),
  };
}

// loadOptions SCENARIOS: the k6 options every lab script shares.
export function loadOptions(scenarios) {
  return {
    scenarios,
    // KEEPALIVE=false: a new TCP connection per request (ab without -k).
    noConnectionReuse: env('KEEPALIVE', 'true') === 'false',
    discardResponseBodies: true,
    // The latency percentiles the runner's tables show.
    summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  };
}

// "30s", "1m", "500ms" → seconds (k6's own duration strings, checked).
export function seconds(name, fallback) {
  const raw = env(name, fallback);
  const m = /^(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(raw);
  if (!m || raw === '') throw new Error(`${name} must be a duration such as 1s or 500ms (got "${raw}")`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) + Number(m[3] ?? 0) / 1000;
}

// How long each TCP connect took, in whole seconds: a SYN the server's kernel
// dropped (a full accept queue) is sent again after the client kernel's retry
// timeout, so connects pile up at the retry times (1, 2, 3 s... or the classic
// 1, 3, 7, 15 s). One counter per second, kept in the summary by thresholds
// that always pass (a tag alone does not make k6 summarise it).
const connectWaits = new Counter('connect_waits');
export const CONNECT_WAIT_MAX_S = 90;

export function connectWaitThresholds() {
  const thresholds = {};
  for (let s = 0; s <= CONNECT_WAIT_MAX_S; s += 1) thresholds[`connect_waits{after_s:${s}}`] = ['count>=0'];
  return thresholds;
}

// countConnectWait RESPONSE: a request that opened a connection (a kept-alive
// one reused has connecting 0, and so has one that never connected).
export function countConnectWait(res) {
  if (!(res.timings.connecting > 0)) return;
  // Whole seconds, rounded down: a retried SYN takes at least the 1 s initial
  // retransmission timeout, a busy client's slow connect less.
  const s = Math.min(CONNECT_WAIT_MAX_S, Math.floor(res.timings.connecting / 1000));
  connectWaits.add(1, { after_s: String(s) });
}

export function get(path, params) {
  return http.get(`${target}${path}`, params);
}

// handleSummary for every script: the full k6 summary as JSON under
// /results/<LOADGEN_SUMMARY_DIR>/loadgen-<n>.json (merged by the runner), and
// one line on stdout.
export function summaryFiles(data) {
  const replica = `loadgen-${env('LOADGEN_INDEX', '1')}`;
  const reqs = data.metrics.http_reqs ? data.metrics.http_reqs.values.count : 0;
  const failed = data.metrics.http_req_failed ? data.metrics.http_req_failed.values.passes : 0;
  const out = {
    stdout: `${replica}: ${reqs} requests, ${failed} failed\n`,
  };
  const dir = env('LOADGEN_SUMMARY_DIR', '');
  if (dir !== '') {
    out[`/results/${dir}/${replica}.json`] = JSON.stringify(data, null, 1);
  }
  return out;
}
