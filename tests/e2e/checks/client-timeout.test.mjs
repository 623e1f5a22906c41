// client-timeout --quick (E2E_RUN): the trap (sleeps up to 2x the client
// timeout) fails about half the requests, the fix none.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('about half fail in the trap (35-65%), then none', () => {
  const [trap, fix] = s.rows.map((r) => r.measured?.failure_pct);
  assert.ok(trap >= 35 && trap <= 65 && fix === 0, `failure % per step: expected 35-65 then 0, found ${JSON.stringify(perStep(s, 'failure_pct'))}`);
});
