// The tables of values.test.mjs (cases.mjs), run in k6's JavaScript
// runtime (tests/unit.sh test_unit_k6_reads_values_as_node_does): the module
// the k6 scripts import reads every case as node does. A difference stops
// k6 in its init context with every case that differs, expected and found.
import { DURATION_CASES, EXTRA_ARGS_CASES, EXTRA_OWN, KEEPALIVE_CASES, READ_CASES } from './cases.mjs';
import { duration, durationSeconds, extraArgs, goDuration, keepalive } from '../values.mjs';

const outcome = (read) => {
  try {
    return read();
  } catch (err) {
    return err instanceof RangeError ? err.message : `not a RangeError: ${err}`;
  }
};
const wrong = [];
const expect = (what, found, want) => {
  if (JSON.stringify(found) !== JSON.stringify(want)) wrong.push(`${what}: expected ${JSON.stringify(want)}, found ${JSON.stringify(found)}`);
};
for (const [text, want] of DURATION_CASES) expect(`durationSeconds(${JSON.stringify(text)})`, durationSeconds(text), want);
for (const [name, value, min, max, want] of READ_CASES) {
  expect(`duration(${name}=${JSON.stringify(value)})`, outcome(() => duration({ [name]: value }, name, 10, min, max)), want);
}
for (const [value, want] of KEEPALIVE_CASES) expect(`KEEPALIVE=${JSON.stringify(value)}`, outcome(() => keepalive({ KEEPALIVE: value })), want);
for (const [value, clusters, want] of EXTRA_ARGS_CASES) {
  expect(`X_ARGS=${JSON.stringify(value)}`, outcome(() => extraArgs({ X_ARGS: value }, 'X_ARGS', EXTRA_OWN, clusters)), want);
}
expect('goDuration(90.5)', goDuration(90.5), '1m30.5s');
const cases = DURATION_CASES.length + READ_CASES.length + KEEPALIVE_CASES.length + EXTRA_ARGS_CASES.length + 1;
if (wrong.length > 0) throw new Error(`k6 reads ${wrong.length} of ${cases} cases apart from node:\n${wrong.join('\n')}`);

export const options = { vus: 1, iterations: 1 };

export default function () {
  console.log(`k6 reads all ${cases} cases as node does`);
}
