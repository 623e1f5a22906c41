// The pacer load tool's evidence in a step folder: the replicas' summaries
// (pacer-N.json, loadgen/pacer/lib.mjs). Same interface as k6.mjs:
// read(stepDir, step).
import { readSummaries } from './files.mjs';

// What read() measures, by the metrics.mjs names.
export const MEASURES = ['requests', 'successful', 'failed', 'seconds', 'p50_ms', 'p95_ms', 'p99_ms', 'mean_ms', 'req_rate', 'dropped'];

// read STEPDIR STEP → {measured | null, client (the pacers' own CPU time and
// the handshakes they saw), merged: null, versions, files, unreadable}.
export function read(stepDir) {
  const { summaries, files, unreadable } = readSummaries(stepDir, 'pacer');
  const pacers = summaries.filter((s) => s?.tool === 'pacer');
  const sum = (get) => pacers.reduce((t, s) => t + (Number(get(s)) || 0), 0);
  const max = (get) => Math.max(0, ...pacers.map((s) => Number(get(s)) || 0));
  const requests = sum((s) => s.requests);
  const seconds = max((s) => s.seconds);
  return {
    measured: pacers.length ? {
      requests,
      successful: sum((s) => s.ok),
      failed: sum((s) => s.failed),
      seconds,
      // Replicas' percentiles cannot merge: the worst stands, as for k6.
      p50_ms: max((s) => s.latency_ms?.p50),
      p95_ms: max((s) => s.latency_ms?.p95),
      p99_ms: max((s) => s.latency_ms?.p99),
      mean_ms: requests > 0 ? sum((s) => (s.latency_ms?.mean ?? 0) * s.requests) / requests : null,
      req_rate: seconds > 0 ? requests / seconds : 0,
      dropped: sum((s) => s.dropped),
    } : null,
    client: pacers.length ? {
      cpu_ns: sum((s) => s.cpu?.ns),
      cpu_source: pacers[0].cpu?.source ?? null,
      tls_full: pacers.some((s) => s.tls) ? sum((s) => s.tls?.full) : null,
      tls_resumed: pacers.some((s) => s.tls) ? sum((s) => s.tls?.resumed) : null,
    } : {},
    merged: null,
    // The pacer is the lab's own code on the lab's node; the OpenSSL it ran on.
    versions: pacers.length ? { pacer_openssl: pacers[0].openssl ?? null } : {},
    files,
    unreadable,
  };
}
