// A fixed number of requests, like ab -n ITERATIONS -c VUS: VUS clients share
// ITERATIONS GET LOAD_PATH requests; the test ends when all are answered (or
// at MAX_DURATION).
//   TIMEOUT       response timeout per request (ab -s 90 → 90s)
//   KEEPALIVE     "false" (ab without -k) opens a new connection per request
//   START_SPREAD  each client's first request starts at a random time within
//                 this (ab opens its -c connections one after the other, over
//                 about a second for thousands; 0s: all at once)
// Every new connection's connect time is counted per whole second
// (connect_waits{after_s:N}): where SYN retries pile up.
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import {
  connectWaitThresholds, countConnectWait, env, get, intEnv, k6Duration, loadOptions, seconds, sharedIterations, summaryFiles,
} from './lib/lab.js';

const path = env('LOAD_PATH', '/fast');
const timeout = k6Duration('TIMEOUT', 90);
const startSpread = seconds('START_SPREAD', 0);

export const options = loadOptions({
  requests: sharedIterations(intEnv('VUS', 10), intEnv('ITERATIONS', 1000), k6Duration('MAX_DURATION', 600)),
});
Object.assign(options.thresholds, connectWaitThresholds());

export default function () {
  if (startSpread > 0 && exec.vu.iterationInScenario === 0) sleep(Math.random() * startSpread);
  const res = get(path, { timeout });
  countConnectWait(res);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
