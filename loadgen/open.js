// Open model, like vegeta attack -rate: RATE requests per second for DURATION
// whatever the latency, each GET LOAD_PATH with the backend's /ping headers.
//   SLEEP_MS  "sleep" header: /ping answers after a random 0..SLEEP_MS ms
//   TIMES     "times" header: more pongs on the same response (default 0)
//   TIMEOUT   client timeout per request (vegeta's default: 30s)
//   MAX_VUS   requests in flight at most (k6 starts no more: "dropped")
//   PRE_VUS   VUs made before the start (default RATE/10; more VUs are made as
//             needed, but too slowly for long requests: those count as dropped)
//   GRACEFUL_STOP  time for requests in flight at the end to finish (0s)
//   FLOOR_RATE probes/s of the same request with sleep 0, beside the load (0 =
//             none): their latency is the floor the machine adds to every
//             request under the same load, reported apart (scenario "floor")
// Requests still in flight when DURATION ends are not counted unless GRACEFUL_STOP.
//   docker compose --profile load run --rm -e RATE=200 -e DURATION=20s -e LOAD_PATH=/fast loadgen /loadgen/open.js
import { check } from 'k6';
import { constantArrivalRate, env, get, intEnv, k6Duration, loadOptions, probe, summaryFiles } from './lib/lab.js';

const path = env('LOAD_PATH', '/ping');
const timeout = k6Duration('TIMEOUT', 30);
const lasting = k6Duration('DURATION', 10);
const headers = { sleep: env('SLEEP_MS', '0'), times: env('TIMES', '0') };
const rate = intEnv('RATE', 100);
const maxVus = intEnv('MAX_VUS', 2000);
const preVus = Math.min(maxVus, intEnv('PRE_VUS', Math.max(10, Math.ceil(rate / 10))));

const floorRate = Number(env('FLOOR_RATE', '0'));
if (!Number.isInteger(floorRate) || floorRate < 0) throw new Error(`FLOOR_RATE must be a whole number (got "${env('FLOOR_RATE')}")`);

const scenarios = { arrivals: constantArrivalRate(rate, lasting, preVus, maxVus) };
if (floorRate > 0) {
  scenarios.floor = { ...constantArrivalRate(floorRate, lasting, 2, 50), exec: 'floor' };
}
export const options = loadOptions(scenarios);
if (floorRate > 0) {
  // Thresholds that always pass, so the summary keeps the probes' own numbers.
  Object.assign(options.thresholds, {
    'http_reqs{scenario:floor}': ['count>=0'],
    'http_req_failed{scenario:floor}': ['rate>=0'],
    'http_req_duration{scenario:floor}': ['avg>=0'],
  });
}

export default function () {
  const res = get(path, { timeout, headers });
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function floor() {
  probe(path, { timeout, headers: { sleep: '0', times: '0' } });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
