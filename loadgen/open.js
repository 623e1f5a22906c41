// Open model, like vegeta attack -rate: RATE requests per second for DURATION
// whatever the latency, each GET LOAD_PATH with the backend's /ping headers.
//   SLEEP_MS  "sleep" header: /ping answers after a random 0..SLEEP_MS ms
//   TIMES     "times" header: more pongs on the same response (default 0)
//   TIMEOUT   client timeout per request (vegeta's default: 30s)
//   MAX_VUS   requests in flight at most (k6 starts no more: "dropped")
//   PRE_VUS   VUs made before the start (default RATE/10; more VUs are made as
//             needed, but too slowly for long requests: those count as dropped)
//   GRACEFUL_STOP  time for requests in flight at the end to finish (0s)
// Requests still in flight when DURATION ends are not counted unless GRACEFUL_STOP.
//   RATE=200 DURATION=20s LOAD_PATH=/fast docker compose --profile load run --rm loadgen /loadgen/open.js
import { check } from 'k6';
import { constantArrivalRate, env, get, intEnv, loadOptions, summaryFiles } from './lib/lab.js';

const path = env('LOAD_PATH', '/ping');
const timeout = env('TIMEOUT', '30s');
const headers = { sleep: env('SLEEP_MS', '0'), times: env('TIMES', '0') };
const rate = intEnv('RATE', 100);
const maxVus = intEnv('MAX_VUS', 2000);
const preVus = Math.min(maxVus, intEnv('PRE_VUS', Math.max(10, Math.ceil(rate / 10))));

export const options = loadOptions({
  arrivals: constantArrivalRate(rate, env('DURATION', '10s'), preVus, maxVus),
});

export default function () {
  const res = get(path, { timeout, headers });
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
