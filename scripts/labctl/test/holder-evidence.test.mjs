// The holder's figures in a report: the ramp rate it reached and how late
// its answers in time came (evidence/holder.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lateP99, rampRate, rampWindow } from '../evidence/holder.mjs';
import { heldByHaproxy } from '../evidence/run.mjs';
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
  // Paced: the kernel completed them all in 2 s, HAProxy took them through in 4 s.
  const paced = [[0, 0], [4000, 1000], [4000, 2000], [4000, 3000], [4000, 4000]].map(([open, confirmed], t) => ({ t, open, confirmed_total: confirmed }));
  assert.equal(rampRate({ planned: 4000, samples: paced }), 4000, 'unpaced: the open ones');
  assert.equal(rampRate({ planned: 4000, max_unconfirmed: 100, samples: paced }), 1000, 'paced: the ones HAProxy answered the headers of');
});

test('ramp window: from the first sample to the one that held 99%, in epoch ms, for the CPU used while opening', () => {
  const samples = [0, 1000, 2000, 3000, 4000, 4000].map((open, t) => ({ t: t + 1, open }));
  assert.deepEqual(rampWindow({ planned: 4000, started_at_ms: 50_000, samples }), [51_000, 55_000]);
  assert.equal(rampWindow({ planned: 5000, started_at_ms: 50_000, samples }), null, 'never held: no ramp');
  assert.equal(rampWindow({ planned: 4000, started_at_ms: null, samples }), null, 'no start time');
});

test('HAProxy held in the hold: the fewest it held in the samples inside the holders\' hold window, not the peak', () => {
  // Holders started at 1,000,000 ms; they held from 10 s to 70 s after.
  const merged = { started_at_ms: 1_000_000, hold_window: { from_t: 10, to_t: 70, min_open: 1000, max_open: 1000 } };
  const at = (s) => 1_000_000 + s * 1000;
  const samples = [
    { t: 5, at: at(5), haproxy: 300 }, // the ramp: not in the hold
    { t: 12, at: at(12), haproxy: 700 }, // the rest still in the accept queue
    { t: 40, at: at(40), haproxy: 1000 },
    { t: 69, at: at(69), haproxy: 1001 },
    { t: 75, at: at(75), haproxy: 200 }, // the ramp-down
  ];
  assert.equal(heldByHaproxy(samples, merged), 700);
  assert.equal(heldByHaproxy(samples.filter((x) => x.t !== 12), merged), 1000);
  assert.equal(heldByHaproxy(samples, { ...merged, hold_window: null }), null, 'no hold');
  assert.equal(heldByHaproxy([samples[0], samples[4]], merged), null, 'no sample in the hold');
  assert.equal(heldByHaproxy([...samples, { t: 50, at: at(50), haproxy: null }], merged), null, 'an instance that did not answer');
  assert.equal(heldByHaproxy(null, merged), null, 'no samples file');
});
