// Shared pieces of every k6 script in the lab: the target, the load shapes
// (as k6 scenarios) and the summary written for the scenario runner.
// Everything comes from __ENV so one script serves every step of a scenario.
import http from 'k6/http';

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
