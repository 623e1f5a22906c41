// A short fixed load through HAProxy: VUS clients for DURATION on PATH.
//   docker compose --profile load run --rm loadgen
//   LOADGEN_REPLICAS=2 docker compose --profile load up --scale loadgen=2 loadgen
import { check } from 'k6';
import { constantVus, env, get, intEnv, summaryFiles } from './lib/lab.js';

const path = env('LOAD_PATH', '/fast');

export const options = {
  scenarios: { smoke: constantVus(intEnv('VUS', 10), env('DURATION', '10s')) },
  // The latency percentiles the runner's tables show.
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(95)', 'p(99)', 'max'],
};

export default function () {
  const res = get(path);
  check(res, { 'status is 200': (r) => r.status === 200 });
}

export function handleSummary(data) {
  return summaryFiles(data);
}
