// The latency histogram every load tool writes: its buckets, its merge over
// replicas and the percentiles read from it, against the exact percentiles
// of the same requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FIRST, LAST, PER_DOUBLING, RESOLUTION, bucketOf, histogram, mergeHistograms, quantileMs, upperMs } from '../histogram.mjs';

const histogramOf = (values) => {
  const counts = {};
  for (const ms of values) counts[bucketOf(ms)] = (counts[bucketOf(ms)] ?? 0) + 1;
  return histogram(counts);
};
// The exact percentile of VALUES: the smallest value with a share Q at or below it.
const exact = (values, q) => [...values].sort((a, b) => a - b)[Math.ceil(q * values.length) - 1];
// A deterministic spread of N latencies from LOW to HIGH ms, log-uniform.
const spread = (n, low, high) => Array.from({ length: n }, (_, k) => low * (high / low) ** (((k * 7919) % n) / n));

test('a bucket holds the latencies above the one below\'s bound, up to its own', () => {
  assert.equal(bucketOf(1), 0, '1 ms is the upper bound of bucket 0');
  assert.equal(bucketOf(1.0001), 1);
  assert.equal(bucketOf(2), PER_DOUBLING, 'a doubling is PER_DOUBLING buckets');
  assert.equal(bucketOf(0.5), -PER_DOUBLING);
  for (const ms of [0.013, 0.7, 3.3, 47, 1234.5, 29999]) {
    const b = bucketOf(ms);
    assert.ok(upperMs(b - 1) < ms && ms <= upperMs(b) * (1 + 1e-12), `${ms} ms in bucket ${b}: expected within (${upperMs(b - 1)}, ${upperMs(b)}]`);
  }
  assert.deepEqual([bucketOf(0), bucketOf(-1), bucketOf(1e-9), bucketOf(1e12)], [FIRST, FIRST, FIRST, LAST], 'beyond the ends: the end buckets');
  assert.ok(Math.abs(RESOLUTION - 0.0219) < 0.0001, `buckets 2.2% wide, found ${RESOLUTION}`);
});

test('a percentile from the histogram is within the buckets\' width of the requests\' own', () => {
  const values = spread(20000, 0.2, 3000);
  const h = histogramOf(values);
  for (const q of [0.5, 0.9, 0.95, 0.99, 0.999]) {
    const got = quantileMs(h, q);
    const want = exact(values, q);
    assert.ok(Math.abs(got / want - 1) <= RESOLUTION, `p${q * 100}: expected ${want} ms within ${RESOLUTION * 100}%, found ${got}`);
  }
  assert.equal(quantileMs(histogram({}), 0.99), null, 'no requests, no percentile');
});

test('two replicas with different latencies: the merged p99 is all the requests\' p99, not the larger replica\'s', () => {
  // A fast replica (1-10 ms) with many requests and a slow one (50-500 ms) with few.
  const fast = spread(9900, 1, 10);
  const slow = spread(200, 50, 500);
  const merged = mergeHistograms([histogramOf(fast), histogramOf(slow)]);
  const all = [...fast, ...slow];
  const want = exact(all, 0.99);
  const got = quantileMs(merged, 0.99);
  assert.ok(Math.abs(got / want - 1) <= RESOLUTION, `merged p99: expected ${want} ms (all ${all.length} requests) within ${RESOLUTION * 100}%, found ${got}`);
  const larger = Math.max(exact(fast, 0.99), exact(slow, 0.99));
  assert.ok(got < larger * 0.75, `merged p99 ${got} ms: expected well below the slower replica's own p99 ${larger} ms`);
  assert.equal(Object.values(merged.counts).reduce((t, n) => t + n, 0), all.length, 'every request of both replicas in the merge');
});

test('a merge needs every replica\'s histogram, in these buckets', () => {
  const h = histogramOf([1, 2, 3]);
  assert.equal(mergeHistograms([h, null]), null, 'a replica without one');
  assert.equal(mergeHistograms([h, { ...h, per_doubling: 8 }]), null, 'other buckets');
  assert.equal(mergeHistograms([]), null, 'no replica');
  assert.deepEqual(mergeHistograms([h]), h);
});
