// Shared pieces of every k6 script in the lab: the target, the load shapes
// (as k6 scenarios) and the summary written for the scenario runner.
// Everything comes from __ENV so one script serves every step of a scenario.
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { checkK6, k6Duration as k6Spelled, seconds as k6Seconds } from './k6-knobs.mjs';
import { keepalive } from './values.mjs';

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

// seconds NAME DEFAULT: a duration knob in seconds (30s, 1m30s, 500ms or
// bare seconds, as every load tool reads it); DEFAULT in seconds.
export const seconds = (name, fallback) => k6Seconds(__ENV, name, fallback);

// k6Duration NAME DEFAULT: the same knob in the spelling k6's options and
// request timeouts take (Go's).
export const k6Duration = (name, fallback) => k6Spelled(__ENV, name, fallback);

export const target = env('TARGET', 'http://haproxy:8080');

// Every knob k6-knobs.mjs checks, in the init context every script runs
// before any load (run.sh, busybox sh, has no parser of its own): a bad
// LOADGEN_EXTRA_ARGS stops k6 before it sends a request.
checkK6(__ENV);

// Closed model: a fixed number of clients, each sending its next request when
// the previous one ends (gobench, ab -c).
export function constantVus(vus, lasting) {
  return { executor: 'constant-vus', vus, duration: lasting, gracefulStop: '0s' };
}

// A fixed number of requests shared by the clients (ab -n N -c C).
export function sharedIterations(vus, iterations, maxDuration) {
  return { executor: 'shared-iterations', vus, iterations, maxDuration };
}

// Open model: a fixed arrival rate whatever the latency (vegeta -rate).
// GRACEFUL_STOP: how long requests in flight at the end may still finish and
// be counted (0s: cut and not counted).
export function constantArrivalRate(rate, lasting, preAllocatedVUs, maxVUs) {
  return {
    executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration: lasting,
    preAllocatedVUs, maxVUs, gracefulStop: k6Duration('GRACEFUL_STOP', 0),
  };
}

// loadOptions SCENARIOS: the k6 options every lab script shares.
export function loadOptions(scenarios) {
  return {
    scenarios,
    // KEEPALIVE=false: a new TCP connection per request (ab without -k).
    noConnectionReuse: !keepalive(__ENV),
    discardResponseBodies: true,
    // The latency percentiles the runner's tables show.
    summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
  };
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
