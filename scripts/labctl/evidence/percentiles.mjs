// The latency percentiles of a step's requests, every replica's together,
// for the readers of the tools that measure latency (k6, vegeta, h2load).
import { mergeHistograms, quantileMs } from '../../../loadgen/lib/histogram.mjs';

const QUANTILES = { p50_ms: 0.5, p95_ms: 0.95, p99_ms: 0.99 };

// allRequests REPLICAS: REPLICAS are each {histogram (the summary's
// latency_histogram, loadgen/lib/histogram.mjs), own ({p50_ms, p95_ms,
// p99_ms}: the tool's own figures over its requests)} → {p50_ms, p95_ms,
// p99_ms, percentiles_from, worst_replica_ms}. Every replica's histogram
// merged: the percentiles of all their requests (percentiles_from
// 'histograms'). Evidence written before the histograms: one replica's own
// figures are all its requests' ('one replica'); several replicas' own
// figures cannot be merged (none: 'replicas apart'), and the worst of each
// is kept apart, for the report to name as such (worst_replica_ms).
export function allRequests(replicas) {
  const merged = mergeHistograms(replicas.map((r) => r.histogram));
  if (merged) {
    const figures = Object.fromEntries(Object.entries(QUANTILES).map(([metric, q]) => [metric, quantileMs(merged, q)]));
    return { ...figures, percentiles_from: 'histograms', worst_replica_ms: null };
  }
  const own = (metric, r) => (Number.isFinite(r.own?.[metric]) ? r.own[metric] : null);
  if (replicas.length === 1) {
    const figures = Object.fromEntries(Object.keys(QUANTILES).map((metric) => [metric, own(metric, replicas[0])]));
    return { ...figures, percentiles_from: 'one replica', worst_replica_ms: null };
  }
  const worst = (metric) => {
    const values = replicas.map((r) => own(metric, r)).filter((v) => v !== null);
    return values.length ? Math.max(...values) : null;
  };
  return {
    p50_ms: null, p95_ms: null, p99_ms: null,
    percentiles_from: replicas.length ? 'replicas apart' : null,
    worst_replica_ms: replicas.length ? Object.fromEntries(Object.keys(QUANTILES).map((metric) => [metric, worst(metric)])) : null,
  };
}
