// oom --quick (E2E_RUN): HAProxy under a too small memory limit is OOM-killed
// in the trap; the fix holds every connection.
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('OOM kill in the trap only', () => {
  assert.deepEqual(column(s, 'oom_killed'), [1, 0], 'OOM kills of HAProxy per step (trap, fix)');
});
