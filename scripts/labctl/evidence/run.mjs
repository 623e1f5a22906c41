// A results directory as evidence: plan.json, the INCOMPLETE marker and,
// per step, what its load tool's reader measured (evidence/readers.mjs)
// beside what HAProxy, its kernel and the containers showed. Each step's
// numbers are computed here; rows, verdicts and readings come later.
import fs from 'node:fs';
import path from 'node:path';
import { parseEnv } from '../core/envfile.mjs';
import { TOPOLOGY, frontendsOf, isServiceContainer, parseTopology } from '../core/topology.mjs';
import { readerOf } from './readers.mjs';
import { readJson, readText } from './files.mjs';
import { firstAndLast, loadRates, parseCpuReadings, parseThrottleReadings, steadyWindow, stepCpu, throttledShares } from './cpu.mjs';
import { parseAllowance, saturationOf } from './saturation.mjs';
import { rampWindow } from './holder.mjs';
import { breakdownOf, parseContainers, parseHostSampler } from './breakdown.mjs';
import { readFloors } from './floors.mjs';
import { seriesOf } from './series.mjs';
import { DEFAULT_TOOL, LOAD_TOOLS } from '../core/loadtools.mjs';
import { parseListeners } from '../plan/listeners.mjs';
import { compareListeners } from '../run/sockets.mjs';
import {
  cell, parseActivity, parseAlerts, parseCpu, parseInfo, parseMemory, parseNetstat, parseSamples, parseSs, parseStat, parseTerminations,
} from './parsers.mjs';

// readRun DIR → { plan, topology, steps: [plan step + {measured, merged,
// files}], incomplete, floor }. The topology is the one the run was planned with
// (DIR/topology.txt), the lab's own for runs recorded before it was kept.
export function readRun(dir) {
  const plan = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
  const marker = readText(path.join(dir, 'INCOMPLETE'));
  const incomplete = marker === null ? null : (marker.trim().split('\n')[0].trim() || 'interrupted');
  const kept = readText(path.join(dir, 'topology.txt'));
  const topology = kept === null ? TOPOLOGY : parseTopology(kept, path.join(dir, 'topology.txt'));
  const steps = (plan.steps ?? []).map((step) => ({ ...step, ...readStep(path.join(dir, step.dir), step, topology) }));
  // The machine's sign times (scripts/scenario.sh tls_floor), when the run read them.
  const floorText = readText(path.join(dir, 'tls-floor.env'));
  return { plan, topology, steps, incomplete, floor: floorText === null ? null : parseEnv(floorText), connectionFloors: readFloors(dir) };
}

// A step that names no tool ran the default one (hand-written plans).
function readStep(stepDir, step, topology) {
  const tool = readerOf(step.load?.tool).read(stepDir, step);
  const evidence = readHaproxySide(stepDir, topology);
  const all = (key, of = evidence.instances) => of.every((i) => i[key] !== null);
  // The kernel's counters are the container's: read under its first process.
  const containers = evidence.instances.filter((i) => i.process === 1);
  const build = readText(path.join(stepDir, 'haproxy-build.env'));
  const listeners = listenerProblems(stepDir, step, evidence);
  return {
    measured: tool.measured ? { ...measureStep(step, tool, evidence), ...(listeners?.length ? { listeners_differ: listeners } : {}) } : null,
    merged: tool.merged,
    versions: tool.versions ?? {},
    // The HAProxy that ran the step (a --versus run's twins differ): {image, haproxy, ssl_library}.
    build: build === null ? null : parseEnv(build),
    series: seriesOf(step, tool.merged, samplesOf(evidence), evidence.step?.started_at_ms),
    files: {
      loadgen: tool.files,
      unreadable: tool.unreadable,
      info: all('info'),
      stat: all('stat'),
      netstat: all('before', containers) && all('after', containers),
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
    // The kernel's cap on a listening socket's backlog in HAProxy's network
    // namespace, as the runner read it (runs before it have none).
    ...(/^\d+$/.test(v.haproxy_somaxconn ?? '') ? { somaxconn: Number(v.haproxy_somaxconn) } : {}),
  };
}

// listenerProblems STEPDIR STEP EVIDENCE → one line per listening socket,
// in the ss view saved after the switch (INSTANCE-listen-sockets.txt), that
// is not what the step's config asks (configs/NN-id.listeners): a step that
// needed a restart and got a reload runs the previous step's backlog. []
// when every socket is as asked; null when the run saved no view or no
// somaxconn to judge with.
function listenerProblems(stepDir, step, evidence) {
  const somaxconn = evidence.step?.somaxconn;
  const expectedText = step.config ? readText(path.join(stepDir, '..', '..', step.config.replace(/\.cfg$/, '.listeners'))) : null;
  const seen = evidence.instances.filter((i) => i.listeners !== null);
  if (!somaxconn || expectedText === null || seen.length === 0) return null;
  const expected = parseListeners(expectedText);
  return seen.flatMap((i) => compareListeners(expected, i.listeners, somaxconn).map((p) => `${i.name}: ${p}`));
}

// INSTANCE's file NAME in a step folder: "INSTANCE-NAME" (haproxy-info.txt,
// haproxy-samples.txt...). Runs recorded before there were instances named
// some without the prefix (samples.txt, netstat-before.txt, listen-sockets.txt):
// the first instance's file falls back to that name.
function instanceText(stepDir, instance, first, name) {
  const text = readText(path.join(stepDir, `${instance}-${name}`));
  return text === null && first ? readText(path.join(stepDir, name)) : text;
}

// One HAProxy instance's evidence: its counters, its kernel's, its log, its
// sockets sampled while the load ran.
function readInstance(stepDir, instance, first) {
  const file = (name) => instanceText(stepDir, instance.name, first, name);
  const log = file('log.txt');
  const sockets = file('listen-sockets.txt');
  return {
    name: instance.name,
    // Process K of its container (haproxy/processes.sh); 1 also reads the
    // container's kernel counters and log.
    process: instance.process ?? 1,
    info: parseInfo(file('info.txt')),
    stat: parseStat(file('stat.csv')),
    activity: parseActivity(file('activity.txt')),
    before: parseNetstat(file('netstat-before.txt')),
    after: parseNetstat(file('netstat-after.txt')),
    samples: parseSamples(file('samples.txt')),
    terms: parseTerminations(log),
    listeners: sockets === null ? null : parseSs(sockets),
    alerts: parseAlerts(log),
  };
}

// Everything but the load tool's own files: each HAProxy instance and its
// kernel (evidence.instances, in the topology's order), the containers.
function readHaproxySide(stepDir, topology) {
  const file = (name) => readText(path.join(stepDir, name));
  return {
    topology,
    instances: topology.instances.map((instance, i) => readInstance(stepDir, instance, i === 0)),
    ...cpuOf(file, readOutcome(stepDir)),
    // The CPU each container may use, read back mid-load (cpu-allowance.txt).
    allowance: parseAllowance(file('cpu-allowance.txt')),
    // Each container's memory once the load settled (memory-peak.txt; runs
    // before the cgroup reader: docker stats' stats-peak.txt, before that cpu.txt).
    memBefore: parseMemory(file('memory-before.txt')),
    memPeak: parseMemory(file('memory-peak.txt') ?? file('stats-peak.txt') ?? file('cpu.txt')),
    // The host kernel's own memory before the step and mid-hold (kernel-*.env).
    kernelBefore: parseKernel(file('kernel-before.env')),
    kernelPeak: parseKernel(file('kernel-peak.env')),
    notes: (file('notes.txt') ?? '').split('\n').filter(Boolean),
    // The Docker host's CPU each second and which container is what
    // (a holder's step: scripts/probes/host-cpu.mjs).
    hostCpu: parseHostSampler(file('host-sampler.txt')),
    containerMap: parseContainers(file('containers.txt')),
    step: readOutcome(stepDir),
    // The second method after the step (scripts/lib/second-method.sh second_method).
    check: readCheck(path.join(stepDir, 'check')),
  };
}

// wrk's own summary (its stdout): requests, seconds, failures.
export function parseWrk(text) {
  if (!text) return null;
  const done = /(\d+) requests in ([\d.]+)(us|ms|s|m),/.exec(text);
  if (!done) return null;
  const scale = { us: 1e-6, ms: 1e-3, s: 1, m: 60 }[done[3]];
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(text);
  return {
    requests: Number(done[1]),
    seconds: Number(done[2]) * scale,
    errors: (socket ? socket.slice(1).reduce((t, v) => t + Number(v), 0) : 0) + (non2xx ? Number(non2xx[1]) : 0),
  };
}

// readCheck DIR: each path's second-method reading (check.env, wrk-PATH.txt)
// → {url, args, PATH: {haproxy_ns, haproxy_requests, ssl_conns, client_ns,
// wrk: {requests, seconds, errors}, exit}} | null.
function readCheck(dir) {
  const text = readText(path.join(dir, 'check.env'));
  if (text === null) return null;
  const env = parseEnv(text);
  const ns = (v) => {
    const [value, unit] = String(v ?? '').split(' ');
    return /^\d+$/.test(value) && (unit === 'ns' || unit === 'us') ? Number(value) * (unit === 'us' ? 1000 : 1) : null;
  };
  const count = (v) => (/^\d+$/.test(v ?? '') ? Number(v) : null);
  const delta = (a, b) => (a !== null && b !== null && b >= a ? b - a : null);
  const out = { url: env.url ?? null, args: env.args ?? null };
  for (const p of ['bridge', 'loopback']) {
    if (env[`${p}.at_before_ms`] === undefined) continue;
    out[p] = {
      haproxy_ns: delta(ns(env[`${p}.haproxy_cpu_before`]), ns(env[`${p}.haproxy_cpu_after`])),
      haproxy_requests: delta(count(env[`${p}.CumReq_before`]), count(env[`${p}.CumReq_after`])),
      ssl_conns: delta(count(env[`${p}.CumSslConns_before`]), count(env[`${p}.CumSslConns_after`])),
      client_ns: count(env[`${p}.client_cpu_ns`]),
      exit: count(env[`${p}.wrk_exit`]),
      wrk: parseWrk(readText(path.join(dir, `wrk-${p}.txt`))),
    };
  }
  return out;
}

// secondMethod CHECK ALLOWANCE UNDERLOAD: the second method's figures beside
// the step's own cost under load (UNDERLOAD µs/request); nulls without one.
export function secondMethod(check, allowance, underLoad) {
  const perReq = (r) => (r?.haproxy_ns !== null && r?.haproxy_requests > 0 ? r.haproxy_ns / 1000 / r.haproxy_requests : null);
  const bridge = check?.bridge;
  const us = perReq(bridge);
  return {
    check_us_per_req: us,
    check_ratio: us && Number.isFinite(underLoad) ? underLoad / us : null,
    check_busy_pct: bridge?.wrk?.seconds > 0 && bridge.haproxy_ns !== null && allowance
      ? (bridge.haproxy_ns / 1e9 / bridge.wrk.seconds / allowance) * 100 : null,
    check_client_us_per_req: bridge?.client_ns !== null && bridge?.wrk?.requests > 0 ? bridge.client_ns / 1000 / bridge.wrk.requests : null,
    check_loopback_us_per_req: perReq(check?.loopback),
  };
}

// Each container's CPU over the step from its cgroup (evidence/cpu.mjs):
// cpu (% of one core, by container) and cpuTime (ns, idle-corrected ns).
// Runs recorded before the cgroup reader: docker stats' mid-load sample.
function cpuOf(file, outcome) {
  const readings = (name) => parseCpuReadings(file(name));
  const samples = readings('cpu-samples.txt');
  const time = stepCpu({ idle: readings('cpu-idle.txt'), before: readings('cpu-before.txt'),
    after: readings('cpu-after.txt'), samples }, outcome?.started_at_ms ?? 0);
  // The whole machine's busy time, sampled with HAProxy's sockets (host-cpu.txt).
  const host = readings('host-cpu.txt');
  // Each container's CFS periods and throttled ones, read with its CPU time.
  const throttle = parseThrottleReadings(file('cpu-samples.txt'));
  if (time === null) return { cpu: file('stats-peak.txt') === null ? parseCpu(file('cpu.txt')) : null, cpuTime: null, samples: null, host, throttle };
  return { cpu: Object.fromEntries(Object.entries(time).map(([name, c]) => [name, c.percent])), cpuTime: time, samples, host, throttle };
}

// One step's numbers, in summary.json's order: the tool's, then HAProxy's
// side, with the clients' own evidence (null when the tool has none) where
// it always stood.
function measureStep(step, tool, evidence) {
  const load = tool.measured;
  const client = tool.client ?? {};
  const counters = haproxyCounters(evidence);
  const toolService = LOAD_TOOLS[step.load?.tool ?? DEFAULT_TOOL]?.service;
  // A holder's step: what each component used while the connections were
  // opened (its ramp), not over the hold, when little runs.
  const ramp = tool.merged?.tool === 'holder' ? rampWindow(tool.merged) : null;
  const seconds = step.load?.seconds;
  const isTool = (name) => isServiceContainer(name, [toolService]);
  const underLoad = loadCost(evidence, isTool, seconds);
  return {
    ...load,
    hits_per_sec: load.seconds > 0 ? load.successful / load.seconds : 0,
    failure_pct: load.requests > 0 ? (load.failed / load.requests) * 100 : null,
    ...counters,
    syn_retrans: client.syn_retrans ?? null,
    client_sysctl: client.client_sysctl ?? null,
    ...connectionSamples(evidence, step, tool.merged),
    ...memoryPerConnection(evidence, load.client_held),
    bytes_holder: client.bytes_holder ?? null,
    haproxy_alerts: alertsOf(evidence),
    notes: evidence.notes,
    oom_killed: typeof evidence.step?.haproxy_state === 'string' ? Number(evidence.step.haproxy_state.includes('oom_killed=true')) : null,
    cpu: evidence.cpu,
    ...cpuPerRequest(evidence, tool),
    ...withLoadCost(underLoad),
    ...saturationOf({
      cores: coresWhileLoaded(evidence, isTool, seconds, ramp),
      throttled: throttledShares(evidence.throttle, evidence.samples, isTool, seconds, ramp),
      hostCores: hostWhileLoaded(evidence, isTool, seconds, ramp),
      coreSets: coreSetsWhileLoaded(evidence, isTool, seconds, ramp),
      during: ramp ? 'during the ramp' : undefined,
      allowance: evidence.allowance, topology: evidence.topology,
      toolService, offered: Number(step.load?.env?.RATE), load, haproxy: counters,
    }),
    ...(evidence.check ? secondMethod(evidence.check, allowanceOf(evidence), underLoad.haproxy_us_per_req_load) : {}),
    ...breakdownColumns(breakdownOf({
      host: evidence.hostCpu, containers: evidence.containerMap, merged: tool.merged,
      services: { haproxy: new Set(servicesOf(evidence.topology, 'haproxy')), backends: new Set(servicesOf(evidence.topology, 'backend')), load: new Set([toolService]) },
    })),
    memory: evidence.memPeak ? Object.fromEntries(Object.keys(evidence.memPeak).sort()
      .map((name) => [name, { before: evidence.memBefore?.[name] ?? null, peak: evidence.memPeak[name] }])) : null,
    ...perInstance(evidence),
  };
}

// A holder step's breakdown (evidence/breakdown.mjs) and its figures for
// the table: µs of CPU per connection opened, HAProxy's and the machine's.
function breakdownColumns(b) {
  if (!b) return {};
  return {
    cpu_breakdown: b,
    haproxy_us_per_conn: b.ramp?.us.haproxy ?? null,
    machine_us_per_conn: b.ramp?.machine_us ?? null,
    drain_rate: b.drain?.rate ?? null,
  };
}

// HAProxy's allowance in cores (every instance's container), as read back.
const allowanceOf = (evidence) => {
  const cores = Object.entries(evidence.allowance ?? {})
    .filter(([name]) => isServiceContainer(name, servicesOf(evidence.topology, 'haproxy'))).map(([, a]) => a.cores);
  return cores.length ? cores.reduce((t, c) => t + c, 0) : null;
};

// The window's received rate, where it could be read, stands for the sampled one.
const withLoadCost = (c) => Object.fromEntries(Object.entries(c).filter(([k, v]) => k !== 'haproxy_req_rate' || v !== null));

// Each container's cores while the load ran steadily or over RAMP
// (evidence/cpu.mjs loadRates), else over the whole step.
function coresWhileLoaded(evidence, isTool, seconds, ramp) {
  const rates = loadRates(evidence.samples, isTool, seconds, ramp);
  const whole = evidence.cpuTime ? Object.fromEntries(Object.entries(evidence.cpuTime).map(([n, c]) => [n, c.ns / 1e9 / c.seconds])) : null;
  return rates || whole ? { ...whole, ...rates } : null;
}

// The machine's busy cores over the same window (null: not sampled).
function hostWhileLoaded(evidence, isTool, seconds, ramp) {
  if (!evidence.host?.length || !evidence.samples) return null;
  return loadRates([...evidence.samples, ...evidence.host], isTool, seconds, ramp)?.host ?? null;
}

// cpusetCores "0-2,5" → [0, 1, 2, 5].
export const cpusetCores = (set) => String(set).split(',').flatMap((part) => {
  const [a, b = a] = part.split('-').map(Number);
  return Number.isInteger(a) && Number.isInteger(b) && b >= a ? Array.from({ length: b - a + 1 }, (_, k) => a + k) : [];
});

// How busy HAProxy's own cores and all the others were over the same window
// (percent, /proc/stat's cpuN samples), when HAProxy ran on a cpuset: the
// kernel's network work for HAProxy's packets is on its core and in no
// cgroup. null without a cpuset or per-core samples.
function coreSetsWhileLoaded(evidence, isTool, seconds, ramp) {
  const own = Object.entries(evidence.allowance ?? {})
    .filter(([name]) => isServiceContainer(name, servicesOf(evidence.topology, 'haproxy'))).map(([, a]) => a.cpuset);
  if (own.length === 0 || own.some((c) => !c) || !evidence.host?.length || !evidence.samples) return null;
  const rates = loadRates([...evidence.samples, ...evidence.host], isTool, seconds, ramp) ?? {};
  const perCore = Object.fromEntries(Object.entries(rates).filter(([n]) => /^cpu\d+$/.test(n)).map(([n, r]) => [Number(n.slice(3)), r]));
  const mine = new Set(own.flatMap(cpusetCores));
  const rest = Object.keys(perCore).map(Number).filter((c) => !mine.has(c));
  if ([...mine].some((c) => perCore[c] === undefined) || rest.length === 0) return null;
  const pct = (cs) => (cs.reduce((t, c) => t + perCore[c], 0) / cs.length) * 100;
  return { haproxy: pct([...mine]), rest: pct(rest) };
}

// HAProxy's own words, each line with its instance's name when there are several.
function alertsOf(evidence) {
  const several = evidence.instances.length > 1;
  return evidence.instances.flatMap((i) => i.alerts.map((a) => (several ? `${i.name}: ${a}` : a))).slice(0, 4);
}

// A sum over the instances that have the value; null when none has it.
const sumOf = (values) => {
  const known = values.filter((v) => v !== null && v !== undefined);
  return known.length ? known.reduce((t, v) => t + v, 0) : null;
};

// The FRONTEND rows of show stat STAT for the topology's FRONTEND_NAMES.
const frontendRows = (stat, frontendNames) => stat?.filter((r) => frontendNames.includes(r.pxname) && r.svname === 'FRONTEND') ?? [];

// One instance's show stat, show info and kernel counters: its frontends'
// sessions and errors (the topology's), its backends' queues and errors.
function instanceCounters(instance, frontendNames) {
  const { stat, info, before, after } = instance;
  const fes = frontendRows(stat, frontendNames);
  const backends = stat?.filter((r) => r.svname === 'BACKEND') ?? [];
  const delta = (name) => (before?.[name] !== undefined && after?.[name] !== undefined ? after[name] - before[name] : null);
  return {
    max_sessions: fes.length ? fes.reduce((t, r) => t + cell(r.smax), 0) : null,
    max_queue: stat ? backends.filter((r) => r.pxname.startsWith('be_')).reduce((t, r) => t + cell(r.qmax), 0) : null,
    errors: stat ? fes.reduce((t, r) => t + cell(r.ereq), 0) + backends.reduce((t, r) => t + cell(r.econ) + cell(r.eresp), 0) : null,
    maxconn_reached: info?.MaxconnReached !== undefined ? cell(info.MaxconnReached) : null,
    listen_overflows: delta('TcpExt.ListenOverflows'),
    listen_drops: delta('TcpExt.ListenDrops'),
    syncookies: delta('TcpExt.SyncookiesSent'),
  };
}

// HAProxy's counters, summed over its instances; the backlog of the first
// frontend's listening socket (read back with ss) and the longest accept
// queue sampled (every instance's frontends together).
function haproxyCounters(evidence) {
  const { topology, instances } = evidence;
  const per = instances.map((i) => instanceCounters(i, frontendsOf(topology, i.name).map((f) => f.name)));
  const summed = Object.fromEntries(Object.keys(per[0]).map((k) => [k, sumOf(per.map((c) => c[k]))]));
  const first = topology.frontends[0];
  const owner = instances.find((i) => i.name === first?.instance);
  const listener = first ? owner?.listeners?.[first.port] ?? null : null;
  const queues = (samplesOf(evidence) ?? []).map((x) => x.queue).filter((v) => v !== null);
  return {
    ...summed,
    backlog: listener ? listener.backlog : null,
    accept_queue_max: queues.length ? Math.max(...queues) : null,
  };
}

// Every instance's samples added up second by second ("-" in any: unknown).
function samplesOf(evidence) {
  const all = evidence.instances.map((i) => i.samples);
  if (all.some((s) => s === null)) return all.every((s) => s === null) ? null : all.find((s) => s !== null);
  const add = (a, b) => (a === null || b === null ? null : a + b);
  return all[0].map((x, n) => all.slice(1).reduce((acc, s) => ({
    t: acc.t,
    at: acc.at,
    haproxy: add(acc.haproxy, s[n]?.haproxy ?? null),
    backend: add(acc.backend, s[n]?.backend ?? null),
    queue: add(acc.queue, s[n]?.queue ?? null),
  }), x));
}

// counterAt SAMPLES AT: the requests an instance received by time AT (ms),
// between the two samples around it (null outside them).
export function counterAt(samples, at) {
  const xs = (samples ?? []).filter((x) => x.requests !== null && x.at !== null);
  for (let k = 1; k < xs.length; k += 1) {
    const [a, b] = [xs[k - 1], xs[k]];
    if (a.at <= at && at <= b.at) return b.at === a.at ? a.requests : a.requests + ((b.requests - a.requests) * (at - a.at)) / (b.at - a.at);
  }
  return null;
}

// loadCost EVIDENCE ISTOOL SECONDS: HAProxy's requests per second and its CPU
// per request over one window: the load's steady window (evidence/cpu.mjs
// steadyWindow, as its cores are read over) within the span of its request
// counts; its containers' first and last cgroup reading there, and every
// instance's count at those very times.
// The step's whole-time cost also counts the idle start, the tail and the
// readings before and after; this is the cost while HAProxy worked.
export function loadCost(evidence, isTool, seconds) {
  const none = { haproxy_req_rate: null, haproxy_us_per_req_load: null };
  const window = steadyWindow(evidence.samples, isTool, seconds);
  const haproxyNames = servicesOf(evidence.topology, 'haproxy');
  if (!window) return none;
  // The request counts' span (every instance's): a CPU reading outside it has no count to go with it.
  const spans = evidence.instances.map((i) => (i.samples ?? []).filter((x) => x.requests !== null && x.at !== null).map((x) => x.at));
  if (spans.some((xs) => xs.length < 2)) return none;
  const lo = Math.max(window[0], ...spans.map((xs) => Math.min(...xs)));
  const hi = Math.min(window[1], ...spans.map((xs) => Math.max(...xs)));
  const readings = [...firstAndLast(evidence.samples, [lo, hi])].filter(([name]) => isServiceContainer(name, haproxyNames));
  if (readings.length === 0) return none;
  const from = Math.max(...readings.map(([, [a]]) => a.at));
  const to = Math.min(...readings.map(([, [, b]]) => b.at));
  const counts = evidence.instances.map((i) => [counterAt(i.samples, from), counterAt(i.samples, to)]);
  if (!(to - from >= 1000) || counts.some(([a, b]) => a === null || b === null)) return none;
  const requests = counts.reduce((t, [a, b]) => t + (b - a), 0);
  const ns = readings.reduce((t, [, [a, b]]) => t + (b.ns - a.ns), 0);
  return {
    haproxy_req_rate: (requests * 1000) / (to - from),
    haproxy_us_per_req_load: requests > 0 ? ns / 1000 / requests : null,
  };
}

// The requests per second HAProxy received while the load ran steadily (a
// quarter into it to its end): each instance's request counts, added up.
// (Runs without a CPU reading in that window: loadCost has none.)
function receivedRate(evidence, secs) {
  if (!Number.isFinite(secs)) return null;
  const rates = evidence.instances.map((i) => {
    const xs = (i.samples ?? []).filter((x) => x.t >= secs / 4 && x.t <= secs && x.requests !== null && x.at !== null);
    if (xs.length < 2 || xs[xs.length - 1].at - xs[0].at < 1000) return null;
    return ((xs[xs.length - 1].requests - xs[0].requests) * 1000) / (xs[xs.length - 1].at - xs[0].at);
  });
  return rates.every((r) => r !== null) ? rates.reduce((t, r) => t + r, 0) : null;
}

// Each instance's own figures, for a report with more than one instance.
function perInstance(evidence) {
  if (evidence.instances.length < 2) return {};
  const { topology } = evidence;
  return {
    instances: Object.fromEntries(evidence.instances.map((i) => {
      const c = instanceCounters(i, frontendsOf(topology, i.name).map((f) => f.name));
      const conns = (i.samples ?? []).map((x) => x.haproxy).filter((v) => v !== null);
      return [i.name, { max_sessions: c.max_sessions, maxconn_reached: c.maxconn_reached, errors: c.errors,
        haproxy_conns_peak: conns.length ? Math.max(...conns) : null }];
    })),
  };
}

const median = (xs) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

// heldByHaproxy SAMPLES MERGED: the fewest connections HAProxy held (every
// instance added up) in the samples taken during the holders' common hold
// (MERGED: the holders' merged summary; its hold_window in seconds after
// their start); null without a holder, a hold or a sample in it. The clients
// count a connection open once the kernel completes its handshake: one
// waiting in HAProxy's accept queue is open to them, not yet HAProxy's.
export function heldByHaproxy(samples, merged) {
  const w = merged?.hold_window;
  if (!samples || !w || !Number.isFinite(merged.started_at_ms)) return null;
  const from = merged.started_at_ms + w.from_t * 1000, to = merged.started_at_ms + w.to_t * 1000;
  const inHold = samples.filter((x) => x.at !== null && x.at !== undefined && x.at >= from && x.at <= to);
  if (inHold.length === 0 || inHold.some((x) => x.haproxy === null)) return null;
  return Math.min(...inHold.map((x) => x.haproxy));
}

// Connections on both sides of HAProxy, sampled while the load ran, and who
// ended the sessions HAProxy logged.
// HOLDERS: the holders' merged summary (HAProxy's count through their hold).
function connectionSamples(evidence, step, holders) {
  // Plateau: the median over the second half of the load (the first half
  // ramps up), before its end (a sample at the end reads the connections
  // draining, a fraction of the plateau).
  const secs = step.load?.seconds ?? Infinity;
  const samples = samplesOf(evidence);
  const late = (samples ?? []).filter((x) => x.t >= secs / 2 && x.t < secs);
  const side = (xs, key) => xs.map((x) => x[key]).filter((v) => v !== null);
  const terms = (code) => sumOf(evidence.instances.map((i) => (i.terms ? i.terms[code] ?? 0 : null)));
  return {
    haproxy_req_rate: receivedRate(evidence, secs),
    plateau_conns: median(side(late, 'haproxy')),
    backend_plateau: median(side(late, 'backend')),
    haproxy_conns_peak: samples ? Math.max(0, ...side(samples, 'haproxy')) : null,
    backend_conns_peak: samples ? Math.max(0, ...side(samples, 'backend')) : null,
    haproxy_held_min: heldByHaproxy(samples, holders),
    sd_aborts: terms('SD'),
    cd_aborts: terms('CD'),
  };
}

// parseKernel TEXT: kernel_memory's NAME=value lines as numbers (null: no file).
function parseKernel(text) {
  if (text === null) return null;
  return Object.fromEntries(Object.entries(parseEnv(text)).map(([k, v]) => [k, Number(v)]));
}

// Container → role, by compose's name (project-service-index): the
// instances' services are HAProxy, the backends' the backend.
const servicesOf = (topology, role) => (role === 'haproxy' ? topology.instances.map((i) => i.service) : topology.backends.map((b) => b.name));
const memoryOf = (memory, topology, role) => Object.entries(memory ?? {})
  .filter(([name]) => isServiceContainer(name, servicesOf(topology, role))).reduce((t, [, v]) => t + v, 0);

// HAProxy's CPU per request it counted (its frontends' req_tot, every
// instance) and per TLS handshake, from its containers' cgroups, the idle
// rate taken out when it was read; the backends' the same way; the load
// tool's own CPU per request (its summary's cgroup reading); and HAProxy's
// over the client's and the backends' together.
function cpuPerRequest(evidence, tool) {
  const { topology, instances, cpuTime } = evidence;
  const fes = instances.flatMap((i) => frontendRows(i.stat, frontendsOf(topology, i.name).map((f) => f.name)));
  const counted = (col) => (fes.length ? fes.reduce((t, r) => t + cell(r[col]), 0) : null);
  const netNs = (role) => {
    const read = Object.entries(cpuTime ?? {}).filter(([name]) => isServiceContainer(name, servicesOf(topology, role)));
    return read.length ? read.reduce((t, [, c]) => t + (c.net_ns ?? c.ns), 0) : null;
  };
  const ns = netNs('haproxy');
  const backendNs = netNs('backend');
  const requests = counted('req_tot');
  const full = counted('ssl_sess');
  const resumed = counted('ssl_reused_sess');
  const perReq = ns !== null && requests > 0 ? ns / 1000 / requests : null;
  // The client and the backends work over the same seconds as HAProxy, on
  // the same cores: their CPU per request moves with the machine's speed.
  const backendPerReq = backendNs !== null && requests > 0 ? backendNs / 1000 / requests : null;
  const loadNs = tool.client?.cpu_ns ?? null;
  const loadPerReq = loadNs !== null && tool.measured.requests > 0 ? loadNs / 1000 / tool.measured.requests : null;
  const restPerReq = loadPerReq !== null && backendPerReq !== null ? loadPerReq + backendPerReq : null;
  // The event loop's turns per request (show activity, since the step's
  // reload): fewer as the load grows, each turn doing more.
  const loops = instances.every((i) => i.activity?.loops !== undefined) ? instances.reduce((t, i) => t + i.activity.loops, 0) : null;
  return {
    haproxy_requests: requests,
    handshakes_full: full,
    handshakes_resumed: resumed,
    resumed_pct: full + resumed > 0 ? (resumed / (full + resumed)) * 100 : null,
    haproxy_us_per_req: perReq,
    backend_us_per_req: backendPerReq,
    haproxy_over_client_backends: perReq !== null && restPerReq > 0 ? perReq / restPerReq : null,
    per_core_rate: perReq ? 1e6 / perReq : null,
    loops_per_req: loops !== null && requests > 0 ? loops / requests : null,
    loadgen_us_per_req: loadPerReq,
  };
}

// Bytes per connection a container role grew by, over the connections the
// clients held (only load tools that hold connections report client_held).
function memoryPerConnection(evidence, held) {
  const perConnection = (role) => {
    if (!held || !evidence.memPeak || !evidence.memBefore) return null;
    return (memoryOf(evidence.memPeak, evidence.topology, role) - memoryOf(evidence.memBefore, evidence.topology, role)) / held;
  };
  // The kernel's: its slab (socket, file, epoll objects) and TCP buffer pages
  // grew by; and everything, as the host's MemAvailable fell (the
  // containers' figures include some of the kernel's: their cgroups are
  // charged for the socket objects their processes made).
  const k0 = evidence.kernelBefore;
  const k1 = evidence.kernelPeak;
  const kernel = held && k0 && k1 && [k0, k1].every((k) => ['slab_bytes', 'tcp_mem', 'page_size'].every((n) => Number.isFinite(k[n])))
    ? (k1.slab_bytes - k0.slab_bytes + (k1.tcp_mem - k0.tcp_mem) * k1.page_size) / held : null;
  const host = held && Number.isFinite(k0?.memavailable_bytes) && Number.isFinite(k1?.memavailable_bytes)
    ? (k0.memavailable_bytes - k1.memavailable_bytes) / held : null;
  return { bytes_haproxy: perConnection('haproxy'), bytes_backend: perConnection('backend'), bytes_kernel: kernel, bytes_host: host };
}
