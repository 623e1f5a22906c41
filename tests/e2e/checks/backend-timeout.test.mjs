// backend-timeout --quick (E2E_RUN): with the backend's 2 s server timeout
// the connections plateau at rate x timeout (50/s x 2 s = 100, ±15%) and
// HAProxy logs SD aborts; the fix has none but a stray one among the ~500
// requests cut at once when k6 stops (scenarios/backend-timeout.json).
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });
const [trap = {}, fix = {}] = s.rows.map((r) => r.measured ?? {});

test('plateau at 50/s x 2 s in the trap', () => {
  assert.ok(Math.abs(trap.plateau_conns - 100) <= 15, `connections plateau in the trap: expected 100 ±15, found ${trap.plateau_conns}`);
});

test('SD aborts are the trap\'s', () => {
  assert.ok(trap.sd_aborts > 0 && fix.sd_aborts <= 3, `SD aborts per step: expected some, then at most 3, found ${JSON.stringify(perStep(s, 'sd_aborts'))}`);
});
