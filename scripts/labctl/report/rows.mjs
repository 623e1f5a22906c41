// The report's rows: a step's repeated runs aggregated into one row (mean,
// min and max of every metric), ratios to a reference step, and comparisons
// of two rows against the noise of their runs.
import { RUN_METRICS, formatValue, metricLabel, scalar } from '../core/metrics.mjs';
import { signed } from './verdicts.mjs';

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

// A row before any run is counted: what the plan says of the step.
function emptyRow(steps) {
  const first = steps[0];
  return {
    id: first.id,
    label: first.label ?? first.id,
    x: first.x ?? first.label ?? first.id,
    curve: first.curve ?? null,
    cores: first.cores ?? null,
    // --versus: the step this one repeats with another HAProxy image, and the build each ran.
    versus_of: first.versus_of ?? null,
    build: first.build ?? null,
    runs: steps.filter((s) => s.measured).length,
    planned: steps.length,
    measured: null,
    min: null,
    max: null,
    published: { ...(first.published ?? {}) },
    expect: first.expect ?? {},
    model: first.model ?? {},
    verdicts: {},
    verdict: 'not run',
    // Copies: ratios are added per run without touching the caller's data.
    per_run: steps.map((s) => ({
      run: s.run ?? 1, dir: s.dir, config: s.config ?? null,
      measured: s.measured ? { ...s.measured } : null, status: s.files?.step ?? null,
    })),
  };
}

// aggregate STEPS (the runs of one step id) → its row.
export function aggregate(steps) {
  const row = emptyRow(steps);
  const ran = steps.filter((s) => s.measured);
  if (ran.length === 0) return row;
  row.measured = {};
  row.min = {};
  row.max = {};
  for (const metric of RUN_METRICS) setStats(row, metric);
  const cpus = ran.map((s) => s.measured.cpu).filter(Boolean);
  if (cpus.length > 0) {
    const names = [...new Set(cpus.flatMap((c) => Object.keys(c)))];
    row.measured.cpu = Object.fromEntries(names.map((n) => [n, mean(cpus.filter((c) => n in c).map((c) => c[n]))]));
  } else row.measured.cpu = null;
  // Per container memory and the clients' failure reasons: from the first run.
  row.measured.memory = ran[0].measured.memory ?? null;
  row.failures = ran[0].merged?.failures ?? null;
  row.measured.haproxy_alerts = ran[0].measured.haproxy_alerts ?? [];
  row.measured.connect_waits = ran[0].measured.connect_waits ?? null;
  // What the latency percentiles are of: the first run's (the same tool, the same replicas).
  row.measured.percentiles_from = ran[0].measured.percentiles_from ?? null;
  row.measured.worst_replica_ms = ran[0].measured.worst_replica_ms ?? null;
  row.measured.client_sysctl = ran[0].measured.client_sysctl ?? null;
  row.measured.notes = ran[0].measured.notes ?? [];
  row.measured.saturation = ran[0].measured.saturation ?? null;
  // Listening sockets other than the config asks, in any run (evidence/run.mjs listenerProblems).
  const differ = [...new Set(ran.flatMap((s) => s.measured.listeners_differ ?? []))];
  if (differ.length) row.measured.listeners_differ = differ;
  row.measured.cpu_breakdown = ran[0].measured.cpu_breakdown ?? null;
  // Each HAProxy instance's own figures (only with several): the first run's.
  if (ran[0].measured.instances) row.measured.instances = ran[0].measured.instances;
  // Connections over time (chart-time.svg): the first run's. Set last: in
  // summary.json the row's longest field comes after everything else.
  row.series = ran[0].series ?? null;
  return row;
}

// Mean, min and max of one metric over the runs that measured it.
function setStats(row, metric) {
  const xs = row.per_run.map((r) => scalar(r.measured, metric)).filter((v) => v !== null);
  row.measured[metric] = xs.length ? mean(xs) : null;
  row.min[metric] = xs.length ? Math.min(...xs) : null;
  row.max[metric] = xs.length ? Math.max(...xs) : null;
}

// addRatio ROWS BYID REFID: every row's hits/sec as a ratio to REFID's,
// measured (per run, then aggregated) and published.
export function addRatio(rows, byId, refId) {
  const ref = byId.get(refId);
  if (!ref) throw new Error(`ratio_to: no step "${refId}" in the plan`);
  const div = (a, b) => (a === null || a === undefined || !b ? null : a / b);
  const refPublished = ref.published.hits_per_sec;
  const base = ref.measured?.hits_per_sec;
  for (const row of rows) {
    const published = div(row.published.hits_per_sec, refPublished);
    if (published !== null) row.published.ratio = published;
    if (!row.measured) continue;
    for (const r of row.per_run) if (r.measured) r.measured.ratio = div(r.measured.hits_per_sec, base);
    setStats(row, 'ratio');
  }
}

function runStats(row, metric) {
  const xs = row.per_run.map((r) => scalar(r.measured, metric)).filter((v) => v !== null);
  if (xs.length === 0) return { n: 0, mean: null, spread: null };
  // spread = half the range, so "mean ±spread" spans about the runs seen.
  return { n: xs.length, mean: mean(xs), spread: (Math.max(...xs) - Math.min(...xs)) / 2 };
}

// Whether two rows differ by more than their runs' spread.
function noiseOf(A, B, out, c) {
  if (A.n >= 2 && B.n >= 2) {
    // Noise: mean of the two ranges, i.e. spreadA + spreadB.
    out.larger_than_noise = Math.abs(A.mean - B.mean) > A.spread + B.spread;
    return out.larger_than_noise ? 'larger than the noise' : 'within the noise';
  }
  if (A.n === 1 && B.n === 1) return 'one run each: cannot tell noise';
  return `one run of ${A.n === 1 ? c.a : c.b}: cannot tell noise`;
}

// compare COMPARISON BYID REPORT → {a, b, metric, means, spreads, diffPct, larger_than_noise, text}.
export function compare(c, byId, report) {
  const metric = c.metric ?? 'hits_per_sec';
  for (const id of [c.a, c.b]) if (!byId.has(id)) throw new Error(`comparison: no step "${id}" in the plan`);
  const A = runStats(byId.get(c.a), metric);
  const B = runStats(byId.get(c.b), metric);
  const out = {
    a: c.a, b: c.b, metric, article: c.article ?? null,
    meanA: A.mean, meanB: B.mean, spreadA: A.spread, spreadB: B.spread, runsA: A.n, runsB: B.n,
    diffPct: null, larger_than_noise: null, text: '',
  };
  const head = `${metricLabel(metric, report)}: ${c.a} vs ${c.b}`;
  const article = c.article ? `; article: ${c.article}` : '';
  if (A.n === 0 || B.n === 0) {
    out.text = `${head}: ${A.n === 0 ? c.a : c.b} not run${article}`;
    return out;
  }
  out.diffPct = A.mean ? ((B.mean - A.mean) / A.mean) * 100 : null;
  const noise = noiseOf(A, B, out, c);
  const show = (s) => `${formatValue(metric, s.mean)}${s.n > 1 ? ` ±${formatValue(metric, s.spread)}` : ''} (${s.n} run${s.n > 1 ? 's' : ''})`;
  const diff = out.diffPct === null ? '' : ` → ${c.b} ${signed(out.diffPct)}`;
  out.text = `${head}: ${show(A)} vs ${show(B)}${diff}, ${noise}${article}`;
  return out;
}
