// A load the e2e tests ran (tests/e2e-stack.sh, tests/e2e-reloads.sh),
// judged on k6's own summaries as the report reads them (load-counts.mjs),
// and each replica's latency histogram:
//   E2E_LOAD              what the load was, for the messages
//   E2E_SUMMARIES         k6 summaries (one per replica, alone in their
//                         folder), space-separated
//   E2E_MIN_REQUESTS      the fewest requests k6 must have sent
//   E2E_MAX_FAILED        (optional) the most that may have failed
//   E2E_HAPROXY_REQUESTS  (optional) the requests HAProxy counted on fe_main
//                         meanwhile: at least k6's
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { loadCounts } from './load-counts.mjs';
import { env } from './lib.mjs';

const load = env('E2E_LOAD');
const min = Number(env('E2E_MIN_REQUESTS'));
const { requests, failed } = loadCounts('k6', env('E2E_SUMMARIES').split(' '));
const { E2E_MAX_FAILED: maxFailed, E2E_HAPROXY_REQUESTS: haproxy } = process.env;

test(`${load}: ${requests} requests sent, at least ${min}`, () => {
  assert.ok(requests >= min, `requests k6 sent during ${load}: expected at least ${min}, found ${requests}`);
});

if (maxFailed !== undefined) {
  test(`${load}: ${failed} of ${requests} requests failed, at most ${maxFailed}`, () => {
    assert.ok(failed <= Number(maxFailed), `failed requests during ${load}: expected at most ${maxFailed}, found ${failed} of ${requests}`);
  });
}

if (haproxy !== undefined) {
  test(`${load}: HAProxy counted ${haproxy} requests, at least k6's ${requests}`, () => {
    assert.ok(Number(haproxy) >= requests, `requests HAProxy counted on fe_main during ${load}: expected at least the ${requests} k6 sent, found ${haproxy}`);
  });
}

// Every load request of a replica is in its latency histogram once (the
// report merges the replicas' histograms into its percentiles), but the one
// a VU was in when the load stopped (gracefulStop 0s): k6 counts it, and cuts
// its iteration before it reaches the histogram. The floor probes, when a
// script sends them, are not in it.
for (const file of env('E2E_SUMMARIES').split(' ')) {
  const { metrics, latency_histogram: histogram } = JSON.parse(readFileSync(file, 'utf8'));
  const loadRequests = metrics.http_reqs.values.count - (metrics['http_reqs{scenario:floor}']?.values.count ?? 0);
  const vus = metrics.vus_max?.values.max ?? 0;
  const counted = Object.values(histogram?.counts ?? {}).reduce((t, n) => t + n, 0);
  test(`${load}, ${file}: ${counted} requests in its latency histogram, of ${loadRequests} (${vus} VUs)`, () => {
    assert.ok(counted <= loadRequests && counted >= loadRequests - vus,
      `requests in ${file}'s latency histogram during ${load}: expected the load's ${loadRequests}, less at most one per VU (${vus}) cut at the stop, found ${counted}`);
  });
}
