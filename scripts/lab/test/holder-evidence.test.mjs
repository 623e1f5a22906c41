// The holder's figures in a report: the ramp rate it reached and how late
// its answers in time came (evidence/holder.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lateP99, rampRate } from '../evidence/holder.mjs';
import { LATENCY_BOUNDS } from '../../../loadgen/holder/lib.mjs';

const late = (counts) => ({ late_ms: { bounds: LATENCY_BOUNDS, counts: [...counts, ...Array(LATENCY_BOUNDS.length - counts.length).fill(0)] } });

test('late p99: the upper bound of the bucket that holds the 99th percentile answer', () => {
  assert.equal(lateP99(late([100])), 1, 'all within 1 ms');
  // 98 within 2 ms, 2 within 1024 ms: the 99th is in the 1024 ms bucket.
  assert.equal(lateP99(late([0, 98, 0, 0, 0, 0, 0, 0, 0, 0, 2])), 1024);
  // 99 within 4 ms, one much later: p99 stays at 4 ms.
  assert.equal(lateP99(late([0, 0, 99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])), 4);
  assert.equal(lateP99(late([])), null, 'no answer in time');
  assert.equal(lateP99({}), null, 'a summary from before late_ms');
  const beyond = late([]);
  beyond.late_ms.counts[LATENCY_BOUNDS.length - 1] = 5;
  assert.equal(lateP99(beyond), null, 'later than the last bound: no number to give');
});

test('ramp rate: 99% of the planned connections ÷ the seconds it took to open them', () => {
  const samples = [0, 1000, 2000, 3000, 4000, 4000].map((open, t) => ({ t, open }));
  assert.equal(rampRate({ planned: 4000, samples }), 1000);
  assert.equal(rampRate({ planned: 5000, samples }), null, 'never held');
});
