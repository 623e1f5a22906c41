// A run interrupted by Ctrl-C in its second step (E2E_RUN): the partial
// results are kept, marked incomplete, the first step's data in them.
import assert from 'node:assert/strict';
import test from 'node:test';
import { incompleteMarker, runDir, summary } from './lib.mjs';

const s = summary();

test('partial results marked incomplete', () => {
  assert.equal(incompleteMarker(), true, `${runDir()}/INCOMPLETE: expected the marker, found none`);
  assert.ok(s.incomplete, `summary.json's incomplete: expected the reason, found ${JSON.stringify(s.incomplete)}`);
});

test('the first step kept', () => {
  assert.ok(s.rows[0]?.measured, `summary.json's first step (${s.rows[0]?.id}): expected its measurements, found ${JSON.stringify(s.rows[0]?.measured)}`);
});
