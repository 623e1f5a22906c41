// The vegeta load tool's evidence in a step folder: the replicas' summaries
// (vegeta-N.json, loadgen/vegeta/lib.mjs), each with vegeta's own JSON report
// verbatim and its latency histogram. Same interface as k6.mjs: read(stepDir, step).
import { readSummaries } from './files.mjs';
import { allRequests } from './percentiles.mjs';

// What read() measures, by the metrics.mjs names.
export const MEASURES = ['requests', 'successful', 'failed', 'seconds', 'p50_ms', 'p95_ms', 'p99_ms', 'mean_ms', 'req_rate', 'dropped'];

const ms = (ns) => (Number.isFinite(Number(ns)) ? Number(ns) / 1e6 : null);

// read STEPDIR → {measured | null, client (the replicas' own CPU time),
// merged: null, versions, files, unreadable}.
export function read(stepDir) {
  const { summaries, files, unreadable } = readSummaries(stepDir, 'vegeta');
  const replicas = summaries.filter((s) => s?.tool === 'vegeta' && s.report && typeof s.report === 'object');
  const sum = (get) => replicas.reduce((t, s) => t + (Number(get(s)) || 0), 0);
  const max = (get) => Math.max(0, ...replicas.map((s) => Number(get(s)) || 0));
  const requests = sum((s) => s.report.requests);
  // vegeta's duration: first to last request sent (ns); its wait: the last answer after that.
  const seconds = max((s) => s.report.duration) / 1e9;
  return {
    measured: replicas.length ? {
      requests,
      successful: sum((s) => s.ok),
      failed: sum((s) => s.failed),
      seconds,
      ...allRequests(replicas.map((s) => ({
        histogram: s.latency_histogram,
        own: { p50_ms: ms(s.report.latencies?.['50th']), p95_ms: ms(s.report.latencies?.['95th']), p99_ms: ms(s.report.latencies?.['99th']) },
      }))),
      mean_ms: requests > 0 ? ms(sum((s) => (s.report.latencies?.mean ?? 0) * s.report.requests) / requests) : null,
      req_rate: sum((s) => s.report.rate),
      dropped: sum((s) => s.dropped),
    } : null,
    client: replicas.length ? {
      cpu_ns: sum((s) => s.cpu?.ns),
      cpu_source: replicas[0].cpu?.source ?? null,
    } : {},
    merged: null,
    versions: replicas.length ? { vegeta: replicas[0].version ?? null } : {},
    files,
    unreadable,
  };
}
