// A results directory as evidence: plan.json, the INCOMPLETE marker and,
// per step, what its load tool's reader measured (evidence/readers.mjs)
// beside what HAProxy, its kernel and the containers showed. Each step's
// numbers are computed here; rows, verdicts and readings come later.
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from '../core/envfile.mjs';
import { readerOf } from './readers.mjs';
import { readJson, readText } from './files.mjs';
import {
  cell, parseAlerts, parseCpu, parseInfo, parseMemory, parseNetstat, parseSamples, parseSs, parseStat, parseTerminations,
} from './parsers.mjs';

// readRun DIR → { plan, steps: [plan step + {measured, merged, files}], incomplete }.
export function readRun(dir) {
  const plan = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
  const marker = readText(path.join(dir, 'INCOMPLETE'));
  const incomplete = marker === null ? null : (marker.trim().split('\n')[0].trim() || 'interrupted');
  const steps = (plan.steps ?? []).map((step) => ({ ...step, ...readStep(path.join(dir, step.dir), step) }));
  return { plan, steps, incomplete };
}

// A step that names no tool ran the default one (hand-written plans).
export function readStep(stepDir, step) {
  const tool = readerOf(step.load?.tool).read(stepDir, step);
  const evidence = readHaproxySide(stepDir);
  return {
    measured: tool.measured ? measureStep(step, tool, evidence) : null,
    merged: tool.merged,
    versions: tool.versions ?? {},
    files: {
      loadgen: tool.files,
      unreadable: tool.unreadable,
      info: evidence.info !== null,
      stat: evidence.stat !== null,
      netstat: evidence.before !== null && evidence.after !== null,
      cpu: evidence.cpu !== null,
      step: evidence.step,
    },
  };
}

// How the step ended, as the runner wrote it (outcome.env: named values;
// runs before it have step.json): {started_at_ms, ended_at_ms, completed,
// exit_codes, haproxy_state}, or null when the step did not end.
function readOutcome(stepDir) {
  const text = readText(path.join(stepDir, 'outcome.env'));
  if (text === null) return readJson(path.join(stepDir, 'step.json'));
  const v = parseEnv(text);
  return {
    started_at_ms: Number(v.started_at_ms),
    ended_at_ms: Number(v.ended_at_ms),
    completed: true,
    exit_codes: (v.exit_codes ?? '').split(',').filter(Boolean).map(Number),
    haproxy_state: v.haproxy_state ?? '',
  };
}

// Everything but the load tool's own files: HAProxy, its kernel, the containers.
function readHaproxySide(stepDir) {
  const file = (name) => readText(path.join(stepDir, name));
  const log = file('haproxy-log.txt');
  const sockets = file('listen-sockets.txt');
  return {
    info: parseInfo(file('haproxy-info.txt')),
    stat: parseStat(file('haproxy-stat.csv')),
    before: parseNetstat(file('netstat-before.txt')),
    after: parseNetstat(file('netstat-after.txt')),
    cpu: parseCpu(file('cpu.txt')),
    memBefore: parseMemory(file('memory-before.txt')),
    memPeak: parseMemory(file('cpu.txt')),
    samples: parseSamples(file('samples.txt')),
    terms: parseTerminations(log),
    listeners: sockets === null ? null : parseSs(sockets),
    notes: (file('notes.txt') ?? '').split('\n').filter(Boolean),
    alerts: parseAlerts(log),
    step: readOutcome(stepDir),
  };
}

// One step's numbers, in summary.json's order: the tool's, then HAProxy's
// side, with the clients' own evidence (null when the tool has none) where
// it always stood.
function measureStep(step, tool, evidence) {
  const load = tool.measured;
  const client = tool.client ?? {};
  return {
    ...load,
    hits_per_sec: load.seconds > 0 ? load.successful / load.seconds : 0,
    failure_pct: load.requests > 0 ? (load.failed / load.requests) * 100 : null,
    ...haproxyCounters(evidence),
    syn_retrans: client.syn_retrans ?? null,
    client_sysctl: client.client_sysctl ?? null,
    ...connectionSamples(evidence, step),
    ...memoryPerConnection(evidence, load.client_held),
    bytes_holder: client.bytes_holder ?? null,
    haproxy_alerts: evidence.alerts,
    notes: evidence.notes,
    oom_killed: typeof evidence.step?.haproxy_state === 'string' ? Number(evidence.step.haproxy_state.includes('oom_killed=true')) : null,
    cpu: evidence.cpu,
    memory: evidence.memPeak ? Object.fromEntries(Object.keys(evidence.memPeak).sort()
      .map((name) => [name, { before: evidence.memBefore?.[name] ?? null, peak: evidence.memPeak[name] }])) : null,
  };
}

// show stat, show info, HAProxy's kernel counters and fe_main's listening socket.
function haproxyCounters(evidence) {
  const fe = evidence.stat?.find((r) => r.pxname === 'fe_main' && r.svname === 'FRONTEND');
  const backends = evidence.stat?.filter((r) => r.svname === 'BACKEND') ?? [];
  const { before, after } = evidence;
  const delta = (name) => (before?.[name] !== undefined && after?.[name] !== undefined ? after[name] - before[name] : null);
  const listener = evidence.listeners?.[8080] ?? null;
  const queues = (evidence.samples ?? []).map((x) => x.queue).filter((v) => v !== null);
  return {
    max_sessions: fe ? cell(fe.smax) : null,
    max_queue: evidence.stat ? backends.filter((r) => r.pxname.startsWith('be_')).reduce((t, r) => t + cell(r.qmax), 0) : null,
    errors: evidence.stat ? cell(fe?.ereq) + backends.reduce((t, r) => t + cell(r.econ) + cell(r.eresp), 0) : null,
    maxconn_reached: evidence.info?.MaxconnReached !== undefined ? cell(evidence.info.MaxconnReached) : null,
    listen_overflows: delta('TcpExt.ListenOverflows'),
    listen_drops: delta('TcpExt.ListenDrops'),
    syncookies: delta('TcpExt.SyncookiesSent'),
    backlog: listener ? listener.backlog : null,
    accept_queue_max: queues.length ? Math.max(...queues) : null,
  };
}

const median = (xs) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

// Connections on both sides of HAProxy, sampled while the load ran, and who
// ended the sessions HAProxy logged.
function connectionSamples(evidence, step) {
  // Plateau: the median over the second half of the load (the first half ramps up).
  const secs = step.load?.seconds ?? Infinity;
  const late = (evidence.samples ?? []).filter((x) => x.t >= secs / 2 && x.t <= secs);
  const side = (xs, key) => xs.map((x) => x[key]).filter((v) => v !== null);
  return {
    plateau_conns: median(side(late, 'haproxy')),
    backend_plateau: median(side(late, 'backend')),
    haproxy_conns_peak: evidence.samples ? Math.max(0, ...side(evidence.samples, 'haproxy')) : null,
    backend_conns_peak: evidence.samples ? Math.max(0, ...side(evidence.samples, 'backend')) : null,
    sd_aborts: evidence.terms ? evidence.terms.SD ?? 0 : null,
    cd_aborts: evidence.terms ? evidence.terms.CD ?? 0 : null,
  };
}

// Container → role, by compose's name (project-service-index).
const ROLES = { haproxy: /-haproxy-\d+$/, backend: /-backend-(slow|fast)-\d+$/ };
const memoryOf = (memory, role) => Object.entries(memory ?? {})
  .filter(([name]) => ROLES[role].test(name)).reduce((t, [, v]) => t + v, 0);

// Bytes per connection a container role grew by, over the connections the
// clients held (only load tools that hold connections report client_held).
function memoryPerConnection(evidence, held) {
  const perConnection = (role) => {
    if (!held || !evidence.memPeak || !evidence.memBefore) return null;
    return (memoryOf(evidence.memPeak, role) - memoryOf(evidence.memBefore, role)) / held;
  };
  return { bytes_haproxy: perConnection('haproxy'), bytes_backend: perConnection('backend') };
}
