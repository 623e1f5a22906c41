// The "measured vs published" half of the lab: read a results directory
// (plan.json + what each step left behind), compute each step's metrics,
// aggregate repeated runs, judge the scenario's expectations and write
// summary.json, summary.csv, report.md and chart.svg.
import fs from 'node:fs';
import path from 'node:path';
import { renderChart } from './chart.mjs';
import { mergeSummaries } from '../../loadgen/holder/merge.mjs';
import { parseSs } from './listeners.mjs';

// Numbers a step measures (cpu is an object container → percent; ratio only
// exists when the plan has ratio_to).
const CORE = [
  'requests', 'successful', 'failed', 'seconds', 'hits_per_sec', 'p50_ms', 'p95_ms', 'p99_ms',
  'max_sessions', 'max_queue', 'errors', 'maxconn_reached', 'listen_overflows',
];
// Long-lived and held connections: rates, connections on both sides of
// HAProxy (sampled while the load runs), HAProxy's log, memory per connection.
const LONG_LIVED = [
  'req_rate', 'mean_ms', 'floor_ms', 'mean_above_floor_ms', 'dropped', 'failure_pct', 'littles_conns', 'plateau_conns', 'backend_plateau',
  'haproxy_conns_peak', 'backend_conns_peak', 'sd_aborts', 'cd_aborts', 'connections', 'client_held',
  'bytes_haproxy', 'bytes_backend', 'bytes_holder', 'oom_killed',
];
// The accept queue, on both sides: fe_main's listening socket (its backlog
// read back with ss, the longest queue sampled during the load), HAProxy's
// kernel counters, and the clients' SYN retransmits and connect times.
const ACCEPT_QUEUE = ['backlog', 'accept_queue_max', 'listen_drops', 'syncookies', 'syn_retrans', 'connects_retried'];
const SCALARS = [...CORE, ...ACCEPT_QUEUE, ...LONG_LIVED];
export const METRICS = [...SCALARS, 'cpu', 'ratio'];
// Always in the CSV, after the plan's columns.
const CSV_METRICS = [...CORE.filter((m) => m !== 'seconds'), ...ACCEPT_QUEUE];
const COUNTS = new Set([
  'requests', 'successful', 'failed', 'max_sessions', 'max_queue', 'errors', 'maxconn_reached', 'listen_overflows',
  'dropped', 'plateau_conns', 'backend_plateau', 'haproxy_conns_peak', 'backend_conns_peak', 'sd_aborts',
  'cd_aborts', 'connections', 'client_held', 'bytes_haproxy', 'bytes_backend', 'bytes_holder', 'oom_killed',
  ...ACCEPT_QUEUE,
]);
const LABELS = {
  requests: 'requests', successful: 'successful', failed: 'failed', seconds: 'seconds',
  hits_per_sec: 'hits/sec', p50_ms: 'p50 ms (max of replicas)', p95_ms: 'p95 ms (max of replicas)',
  p99_ms: 'p99 ms (max of replicas)', max_sessions: 'max sessions', max_queue: 'max queue',
  errors: 'errors', maxconn_reached: 'maxconn reached', listen_overflows: 'listen overflows',
  cpu: 'HAProxy CPU %', ratio: 'ratio',
  backlog: 'backlog (ss)', accept_queue_max: 'accept queue (max sampled)', listen_drops: 'listen drops',
  syncookies: 'SYN cookies sent', syn_retrans: 'client SYN retransmits', connects_retried: 'connects after ≥1 s',
  req_rate: 'completed requests/sec', mean_ms: 'mean ms', floor_ms: 'floor ms (sleep-0 probes)',
  mean_above_floor_ms: 'mean − floor ms', dropped: 'dropped (k6 could not start them)',
  failure_pct: 'failed %', littles_conns: 'rate × mean time (Little)', plateau_conns: 'HAProxy conns (plateau)',
  backend_plateau: 'HAProxy→backend conns (plateau)', haproxy_conns_peak: 'HAProxy conns (peak)',
  backend_conns_peak: 'HAProxy→backend conns (peak)', sd_aborts: 'SD aborts (HAProxy log)', cd_aborts: 'CD aborts (HAProxy log)',
  connections: 'target connections', client_held: 'held by clients (whole hold)', bytes_haproxy: 'HAProxy bytes/conn',
  bytes_backend: 'backend bytes/conn', bytes_holder: 'client bytes/conn (RSS)', oom_killed: 'HAProxy OOM-killed',
};

export function metricLabel(metric, report = {}) {
  if (metric === 'ratio' && report.ratio_to) return `ratio to ${report.ratio_to}`;
  return LABELS[metric] ?? metric;
}

// ---------------------------------------------------------------- reading

// A missing file is normal (interrupted run): null, not an exception.
function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    throw err;
  }
}

function readJson(file) {
  const text = readText(file);
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null; // half-written by an interrupted run
  }
}

// HAProxy "show info": "Key: value" lines.
export function parseInfo(text) {
  if (text === null) return null;
  const info = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) info[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return info;
}

// One CSV line; HAProxy quotes fields that hold commas (e.g. check descriptions).
function splitCsvLine(line) {
  const cells = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted && c === '"' && line[i + 1] === '"') { cell += '"'; i++; }
    else if (c === '"') quoted = !quoted;
    else if (c === ',' && !quoted) { cells.push(cell); cell = ''; }
    else cell += c;
  }
  cells.push(cell);
  return cells;
}

// HAProxy "show stat": "# pxname,svname,..." then one row per proxy/server.
export function parseStat(text) {
  if (text === null) return null;
  const lines = text.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
  if (lines.length === 0 || !lines[0].startsWith('#')) return null;
  const names = splitCsvLine(lines[0].replace(/^#\s*/, ''));
  return lines.slice(1).map((line) => {
    const cells = splitCsvLine(line);
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? '']));
  });
}

// /proc/net/netstat: per prefix a header line then a values line → {"TcpExt.ListenOverflows": 12, ...}.
export function parseNetstat(text) {
  if (text === null) return null;
  const counters = {};
  const header = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    const fields = m[2].split(/\s+/);
    if (!header.has(m[1])) {
      header.set(m[1], fields);
      continue;
    }
    header.get(m[1]).forEach((name, i) => { counters[`${m[1]}.${name}`] = Number(fields[i]); });
    header.delete(m[1]);
  }
  return counters;
}

// "container cpu% mem" lines; a container sampled more than once keeps its peak.
export function parseCpu(text) {
  if (text === null) return null;
  const cpu = {};
  for (const line of text.split('\n')) {
    const [name, percent] = line.trim().split(/\s+/);
    const value = Number.parseFloat(percent);
    if (name && Number.isFinite(value)) cpu[name] = Math.max(cpu[name] ?? 0, value);
  }
  return cpu;
}

const UNITS = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 };

// docker stats "name cpu% used / limit" lines → {name: bytes used}.
export function parseMemory(text) {
  if (text === null) return null;
  const memory = {};
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+\S+\s+([\d.]+)\s*([A-Za-z]+)/.exec(line.trim());
    if (m && UNITS[m[3]]) memory[m[1]] = Number(m[2]) * UNITS[m[3]];
  }
  return memory;
}

// samples.txt: "t haproxy_conns backend_conns [accept_queue]" per second of
// load ("-": no answer; runs before the accept queue was sampled have 3 columns).
export function parseSamples(text) {
  if (text === null) return null;
  const number = (v) => (v === undefined || v === '-' ? null : Number(v));
  return text.split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 3 || f.length === 4)
    .map(([t, h, b, q]) => ({ t: Number(t), haproxy: number(h), backend: number(b), queue: number(q) }));
}

// loadgen-N-sysctl.txt: "name value" lines → {name: value}.
export function parseSysctl(text) {
  if (text === null) return null;
  return Object.fromEntries(text.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 2));
}

// HAProxy httplog lines → {"SD": n, "CD": n, ...} by the first two letters of
// the termination state (who ended the session, and in which phase).
export function parseTerminations(text) {
  if (text === null) return null;
  const counts = {};
  for (const m of text.matchAll(/ (?:-1|\d{3}) -?\d+ \S+ \S+ ([A-Za-z-]{2})[A-Za-z-]{2} \d+\/\d+\/\d+\/\d+\/\d+ /g)) {
    if (m[1] !== '--') counts[m[1]] = (counts[m[1]] ?? 0) + 1;
  }
  return counts;
}

// Stat cells are empty when a counter does not apply: count them as 0.
const cell = (value) => Number(value) || 0;

function measureK6(summaries, step) {
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
    // Each replica has its own percentiles; they cannot be merged, so the worst one stands.
    p50_ms: max((s) => values(s, 'http_req_duration').med),
    p95_ms: max((s) => values(s, 'http_req_duration')['p(95)']),
    p99_ms: max((s) => values(s, 'http_req_duration')['p(99)']),
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

// The merged holder summaries (every replica): connections, not requests.
function measureHolder(h, step) {
  return {
    requests: h.planned,
    successful: h.ok,
    failed: h.failed,
    seconds: (h.ended_at_ms - h.started_at_ms) / 1000,
    connections: step.connections ?? h.planned,
    client_held: h.hold_window?.min_open ?? null,
  };
}

const median = (xs) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

// Container → role, by compose's name (project-service-index).
const ROLES = { haproxy: /-haproxy-\d+$/, backend: /-backend-(slow|fast)-\d+$/, holder: /-holder-\d+$/ };
const memoryOf = (memory, role) => Object.entries(memory ?? {})
  .filter(([name]) => ROLES[role].test(name)).reduce((t, [, v]) => t + v, 0);

function measure(step, k6, holder, e) {
  const base = holder ? measureHolder(holder, step) : measureK6(k6, step);
  const fe = e.stat?.find((r) => r.pxname === 'fe_main' && r.svname === 'FRONTEND');
  const backends = e.stat?.filter((r) => r.svname === 'BACKEND') ?? [];
  const delta = (name) => (e.before?.[name] !== undefined && e.after?.[name] !== undefined ? e.after[name] - e.before[name] : null);
  const clients = e.clientNetstat.filter((c) => c.before && c.after);
  const listener = e.listeners?.[8080] ?? null;
  // Plateau: the median over the second half of the load (the first half ramps up).
  const secs = step.load?.seconds ?? Infinity;
  const late = (e.samples ?? []).filter((x) => x.t >= secs / 2 && x.t <= secs);
  const side = (xs, key) => xs.map((x) => x[key]).filter((v) => v !== null);
  const held = base.client_held;
  const perConnection = (role) => {
    if (!holder || !held || !e.memPeak || !e.memBefore) return null;
    return (memoryOf(e.memPeak, role) - memoryOf(e.memBefore, role)) / held;
  };
  return {
    ...base,
    hits_per_sec: base.seconds > 0 ? base.successful / base.seconds : 0,
    failure_pct: base.requests > 0 ? (base.failed / base.requests) * 100 : null,
    max_sessions: fe ? cell(fe.smax) : null,
    max_queue: e.stat ? backends.filter((r) => r.pxname.startsWith('be_')).reduce((t, r) => t + cell(r.qmax), 0) : null,
    errors: e.stat ? cell(fe?.ereq) + backends.reduce((t, r) => t + cell(r.econ) + cell(r.eresp), 0) : null,
    maxconn_reached: e.info?.MaxconnReached !== undefined ? cell(e.info.MaxconnReached) : null,
    listen_overflows: delta('TcpExt.ListenOverflows'),
    listen_drops: delta('TcpExt.ListenDrops'),
    syncookies: delta('TcpExt.SyncookiesSent'),
    backlog: listener ? listener.backlog : null,
    accept_queue_max: e.samples?.some((x) => x.queue !== null) ? Math.max(...side(e.samples, 'queue')) : null,
    // Every replica's own network namespace: its kernel's SYN retransmits.
    syn_retrans: clients.length ? clients.reduce((t, c) => t + cell(c.after['TcpExt.TCPSynRetrans']) - cell(c.before['TcpExt.TCPSynRetrans']), 0) : null,
    client_sysctl: e.clientSysctl,
    plateau_conns: median(side(late, 'haproxy')),
    backend_plateau: median(side(late, 'backend')),
    haproxy_conns_peak: e.samples ? Math.max(0, ...side(e.samples, 'haproxy')) : null,
    backend_conns_peak: e.samples ? Math.max(0, ...side(e.samples, 'backend')) : null,
    sd_aborts: e.terms ? e.terms.SD ?? 0 : null,
    cd_aborts: e.terms ? e.terms.CD ?? 0 : null,
    bytes_haproxy: perConnection('haproxy'),
    bytes_backend: perConnection('backend'),
    // The clients did not exist before the step: their own RSS growth per connection.
    bytes_holder: holder?.bytes_per_connection ?? null,
    haproxy_alerts: e.alerts,
    notes: e.notes,
    oom_killed: typeof e.step?.haproxy_state === 'string' ? Number(e.step.haproxy_state.includes('oom_killed=true')) : null,
    cpu: e.cpu,
    memory: e.memPeak ? Object.fromEntries(Object.keys(e.memPeak).sort()
      .map((name) => [name, { before: e.memBefore?.[name] ?? null, peak: e.memPeak[name] }])) : null,
  };
}

function readStep(stepDir, step) {
  const names = fs.existsSync(stepDir) ? fs.readdirSync(stepDir) : [];
  const byIndex = (re) => names.filter((n) => re.test(n))
    .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
  const loadgen = [...byIndex(/^loadgen-\d+\.json$/), ...byIndex(/^holder-\d+\.json$/)];
  const summaries = loadgen.map((n) => readJson(path.join(stepDir, n)));
  const file = (name) => readText(path.join(stepDir, name));
  const e = {
    info: parseInfo(file('haproxy-info.txt')),
    stat: parseStat(file('haproxy-stat.csv')),
    before: parseNetstat(file('netstat-before.txt')),
    after: parseNetstat(file('netstat-after.txt')),
    cpu: parseCpu(file('cpu.txt')),
    memBefore: parseMemory(file('memory-before.txt')),
    memPeak: parseMemory(file('cpu.txt')),
    samples: parseSamples(file('samples.txt')),
    terms: parseTerminations(file('haproxy-log.txt')),
    listeners: file('listen-sockets.txt') === null ? null : parseSs(file('listen-sockets.txt')),
    clientNetstat: byIndex(/^loadgen-\d+\.json$/).map((n) => n.replace(/\.json$/, '')).map((n) => ({
      before: parseNetstat(file(`${n}-netstat-before.txt`)), after: parseNetstat(file(`${n}-netstat-after.txt`)),
    })),
    clientSysctl: parseSysctl(file('loadgen-1-sysctl.txt')),
    notes: (file('notes.txt') ?? '').split('\n').filter(Boolean),
    // HAProxy's own words when a worker died or a config failed (OOM kill: "exited with code 137").
    alerts: (file('haproxy-log.txt') ?? '').split('\n').filter((l) => /^\[(ALERT|WARNING)\].*(exit|Cannot raise|Killed)/.test(l)).slice(0, 4),
    step: readJson(path.join(stepDir, 'step.json')),
  };
  const good = summaries.filter((s) => s !== null);
  const holders = good.filter((s) => s.tool === 'holder');
  const k6 = good.filter((s) => s.tool !== 'holder');
  const holder = holders.length > 0 ? mergeSummaries(holders) : null;
  return {
    measured: good.length > 0 ? measure(step, k6, holder, e) : null,
    holder,
    files: {
      loadgen: loadgen.filter((_, i) => summaries[i] !== null),
      unreadable: loadgen.filter((_, i) => summaries[i] === null),
      info: e.info !== null,
      stat: e.stat !== null,
      netstat: e.before !== null && e.after !== null,
      cpu: e.cpu !== null,
      step: e.step,
    },
  };
}

// readRun DIR → { plan, steps: [plan step + {measured, files}], incomplete }.
export function readRun(dir) {
  const plan = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
  const marker = readText(path.join(dir, 'INCOMPLETE'));
  const incomplete = marker === null ? null : (marker.trim().split('\n')[0].trim() || 'interrupted');
  const steps = (plan.steps ?? []).map((step) => ({ ...step, ...readStep(path.join(dir, step.dir), step) }));
  return { plan, steps, incomplete };
}

// ---------------------------------------------------------------- judging

// The number a metric stands for; cpu: the HAProxy container's (else the busiest).
export function scalar(values, metric) {
  const v = values?.[metric];
  if (metric === 'cpu' && v && typeof v === 'object') {
    const names = Object.keys(v);
    if (names.length === 0) return null;
    const haproxy = names.find((n) => n.includes('haproxy'));
    return haproxy ? v[haproxy] : Math.max(...names.map((n) => v[n]));
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function aggregate(steps) {
  const first = steps[0];
  const ran = steps.filter((s) => s.measured);
  const row = {
    id: first.id,
    label: first.label ?? first.id,
    x: first.x ?? first.label ?? first.id,
    runs: ran.length,
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
  if (ran.length === 0) return row;
  row.measured = {};
  row.min = {};
  row.max = {};
  for (const metric of SCALARS) setStats(row, metric);
  const cpus = ran.map((s) => s.measured.cpu).filter(Boolean);
  if (cpus.length > 0) {
    const names = [...new Set(cpus.flatMap((c) => Object.keys(c)))];
    row.measured.cpu = Object.fromEntries(names.map((n) => [n, mean(cpus.filter((c) => n in c).map((c) => c[n]))]));
  } else row.measured.cpu = null;
  // Per container memory and the clients' failure reasons: from the first run.
  row.measured.memory = ran[0].measured.memory ?? null;
  row.failures = ran[0].holder?.failures ?? null;
  row.measured.haproxy_alerts = ran[0].measured.haproxy_alerts ?? [];
  row.measured.connect_waits = ran[0].measured.connect_waits ?? null;
  row.measured.client_sysctl = ran[0].measured.client_sysctl ?? null;
  row.measured.notes = ran[0].measured.notes ?? [];
  return row;
}

// Mean, min and max of one metric over the runs that measured it.
function setStats(row, metric) {
  const xs = row.per_run.map((r) => scalar(r.measured, metric)).filter((v) => v !== null);
  row.measured[metric] = xs.length ? mean(xs) : null;
  row.min[metric] = xs.length ? Math.min(...xs) : null;
  row.max[metric] = xs.length ? Math.max(...xs) : null;
}

function addRatio(rows, byId, refId) {
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

// An expect expression → {info, body, tolerance} or {info, body, op, number|ref}.
function parseExpect(row, metric, expr, byId) {
  const text = String(expr).trim();
  const info = text.startsWith('~');
  const body = info ? text.slice(1).trim() : text;
  const where = `step "${row.id}": expect ${metric} "${expr}"`;
  if (!METRICS.includes(metric)) throw new Error(`${where}: unknown metric`);
  let m = /^(?:±|\+\/?-)\s*(\d+(?:\.\d+)?)\s*%(?:of:([a-z0-9_]+))?$/.exec(body);
  if (m) return { info, body, tolerance: Number(m[1]), of: m[2] ?? null };
  m = /^(-?\d+(?:\.\d+)?)\.\.(-?\d+(?:\.\d+)?)$/.exec(body);
  if (m) return { info, body, range: [Number(m[1]), Number(m[2])] };
  m = /^(>=|<=|==|>|<)\s*(?:(-?\d+(?:\.\d+)?)|step:(\S+))$/.exec(body);
  if (!m) throw new Error(`${where}: unknown expression`);
  if (m[3] !== undefined && !byId.has(m[3])) throw new Error(`${where}: no step "${m[3]}" in the plan`);
  return { info, body, op: m[1], number: m[2] === undefined ? null : Number(m[2]), ref: m[3] ?? null };
}

const OPS = {
  '>': (a, b) => a > b, '<': (a, b) => a < b, '>=': (a, b) => a >= b, '<=': (a, b) => a <= b, '==': (a, b) => a === b,
};

const signed = (pct) => `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`;

// → {ok, text}: text says why, whether it passed or not.
function evaluate(row, metric, e, byId) {
  const measured = scalar(row.measured, metric);
  if (measured === null) return { ok: false, text: 'not measured' };
  const shown = formatValue(metric, measured);
  if (e.range) {
    return { ok: measured >= e.range[0] && measured <= e.range[1], text: `${shown}, expected ${e.range[0]} to ${e.range[1]}` };
  }
  if (e.tolerance !== undefined) {
    // "±N%of:NAME": against another measured metric of the step, or a model value.
    const reference = e.of ? scalar(row.measured, e.of) ?? scalar(row.model, e.of) : scalar(row.published, metric);
    const what = e.of ? `${e.of} ${formatValue(metric, reference)}` : `published ${formatValue(metric, reference)}`;
    if (reference === null) return { ok: false, text: e.of ? `no ${e.of}` : 'no published value' };
    const diff = measured - reference;
    const pct = reference ? `${signed((diff / reference) * 100)}, ` : '';
    return {
      ok: Math.abs(diff) <= (e.tolerance / 100) * Math.abs(reference),
      text: `${shown} vs ${what} (${pct}allowed ±${e.tolerance}%)`,
    };
  }
  let target = e.number;
  let what = String(e.number);
  if (e.ref !== null) {
    target = scalar(byId.get(e.ref).measured, metric);
    if (target === null) return { ok: false, text: `step ${e.ref} not measured` };
    what = `${e.ref} (${formatValue(metric, target)})`;
  }
  return { ok: OPS[e.op](measured, target), text: `${shown}, expected ${e.op} ${what}` };
}

function judge(row, byId) {
  // Parsed even for steps that did not run: a wrong scenario file must fail loudly.
  const checks = Object.entries(row.expect).map(([metric, expr]) => [metric, parseExpect(row, metric, expr, byId)]);
  if (!row.measured) return;
  for (const [metric, e] of checks) {
    const { ok, text } = evaluate(row, metric, e, byId);
    row.verdicts[metric] = { ok, info: e.info, expect: e.body, text };
  }
  const entries = Object.entries(row.verdicts);
  const fails = entries.filter(([, v]) => !v.info && !v.ok);
  const hard = entries.filter(([, v]) => !v.info);
  const infos = entries.filter(([, v]) => v.info).map(([m, v]) => `${m} ${v.ok ? 'as article' : 'unlike article'}`);
  if (fails.length) row.verdict = `FAIL (${fails.map(([m, v]) => `${m} ${v.text}`).join('; ')})`;
  else if (hard.length && infos.length) row.verdict = `pass; info: ${infos.join(', ')}`;
  else if (infos.length) row.verdict = `info: ${infos.join(', ')}`;
  else row.verdict = hard.length ? 'pass' : 'no checks';
}

function runStats(row, metric) {
  const xs = row.per_run.map((r) => scalar(r.measured, metric)).filter((v) => v !== null);
  if (xs.length === 0) return { n: 0, mean: null, spread: null };
  // spread = half the range, so "mean ±spread" spans about the runs seen.
  return { n: xs.length, mean: mean(xs), spread: (Math.max(...xs) - Math.min(...xs)) / 2 };
}

function compare(c, byId, report) {
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
  // Noise: mean of the two ranges, i.e. spreadA + spreadB.
  let noise;
  if (A.n >= 2 && B.n >= 2) {
    out.larger_than_noise = Math.abs(A.mean - B.mean) > A.spread + B.spread;
    noise = out.larger_than_noise ? 'larger than the noise' : 'within the noise';
  } else if (A.n === 1 && B.n === 1) noise = 'one run each: cannot tell noise';
  else noise = `one run of ${A.n === 1 ? c.a : c.b}: cannot tell noise`;
  const show = (s) => `${formatValue(metric, s.mean)}${s.n > 1 ? ` ±${formatValue(metric, s.spread)}` : ''} (${s.n} run${s.n > 1 ? 's' : ''})`;
  const diff = out.diffPct === null ? '' : ` → ${c.b} ${signed(out.diffPct)}`;
  out.text = `${head}: ${show(A)} vs ${show(B)}${diff}, ${noise}${article}`;
  return out;
}

// buildReport RUN → the report object (also what summary.json holds).
export function buildReport(run) {
  const plan = run.plan;
  const columns = plan.columns ?? ['hits_per_sec'];
  for (const m of columns) if (!METRICS.includes(m)) throw new Error(`columns: unknown metric "${m}"`);
  const groups = new Map();
  for (const step of run.steps) {
    if (!groups.has(step.id)) groups.set(step.id, []);
    groups.get(step.id).push(step);
  }
  const rows = [...groups.values()].map(aggregate);
  const byId = new Map(rows.map((r) => [r.id, r]));
  if (plan.ratio_to !== null && plan.ratio_to !== undefined) addRatio(rows, byId, plan.ratio_to);
  for (const row of rows) judge(row, byId);
  const report = {
    scenario: plan.scenario,
    description: plan.description ?? '',
    source: plan.source ?? null,
    x: plan.x ?? { name: 'step', label: 'step' },
    columns,
    ratio_to: plan.ratio_to ?? null,
    notes: plan.notes ?? [],
    options: plan.options ?? {},
    incomplete: run.incomplete ?? null,
    ok: rows.every((r) => !r.verdict.startsWith('FAIL')),
    rows,
    comparisons: [],
  };
  report.comparisons = (plan.comparisons ?? []).map((c) => compare(c, byId, report));
  report.readings = plan.littles_law ? littlesLaw(plan.littles_law, rows) : [];
  report.chart = plan.chart ?? null;
  for (const r of plan.readings ?? []) {
    const reading = READINGS[r.kind]?.(r, rows);
    if (!reading) throw new Error(`readings: unknown kind "${r.kind}"`);
    report.readings.push(reading.text);
    if (reading.tipping) report.tipping_point = reading.tipping;
    if (reading.ok === false && !report.incomplete) report.ok = false;
  }
  return report;
}

// The article's "almighty graph": latency stays flat as the rate grows, until
// a tipping point. Flat region = the worse METRIC of the first two steps;
// the tipping point = the first step whose METRIC exceeds FACTOR × that, or
// that k6 could not even start every request of (dropped > 1%).
function tippingPoint({ metric = 'p99_ms', factor = 3, article = '' }, rows) {
  const ran = rows.filter((r) => r.measured && scalar(r.measured, metric) !== null);
  if (ran.length < 3) return { text: `tipping point: needs at least 3 measured steps (${ran.length} ran)`, ok: false };
  const flat = Math.max(...ran.slice(0, 2).map((r) => scalar(r.measured, metric)));
  const label = metricLabel(metric);
  const at = ran.findIndex((r, i) => i >= 1 && (scalar(r.measured, metric) > factor * flat
    || cell(r.measured.dropped) > 0.01 * cell(r.measured.requests)));
  const source = article ? ` (article: ${article})` : '';
  if (at < 0) {
    const last = ran[ran.length - 1];
    return {
      ok: false,
      text: `tipping point: none up to ${formatValue('req_rate', last.measured.req_rate)} requests/sec (${label} stayed under ${factor} × ${formatValue(metric, flat)}): step the rate higher${source}`,
    };
  }
  const before = ran[at - 1];
  const after = ran[at];
  const tipping = { below: before.measured.req_rate, above: after.measured.req_rate, flat, metric, factor, step: after.id };
  return {
    ok: true,
    tipping,
    text: `tipping point: between ${formatValue('req_rate', before.measured.req_rate)} and ${formatValue('req_rate', after.measured.req_rate)} requests/sec — ` +
      `${label} ${formatValue(metric, scalar(before.measured, metric))} → ${formatValue(metric, scalar(after.measured, metric))} ms ` +
      `(flat region ${formatValue(metric, flat)} ms, threshold × ${factor}; dropped ${formatValue('dropped', after.measured.dropped)})${source}`,
  };
}

// Memory per held connection and who ran out: the table's bytes/conn columns
// read as one sentence, and an OOM kill named when HAProxy died.
function memoryReading(_, rows) {
  const lines = rows.filter((r) => r.measured).map((r) => {
    const m = r.measured;
    const kb = (v) => (v === null || v === undefined ? '-' : `${(v / 1000).toFixed(1)} KB`);
    const oom = m.oom_killed ? `; HAProxy was OOM-killed (its connections peaked at ${formatValue('haproxy_conns_peak', m.haproxy_conns_peak)}, then dropped to 0)` : '';
    return `${r.label}: ${formatValue('client_held', m.client_held)} held, bytes per connection HAProxy ${kb(m.bytes_haproxy)}, backend ${kb(m.bytes_backend)}, client ${kb(m.bytes_holder)}${oom}`;
  });
  return { text: `memory per connection — ${lines.join('; ')}` };
}

// The clients' SYN retry schedule, as measured: where connects piled up (the
// seconds after which a dropped SYN's retry got in), per step, beside the
// client kernel's setting that shapes it.
function synTimingReading(_, rows) {
  const lines = rows.filter((r) => r.measured?.connect_waits).map((r) => {
    const m = r.measured;
    const linear = m.client_sysctl?.['net.ipv4.tcp_syn_linear_timeouts'];
    const kernel = linear === undefined ? 'kernel without tcp_syn_linear_timeouts' : `tcp_syn_linear_timeouts ${linear}`;
    return `${r.label} (${kernel}): ${formatValue('connects_retried', m.connects_retried)} connects after ≥1 s — ${formatWaits(m.connect_waits)}`;
  });
  return { text: `SYN retries, connects by how long they took — ${lines.join('; ') || 'no step counted its connects'}` };
}

const READINGS = { tipping_point: tippingPoint, memory: memoryReading, syn_timing: synTimingReading };

// Little's law, L = X × W, on each measured step: the requests in service that
// the measured throughput X implies for a service time W, beside the sessions
// HAProxy saw; then the maxconn a closed-loop test of N clients needs.
function littlesLaw({ service_seconds: w, clients }, rows) {
  const lines = rows.filter((r) => r.measured).map((r) => {
    const x = r.measured.hits_per_sec;
    const seen = r.measured.max_sessions;
    return `Little's law, ${r.label}: L = X × W = ${x.toFixed(1)}/s × ${w} s = ${Math.round(x * w)} requests in service` +
      `${Number.isFinite(seen) ? ` (HAProxy saw at most ${seen} sessions)` : ''}`;
  });
  lines.push(`maxconn needed = clients × service time ÷ time between a client's requests = ${clients} × ${w} s ÷ ${w} s = ${clients}` +
    ` (the article's "100 × 3 = 300" reads its 100 clients as 100 requests/s, which would need ${clients * w})`);
  return lines;
}

// ---------------------------------------------------------------- formatting

// Counts as integers, ratios as 1.23×, the rest with 1 decimal (2 significant below 10).
export function formatValue(metric, v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-';
  if (metric === 'ratio') return `${v.toFixed(2)}×`;
  if (COUNTS.has(metric)) return String(Math.round(v));
  if (v === 0) return '0';
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return Math.abs(v) < 0.001 ? v.toExponential(1) : v.toPrecision(2);
}

// The table's cells: header (metric names), sub-header, one line per step.
function tableCells(report) {
  const cols = report.columns;
  return {
    groups: cols.map((m) => metricLabel(m, report)),
    head: ['step', ...cols.flatMap(() => ['published', 'measured']), 'verdict'],
    body: report.rows.map((row) => [
      row.label,
      ...cols.flatMap((m) => [
        formatValue(m, scalar(row.published, m)),
        row.measured ? formatValue(m, scalar(row.measured, m)) : '-',
      ]),
      row.verdict,
    ]),
  };
}

function titleOf(report) {
  return `${report.scenario} — ${report.description}${report.incomplete ? ' (INCOMPLETE)' : ''}`;
}

function sourceOf(report) {
  const s = report.source;
  if (!s) return null;
  return [s.title, [s.author, s.year].filter(Boolean).join(', ')].filter(Boolean).join(' — ');
}

// Lines under the table: how rows aggregate, comparisons, notes, incomplete.
function footer(report) {
  const lines = [];
  const repeated = report.rows.some((r) => r.planned > 1);
  if (repeated) lines.push('measured = mean over the runs of each step (see summary.json for min/max)');
  for (const c of report.comparisons) lines.push(c.text);
  for (const line of report.readings ?? []) lines.push(line);
  for (const note of report.notes) lines.push(note);
  const failed = report.rows.filter((r) => r.verdict.startsWith('FAIL')).length;
  lines.push(report.ok ? 'result: ok' : `result: FAIL (${failed} step${failed > 1 ? 's' : ''})`);
  if (report.incomplete) lines.push(`INCOMPLETE: ${report.incomplete}`);
  return lines;
}

// formatTable REPORT → the terminal table, article style.
export function formatTable(report) {
  const { groups, head, body } = tableCells(report);
  const lines = [head, ...body];
  const width = head.map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  // A metric's name spans its two sub-columns: widen "published" if the name is longer.
  groups.forEach((g, k) => {
    const [p, m] = [1 + 2 * k, 2 + 2 * k];
    const missing = g.length - (width[p] + 2 + width[m]);
    if (missing > 0) width[p] += missing;
  });
  const last = head.length - 1;
  const pad = (text, i) => (i === 0 || i === last ? String(text).padEnd(width[i]) : String(text).padStart(width[i]));
  const line = (cells) => cells.map(pad).join('  ').trimEnd();
  const groupLine = [' '.repeat(width[0]), ...groups.map((g, k) => {
    const span = width[1 + 2 * k] + 2 + width[2 + 2 * k];
    return g.padStart(Math.floor((span + g.length) / 2)).padEnd(span);
  })].join('  ').trimEnd();
  const out = [titleOf(report)];
  const source = sourceOf(report);
  if (source) out.push(`source: ${source}`);
  out.push('', groupLine, line(head), width.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), '');
  return [...out, ...footer(report)].join('\n');
}

const csvField = (v) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

// Plain numbers in the CSV, rounded to keep it readable.
const csvNumber = (v) => (v === null || v === undefined ? '' : Number(v.toFixed(3)));

// toCSV REPORT → one line per step, published and measured for every metric.
export function toCSV(report) {
  const metrics = [...new Set([...report.columns, ...CSV_METRICS])];
  const header = ['step', 'label', 'x', 'runs', ...metrics.flatMap((m) => [`${m}_published`, `${m}_measured`]), 'verdict'];
  const rows = report.rows.map((row) => [
    row.id, row.label, row.x, row.runs,
    ...metrics.flatMap((m) => [csvNumber(scalar(row.published, m)), csvNumber(scalar(row.measured, m))]),
    row.verdict,
  ]);
  return `${[header, ...rows].map((r) => r.map(csvField).join(',')).join('\n')}\n`;
}

const mdCell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

// A fence longer than any backtick run inside the text.
function fenced(text, lang) {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}`;
}

const VERSION_NAMES = { haproxy: 'HAProxy', k6: 'k6', node: 'Node.js' };

// "after 1 s: 12, 2 s: 9" from {N: count} (connects of 1 s or more).
export function formatWaits(waits) {
  const late = Object.entries(waits ?? {}).map(([k, v]) => [Number(k), v]).filter(([k]) => k >= 1).sort((a, b) => a[0] - b[0]);
  return late.length ? late.map(([k, v]) => `${k} s: ${v}`).join(', ') : 'none';
}

function acceptQueueDetails(m) {
  const f = (metric) => formatValue(metric, m[metric]);
  const out = [`- accept queue of fe_main :8080: backlog (ss) ${f('backlog')}, longest queue sampled ${f('accept_queue_max')}; ` +
    `HAProxy's kernel: listen overflows ${f('listen_overflows')}, listen drops ${f('listen_drops')}, SYN cookies sent ${f('syncookies')}`];
  if (m.syn_retrans !== null || m.connect_waits) {
    const settings = Object.entries(m.client_sysctl ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
    out.push(`- clients: SYN retransmits ${f('syn_retrans')}; connects that took about N s: ${formatWaits(m.connect_waits)}` +
      `${settings ? ` (clients' kernel: ${settings})` : ''}`);
  }
  return out;
}

function stepDetails(row, configs) {
  const out = [`### ${row.label} (\`${row.id}\`): ${row.verdict}`, ''];
  const runs = row.per_run.map((r) => r.dir).join(', ');
  out.push(`- runs: ${row.runs} of ${row.planned} (${runs})`);
  const m = row.measured;
  if (m) {
    const f = (metric) => formatValue(metric, m[metric]);
    out.push(`- load: ${f('requests')} requests, ${f('successful')} successful, ${f('failed')} failed in ${f('seconds')} s = ${f('hits_per_sec')} hits/sec; latency p50/p95/p99 (max of replicas) ${f('p50_ms')}/${f('p95_ms')}/${f('p99_ms')} ms`);
    out.push(`- HAProxy: maxconn reached ${f('maxconn_reached')}, max sessions ${f('max_sessions')}, max queue ${f('max_queue')}, errors ${f('errors')}`);
    out.push(...acceptQueueDetails(m));
    for (const note of m.notes ?? []) out.push(`- note: ${note}`);
    const cpu = m.cpu ? Object.entries(m.cpu).map(([name, v]) => `${name} ${v.toFixed(1)}%`).join(', ') : '';
    out.push(`- CPU by container: ${cpu || '-'}`);
    const shown = LONG_LIVED.filter((k) => m[k] !== null && m[k] !== undefined);
    if (shown.length) out.push(`- ${shown.map((k) => `${metricLabel(k)} ${formatValue(k, m[k])}`).join(', ')}`);
    const mib = (v) => (v === null ? '-' : `${(v / 1024 ** 2).toFixed(1)} MiB`);
    if (m.memory) out.push(`- memory by container (before → during the load): ${Object.entries(m.memory).map(([n, v]) => `${n} ${mib(v.before)} → ${mib(v.peak)}`).join(', ')}`);
    if (m.haproxy_alerts?.length) out.push(`- HAProxy said: ${m.haproxy_alerts.map((l) => `\`${l.trim()}\``).join('; ')}`);
    if (row.failures && Object.keys(row.failures).length) out.push(`- client failures by reason: ${Object.entries(row.failures).map(([k, v]) => `${k} ${v}`).join(', ')}`);
    if (Object.keys(row.model ?? {}).length) out.push(`- model: ${Object.entries(row.model).map(([k, v]) => `${k} ${formatValue(k, v)}`).join(', ')}`);
    for (const [metric, v] of Object.entries(row.verdicts)) {
      const result = v.info ? (v.ok ? 'as article' : 'unlike article') : (v.ok ? 'pass' : 'FAIL');
      out.push(`- ${metric} ${v.expect}: ${result}, ${v.text}`);
    }
  }
  // Repeated runs usually share one config: show each distinct text once.
  const texts = new Map();
  for (const r of row.per_run) {
    const text = configs[r.dir] ?? (r.config ? configs[r.config] : undefined);
    if (typeof text !== 'string') continue;
    if (!texts.has(text)) texts.set(text, []);
    texts.get(text).push(r);
  }
  for (const [text, runs] of texts) {
    const which = texts.size > 1 || runs.length < row.per_run.length ? ` (run ${runs.map((r) => r.run).join(', ')})` : '';
    out.push('', `HAProxy config${which}, \`${runs[0].config ?? runs[0].dir}\`:`, '', fenced(text, 'haproxy'));
  }
  return out;
}

// toMarkdown REPORT {configs, versions, command} → report.md.
export function toMarkdown(report, { configs = {}, versions = {}, command = '' } = {}) {
  const out = [`# ${titleOf(report)}`, ''];
  const source = sourceOf(report);
  if (source) {
    const seed = report.source.seed ? ` (seed \`${report.source.seed}\`)` : '';
    out.push(`Source: ${source}${seed}`, '');
  }
  if (command) out.push('Command:', '', fenced(command, 'sh'), '');
  const v = Object.entries(versions ?? {}).filter(([, value]) => value);
  if (v.length) out.push(`Versions: ${v.map(([k, value]) => `${VERSION_NAMES[k] ?? k} ${value}`).join(', ')}`, '');
  if (report.incomplete) out.push(`**INCOMPLETE:** ${report.incomplete}`, '');

  const { groups, body } = tableCells(report);
  const head = ['step', ...groups.flatMap((g) => [`${g} published`, `${g} measured`]), 'verdict'];
  const align = head.map((_, i) => (i === 0 || i === head.length - 1 ? '---' : '---:'));
  out.push('## Results', '');
  for (const r of [head, align, ...body]) out.push(`| ${r.map(mdCell).join(' | ')} |`);
  out.push('', `Result: ${report.ok ? 'ok' : 'FAIL'}`, '');
  if (report.comparisons.length) out.push('## Comparisons', '', ...report.comparisons.map((c) => `- ${c.text}`), '');
  if (report.readings?.length) out.push('## Readings', '', ...report.readings.map((n) => `- ${n}`), '');
  if (report.notes.length) out.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  out.push('## Steps', '');
  for (const row of report.rows) out.push(...stepDetails(row, configs), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}

// The configs plan steps point to, keyed by step dir (when the caller gives none).
function readConfigs(dir, report) {
  const configs = {};
  for (const row of report.rows) {
    for (const r of row.per_run) {
      const text = r.config ? readText(path.join(dir, r.config)) : null;
      if (text !== null) configs[r.dir] = text;
    }
  }
  return configs;
}

export const OUTPUTS = ['summary.json', 'summary.csv', 'report.md', 'chart.svg'];

// writeOutputs DIR REPORT {configs, versions, command} → the names written.
// Only these four files are ever (re)written; everything is rendered first so
// an error leaves no half-written set.
export function writeOutputs(dir, report, extras = {}) {
  const configs = extras.configs ?? readConfigs(dir, report);
  const texts = [
    `${JSON.stringify(report, null, 2)}\n`,
    toCSV(report),
    toMarkdown(report, { ...extras, configs }),
    renderChart(report),
  ];
  OUTPUTS.forEach((name, i) => fs.writeFileSync(path.join(dir, name), texts[i]));
  return [...OUTPUTS];
}
