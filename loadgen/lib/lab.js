// Shared pieces of every k6 script in the lab: the target, the load shapes
// (as k6 scenarios) and the summary written for the scenario runner.
// Everything comes from __ENV so one script serves every step of a scenario.
import http from 'k6/http';
import { Counter } from 'k6/metrics';
import { checkK6, k6Duration as k6Spelled, seconds as k6Seconds } from './k6-knobs.mjs';
import { keepalive } from './values.mjs';
import { FIRST, LAST, PER_DOUBLING, bucketOf, histogram } from './histogram.mjs';

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

// loadOptions SCENARIOS: the k6 options every lab script shares; a script
// adds its own thresholds to these.
export function loadOptions(scenarios) {
  return {
    scenarios,
    // KEEPALIVE=false: a new TCP connection per request (ab without -k).
    noConnectionReuse: !keepalive(__ENV),
    discardResponseBodies: true,
    // This replica's own latency percentiles (the report's come from the
    // replicas' histograms merged).
    summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
    // k6 takes its options from the first run of the init code (__VU 0);
    // each VU's own init makes them again for nothing, and the latency
    // thresholds cost 2-3 ms of CPU per VU there (measured, k6 1.8.1).
    thresholds: __VU === 0 ? latencyThresholds() : {},
  };
}

// Each load request's duration, counted in its bucket of the histogram every
// load tool writes (histogram.mjs), for the report to merge the replicas':
// k6's summary has only each replica's own percentiles. A Counter per
// doubling with a tag per bucket: k6 matches every sample against each
// tagged submetric of its metric, so 30 metrics of up to 32 tags cost a
// request ~7-9 µs of k6's CPU where one metric of 929 tags cost ~20, and a
// metric per bucket ~14 ms per VU to make (measured, k6 1.8.1). Thresholds
// that always pass make k6 summarise each tag.
const doublingOf = (bucket) => Math.floor((bucket - FIRST) / PER_DOUBLING);
const doublings = [];
for (let d = 0; d <= doublingOf(LAST); d += 1) doublings.push(new Counter(`latency_doubling_${d}`));
const BUCKET_METRIC = /^latency_doubling_\d+\{bucket:(-?\d+)\}$/;

function latencyThresholds() {
  const thresholds = {};
  for (let b = FIRST; b <= LAST; b += 1) thresholds[`latency_doubling_${doublingOf(b)}{bucket:${b}}`] = ['count>=0'];
  return thresholds;
}

// A request a VU is in when the load stops (gracefulStop 0s) is counted in
// http_reqs, but its iteration is cut before it gets here: the histogram
// misses at most one request per VU.
function countLatency(res) {
  const bucket = bucketOf(res.timings.duration);
  doublings[doublingOf(bucket)].add(1, { bucket: String(bucket) });
}

// latencyHistogram DATA: the histogram out of a k6 summary's bucket
// counters, which are taken out of it (a thousand entries, most of them 0).
function latencyHistogram(data) {
  const counts = {};
  for (const name of Object.keys(data.metrics)) {
    if (!name.startsWith('latency_doubling_')) continue;
    const m = BUCKET_METRIC.exec(name);
    if (m) counts[m[1]] = data.metrics[name].values.count;
    delete data.metrics[name];
  }
  return histogram(counts);
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

// get PATH PARAMS: one of the load's requests, counted in the histogram.
export function get(path, params) {
  const res = http.get(`${target}${path}`, params);
  countLatency(res);
  return res;
}

// probe PATH PARAMS: a request beside the load (open.js's floor probes),
// reported apart: not in the load's histogram.
export function probe(path, params) {
  return http.get(`${target}${path}`, params);
}

// handleSummary for every script: the full k6 summary as JSON under
// /results/<LOADGEN_SUMMARY_DIR>/loadgen-<n>.json (merged by the runner), its
// latency histogram in latency_histogram, and one line on stdout.
export function summaryFiles(data) {
  data.latency_histogram = latencyHistogram(data);
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
