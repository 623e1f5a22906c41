// The latency histogram every load tool's replica writes into its summary
// (latency_histogram), the same for all: histograms add up over replicas
// where their percentiles do not, so the report reads a percentile of every
// replica's requests together from their sum. Plain JavaScript: k6 imports
// it (loadgen/lib/lab.js) as Node does (the vegeta and h2load wrappers, the
// report's readers).
//
// Log-spaced buckets, PER_DOUBLING of them to each doubling: bucket i holds
// the latencies in (2^((i-1)/PER_DOUBLING), 2^(i/PER_DOUBLING)] ms, each
// 2.2% wider than the one below, so a percentile read from them is within
// 2.2% of the requests' own (RESOLUTION).
export const PER_DOUBLING = 32;
export const RESOLUTION = 2 ** (1 / PER_DOUBLING) - 1;
// The first bucket also holds everything below 2^-7 ms (7.8 µs), the last
// everything above 2^22 ms (70 min, longer than any tool's timeout).
export const FIRST = -7 * PER_DOUBLING;
export const LAST = 22 * PER_DOUBLING;

// bucketOf MS: the bucket of a latency of MS milliseconds.
export function bucketOf(ms) {
  if (!(ms > 0)) return FIRST;
  return Math.min(LAST, Math.max(FIRST, Math.ceil(Math.log2(ms) * PER_DOUBLING)));
}

// upperMs I: the upper bound of bucket I, in ms.
export const upperMs = (i) => 2 ** (i / PER_DOUBLING);

// histogram COUNTS: the summary's latency_histogram from {bucket: requests}
// (empty buckets left out).
export function histogram(counts) {
  const kept = Object.entries(counts).filter(([, n]) => n > 0).sort((a, b) => Number(a[0]) - Number(b[0]));
  return { unit: 'ms', per_doubling: PER_DOUBLING, counts: Object.fromEntries(kept) };
}

// mergeHistograms LIST: one histogram of every request in LIST's histograms;
// null when one is missing or made with other buckets (a summary written
// before they existed): a merge without it would not be all the requests.
export function mergeHistograms(list) {
  if (list.length === 0 || !list.every((h) => h?.unit === 'ms' && h.per_doubling === PER_DOUBLING && h.counts)) return null;
  const counts = {};
  for (const h of list) for (const [i, n] of Object.entries(h.counts)) counts[i] = (counts[i] ?? 0) + n;
  return histogram(counts);
}

// quantileMs HISTOGRAM Q: the latency (ms) below which a share Q (0 to 1) of
// the requests fall: the bucket that holds that rank, interpolated in it
// geometrically (as the buckets are spaced) by the rank's place among its
// requests; null for an empty histogram.
export function quantileMs(h, q) {
  const buckets = Object.entries(h?.counts ?? {}).map(([i, n]) => [Number(i), n]).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((t, [, n]) => t + n, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (const [i, n] of buckets) {
    if (below + n >= rank && n > 0) {
      if (i === FIRST) return upperMs(FIRST);
      return upperMs(i - 1) * 2 ** (Math.min(1, Math.max(0, (rank - below) / n)) / PER_DOUBLING);
    }
    below += n;
  }
  return upperMs(buckets[buckets.length - 1][0]);
}
