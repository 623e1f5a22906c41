// A fixed number of requests, like ab -n ITERATIONS -c VUS: VUS clients share
// ITERATIONS GET LOAD_PATH requests; the test ends when all are answered (or
// at MAX_DURATION).
//   TIMEOUT   response timeout per request (ab -s 90 → 90s)
//   KEEPALIVE "false" (ab without -k) opens a new connection per request
import { check } from 'k6';
import { env, get, intEnv, loadOptions, sharedIterations, summaryFiles } from './lib/lab.js';

const path = env('LOAD_PATH', '/fast');
const timeout = env('TIMEOUT', '90s');

export const options = loadOptions({
  requests: sharedIterations(intEnv('VUS', 10), intEnv('ITERATIONS', 1000), env('MAX_DURATION', '10m')),
});

export default function () {
  const res = get(path, { timeout });
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
