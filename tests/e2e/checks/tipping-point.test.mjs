// tipping-point --quick (E2E_RUN): a tipping point is found (p99 leaves its
// flat region between two rates).
import assert from 'node:assert/strict';
import test from 'node:test';
import { summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('a tipping point is found', () => {
  const tp = s.tipping_point;
  assert.ok(tp && tp.above > tp.below, `summary.json's tipping_point: expected one with above > below, found ${JSON.stringify(tp)}`);
});
