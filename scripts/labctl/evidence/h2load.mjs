// The h2load load tool's evidence in a step folder: the replicas' summaries
// (h2load-N.json, loadgen/h2load/lib.mjs), each with h2load's own report
// verbatim (output), what was read from it and the latency histogram of its
// per-request log. Same interface as k6.mjs: read(stepDir, step).
import { readSummaries } from './files.mjs';
import { allRequests } from './percentiles.mjs';

// What read() measures, by the metrics.mjs names.
export const MEASURES = ['requests', 'successful', 'failed', 'seconds', 'p50_ms', 'p95_ms', 'p99_ms', 'mean_ms', 'req_rate', 'dropped'];

// read STEPDIR → {measured | null, client (the replicas' own CPU time),
// merged: null, versions, files, unreadable}.
export function read(stepDir) {
  const { summaries, files, unreadable } = readSummaries(stepDir, 'h2load');
  const replicas = summaries.filter((s) => s?.tool === 'h2load');
  const sum = (get) => replicas.reduce((t, s) => t + (Number(get(s)) || 0), 0);
  // The largest of the replicas' values; null when none has one.
  const max = (get) => {
    const values = replicas.map(get).filter((v) => v !== null && v !== undefined && Number.isFinite(Number(v))).map(Number);
    return values.length ? Math.max(...values) : null;
  };
  const requests = sum((s) => s.requests);
  const timed = replicas.filter((s) => Number.isFinite(s.latency_ms?.mean) && s.requests > 0);
  const weight = timed.reduce((t, s) => t + s.requests, 0);
  return {
    measured: replicas.length ? {
      requests,
      successful: sum((s) => s.ok),
      failed: sum((s) => s.failed),
      // h2load's "finished in": its clock, the longest replica's.
      seconds: max((s) => s.seconds),
      ...allRequests(replicas.map((s) => ({
        histogram: s.latency_histogram,
        own: { p50_ms: s.latency_ms?.median, p95_ms: s.latency_ms?.p95, p99_ms: s.latency_ms?.p99 },
      }))),
      mean_ms: weight > 0 ? timed.reduce((t, s) => t + s.latency_ms.mean * s.requests, 0) / weight : null,
      req_rate: sum((s) => s.req_rate),
      dropped: sum((s) => s.dropped),
    } : null,
    client: replicas.length ? {
      // h2load's own: the wrapper's start (node, h2load --version) taken out.
      cpu_ns: sum((s) => s.cpu?.ns - (s.cpu_start?.ns ?? 0)),
      cpu_source: replicas[0].cpu?.source ?? null,
    } : {},
    merged: null,
    versions: replicas.length ? { h2load: replicas[0].version ?? null } : {},
    files,
    unreadable,
  };
}
