import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DURATION_CASES, EXTRA_ARGS_CASES, EXTRA_OWN, KEEPALIVE_CASES, READ_CASES } from './cases.mjs';
import { duration, durationSeconds, extraArgs, goDuration, keepalive } from '../values.mjs';

// Each case's outcome: the value read, or the message of the RangeError thrown.
const outcome = (read) => {
  try {
    return read();
  } catch (err) {
    assert.equal(err.name, 'RangeError', `a bad value's error: ${err.stack}`);
    return err.message;
  }
};

test('durations: Go spelling or bare seconds, the table both runtimes share', () => {
  for (const [text, want] of DURATION_CASES) assert.equal(durationSeconds(text), want, `durationSeconds(${JSON.stringify(text)})`);
});

test('duration(): the default when unset, the bounds, one line naming the knob', () => {
  for (const [name, value, min, max, want] of READ_CASES) {
    assert.equal(outcome(() => duration({ [name]: value }, name, 10, min, max)), want, `${name}=${value}`);
  }
});

test('goDuration: the shortest Go spelling, read back as the same seconds', () => {
  const spelled = [[0, '0s'], [0.5, '500ms'], [90, '1m30s'], [90.5, '1m30.5s'], [3600, '1h'], [86400, '24h'],
    [0.00025, '250us'], [1.5e-6, '1500ns'], [3661, '1h1m1s'], [600, '10m']];
  for (const [seconds, want] of spelled) {
    assert.equal(goDuration(seconds), want, `goDuration(${seconds})`);
    assert.equal(durationSeconds(want), seconds, `read back ${want}`);
  }
});

test('KEEPALIVE: true unless false, anything else refused', () => {
  for (const [value, want] of KEEPALIVE_CASES) assert.equal(outcome(() => keepalive({ KEEPALIVE: value })), want, `KEEPALIVE=${value}`);
});

test("extra args: a tool's own flags pass, the wrapper's are refused with the knob to use", () => {
  for (const [value, clusters, want] of EXTRA_ARGS_CASES) {
    assert.deepEqual(outcome(() => extraArgs({ X_ARGS: value }, 'X_ARGS', EXTRA_OWN, clusters)), want, `X_ARGS=${JSON.stringify(value)}`);
  }
});
