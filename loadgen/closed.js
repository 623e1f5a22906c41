// Closed model, like gobench -c N -t T: VUS clients for DURATION, each sending
// its next GET LOAD_PATH as soon as the previous one ends.
//   TIMEOUT   response timeout per request (gobench: 5s)
//   KEEPALIVE "false" opens a new connection for every request (ab without -k)
// Requests still in flight when DURATION ends are not counted (gracefulStop 0s).
//   docker compose --profile load run --rm -e VUS=20 -e DURATION=30s loadgen
//   LOAD_ENV_FILE=FILE docker compose --profile load up --no-deps --scale loadgen=2 loadgen
//     (FILE: NAME=value lines, LOADGEN_REPLICAS=2 among them)
import { check } from 'k6';
import { constantVus, env, get, intEnv, k6Duration, loadOptions, summaryFiles } from './lib/lab.js';

const path = env('LOAD_PATH', '/fast');
const timeout = k6Duration('TIMEOUT', 60);

export const options = loadOptions({ clients: constantVus(intEnv('VUS', 10), k6Duration('DURATION', 10)) });

export default function () {
  const res = get(path, { timeout });
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
