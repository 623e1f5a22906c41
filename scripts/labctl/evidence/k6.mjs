// The k6 load tool's evidence in a step folder: the replicas' handleSummary
// files (loadgen-N.json) and each replica's own kernel, read before and after
// the load (loadgen-N-netstat-before/after.txt) and its settings
// (loadgen-1-sysctl.txt). Same interface as holder.mjs: read(stepDir, step).
import path from 'node:path';
import { readSummaries, readText } from './files.mjs';
import { cell, parseNetstat, parseSysctl } from './parsers.mjs';
import { allRequests } from './percentiles.mjs';

// What read() measures, by the metrics.mjs names.
export const MEASURES = [
  'requests', 'successful', 'failed', 'seconds', 'p50_ms', 'p95_ms', 'p99_ms', 'req_rate', 'mean_ms', 'floor_ms',
  'mean_above_floor_ms', 'dropped', 'connects_retried', 'littles_conns', 'syn_retrans',
];

// read STEPDIR STEP → {measured (the load's numbers) | null, client (the
// replicas' kernels), merged (null: k6 has no merged summary), versions,
// files, unreadable}.
export function read(stepDir, step) {
  const { names, summaries, files, unreadable } = readSummaries(stepDir, 'loadgen');
  const file = (name) => readText(path.join(stepDir, name));
  // Every replica's own network namespace: its kernel's SYN retransmits.
  const kernels = names.map((n) => n.replace(/\.json$/, ''))
    .map((n) => ({ before: parseNetstat(file(`${n}-netstat-before.txt`)), after: parseNetstat(file(`${n}-netstat-after.txt`)) }))
    .filter((c) => c.before && c.after);
  const retrans = (c) => cell(c.after['TcpExt.TCPSynRetrans']) - cell(c.before['TcpExt.TCPSynRetrans']);
  return {
    measured: summaries.length > 0 ? measure(summaries, step) : null,
    client: {
      syn_retrans: kernels.length ? kernels.reduce((t, c) => t + retrans(c), 0) : null,
      client_sysctl: parseSysctl(file('loadgen-1-sysctl.txt')),
    },
    merged: null,
    // What ran, from k6 itself ("k6 v1.8.1 (...)").
    versions: { k6: /^k6 v?(\S+)/.exec(file('loadgen-1-version.txt') ?? '')?.[1] ?? null },
    files,
    unreadable,
  };
}

function measure(summaries, step) {
  const values = (s, metric) => s?.metrics?.[metric]?.values ?? {};
  const sum = (get) => summaries.reduce((total, s) => total + cell(get(s)), 0);
  const max = (get) => Math.max(0, ...summaries.map((s) => cell(get(s))));
  // The floor probes (open.js FLOOR_RATE: the same request with sleep 0, beside
  // the load) are reported apart and taken out of the load's own numbers.
  const probe = (metric) => `${metric}{scenario:floor}`;
  const probes = sum((s) => values(s, probe('http_reqs')).count);
  const requests = sum((s) => values(s, 'http_reqs').count) - probes;
  const failed = sum((s) => values(s, 'http_req_failed').passes) - sum((s) => values(s, probe('http_req_failed')).passes);
  const seconds = max((s) => s?.state?.testRunDurationMs) / 1000;
  // Each replica's mean weighted by its requests: the mean of all requests.
  const totalMs = (metric, count) => sum((s) => cell(values(s, metric).avg) * cell(values(s, count).count));
  const meanMs = requests > 0 ? (totalMs('http_req_duration', 'http_reqs') - totalMs(probe('http_req_duration'), probe('http_reqs'))) / requests : null;
  // What the machine adds to every request, measured under the same load: a
  // probe's whole latency (connect, HAProxy, the backend's event loop). The
  // time to the first byte cannot tell: HAProxy holds a response's headers
  // until its body comes or 200 ms pass (MSG_MORE), so TTFB includes the sleep.
  const floorMs = probes > 0 ? totalMs(probe('http_req_duration'), probe('http_reqs')) / probes : null;
  const reqRate = seconds > 0 ? requests / seconds : 0;
  return {
    requests,
    successful: requests - failed,
    failed,
    seconds,
    // The load's requests in the histograms (loadgen/lib/lab.js), the floor
    // probes left out; k6's own percentiles count the probes in.
    ...allRequests(summaries.map((s) => ({
      histogram: s?.latency_histogram,
      own: { p50_ms: values(s, 'http_req_duration').med, p95_ms: values(s, 'http_req_duration')['p(95)'], p99_ms: values(s, 'http_req_duration')['p(99)'] },
    }))),
    req_rate: reqRate,
    mean_ms: meanMs,
    floor_ms: floorMs,
    mean_above_floor_ms: floorMs === null ? null : meanMs - floorMs,
    dropped: sum((s) => values(s, 'dropped_iterations').count),
    ...connectWaits(summaries),
    // Little's law with the arrival rate: the offered RATE of an open model.
    littles_conns: meanMs === null ? null : (Number(step.load?.env?.RATE) || reqRate) * (meanMs / 1000),
  };
}

// connect_waits{after_s:N} (loadgen/lib/lab.js) summed over the replicas:
// {N: connects that took about N s}, and how many took 1 s or more (at least
// one SYN retransmitted). Null when the script does not count them.
function connectWaits(summaries) {
  const waits = {};
  for (const s of summaries) {
    for (const [name, metric] of Object.entries(s?.metrics ?? {})) {
      const m = /^connect_waits\{after_s:(\d+)\}$/.exec(name);
      if (m && metric.values?.count > 0) waits[m[1]] = (waits[m[1]] ?? 0) + metric.values.count;
    }
  }
  if (!summaries.some((s) => s?.metrics?.connect_waits)) return { connect_waits: null, connects_retried: null };
  const retried = Object.entries(waits).filter(([k]) => Number(k) >= 1).reduce((t, [, v]) => t + v, 0);
  return { connect_waits: waits, connects_retried: retried };
}
