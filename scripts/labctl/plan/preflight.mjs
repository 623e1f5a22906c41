// Preflight for the connection-scale scenarios: from the limits the runner
// read off the running lab (scripts/scenario.sh collect_limits), how many
// concurrent end-to-end connections (client → HAProxy → backend) each limit
// allows, which one binds first, and how to size each level (holder and
// backend replicas, HAProxy maxconn) so that no single limit is hit by
// surprise. A target that cannot fit is refused before anything starts.

import { readFileSync } from 'node:fs';
import { parseEnv } from '../core/envfile.mjs';
import { TOPOLOGY, backendNamed, containersOf } from '../core/topology.mjs';

// File descriptors HAProxy keeps besides its connections (listeners, runtime
// sockets, resolvers, health checks, master pipes), with room to spare:
// HAProxy itself asks for 2 × maxconn + a few dozen.
export const HAPROXY_SPARE_FDS = 100;
// maxconn above the held connections: health checks, stats and metrics
// requests. HAProxy refuses a maxconn its nofile cannot hold ("Cannot raise
// FD limit to 20153, limit is 20000" for maxconn 10050), so the cap counts it.
export const MAXCONN_MARGIN = 50;
// conntrack entries planned beyond the held connections' (other traffic).
export const CONNTRACK_SPARE = 4096;
// What one HAProxy process takes before any connection (its code, pools,
// buffers): measured ~20 MB resident per idle process here.
export const PROCESS_BASE_BYTES = 64 * 1024 * 1024;
// Per holder/backend process: stdio, listener, DNS, scrapes.
export const PROCESS_SPARE_FDS = 64;
// The backend the holder's requests reach (its HOLD_PATH, /slow, routes there).
export const HELD_BACKEND = 'backend-slow';
// Only this share of a memory figure is planned for: the rest is headroom.
export const MEMORY_SHARE = 0.8;
// Bytes per held end-to-end connection (process plus kernel socket memory,
// as the container's cgroup counts it), measured by the connections scenario
// on the lab machine (docs/results.md, "Connections on one box"); the report prints
// each run's own figures.
export const BYTES_PER_CONNECTION = { haproxy: 12000, backend: 12000, holder: 4000 };
// What the Docker host's memory falls by per connection beyond the
// containers' own figures: the kernel's socket, conntrack and file objects
// no container is charged for. Measured with 27 processes at 125,000 and
// 250,000 connections (MemAvailable's fall: 31.2 and 29.7 KB per connection,
// the containers' sum 26.3 and 24.9 KB): about 5 KB.
export const KERNEL_BYTES_PER_CONNECTION = 5000;
// The same over TLS (connections --tls: HAProxy holds an OpenSSL session per
// client connection, the holder a Node TLS socket; the backends stay plain),
// measured the same way (docs/results.md, "TLS: cost per handshake, memory per
// connection").
export const BYTES_PER_TLS_CONNECTION = { haproxy: 41000, backend: 8200, holder: 100000 };
// bytesPer LIMITS ROLE: the planning figure for ROLE, TLS ones when the
// levels are held over TLS (limits.tls, set by the planner for --tls).
export const bytesPer = (limits, role) => (limits.tls ? BYTES_PER_TLS_CONNECTION : BYTES_PER_CONNECTION)[role];

const floor = (x) => (Number.isFinite(x) ? Math.max(0, Math.floor(x)) : Infinity);

// portsPerPair LIMITS: ephemeral ports one source IP can use toward one IP:port.
export function portsPerPair(limits) {
  const [lo, hi] = limits.port_range ?? [32768, 60999];
  return hi - lo + 1;
}

// Connections one holder (client) or backend replica can carry.
export function perReplica(limits, role) {
  const nofile = limits[`${role}_nofile`];
  const memory = limits[`${role}_memory_bytes`];
  return Math.min(
    floor(nofile - PROCESS_SPARE_FDS),
    portsPerPair(limits),
    memory ? floor((memory * MEMORY_SHARE) / bytesPer(limits, role)) : Infinity,
  );
}

// Connections one HAProxy process can hold with NOFILE open files (two
// sockets each, and the margin maxconn keeps for checks and scrapes).
export const haproxyAllows = (nofile) => floor((nofile - HAPROXY_SPARE_FDS) / 2 - MAXCONN_MARGIN);

// nofileFor TARGET PROCESSES: the open files each of PROCESSES processes
// needs to hold its share of TARGET (haproxyAllows turned around).
const nofileFor = (target, processes) => 2 * (Math.ceil(target / Math.max(1, processes)) + MAXCONN_MARGIN) + HAPROXY_SPARE_FDS;

// With several processes on one port the kernel spreads new connections by a
// hash (SO_REUSEPORT), not evenly: a process is planned to this share of what
// its open files allow, so the busiest one still has room.
export const PROCESS_SHARE = 0.95;

// processesOf LIMITS INSTANCE: the HAProxy processes INSTANCE's container
// runs (limits.processes, the planned count, for a row that says processes=VAR).
const processesOf = (limits, instance) => (instance.processes !== undefined ? limits.processes ?? 1 : 1);

// perContainer LIMITS N NOFILE: connections N processes of one container hold.
const perContainer = (n, nofile) => (n > 1 ? n * floor(haproxyAllows(nofile) * PROCESS_SHARE) : haproxyAllows(nofile));

// processesFor TARGET LIMITS [TOPOLOGY]: the fewest HAProxy processes per
// container whose open files hold TARGET connections (the article's nbproc).
export function processesFor(target, limits, topology = TOPOLOGY) {
  const rows = containersOf(topology);
  const nofile = Math.min(...rows.map((i) => limits[`${i.name}_nofile`]));
  if (perContainer(1, nofile) * rows.length >= target) return 1;
  const each = floor(haproxyAllows(nofile) * PROCESS_SHARE);
  return each > 0 ? Math.ceil(target / rows.length / each) : Infinity;
}

// memoryFor TARGET LIMITS PROCESSES: HAPROXY_MEMORY ("1536m") for TARGET
// connections over PROCESSES processes, planned at MEMORY_SHARE.
export function memoryFor(target, limits, processes) {
  const bytes = (target * bytesPer(limits, 'haproxy') + processes * PROCESS_BASE_BYTES) / MEMORY_SHARE;
  return `${Math.ceil(bytes / (256 * 1024 * 1024)) * 256}m`;
}

// HAProxy's own caps, added up over its containers (each runs N processes,
// each with its own open-file limit): open files, the kernel's largest
// nofile, memory (the container's limit, all its processes together).
function haproxyCaps(limits, topology) {
  // Each container's own: INSTANCE_nofile, INSTANCE_memory_bytes (readLimits).
  const rows = containersOf(topology).map((i) => ({ n: processesOf(limits, i), nofile: limits[`${i.name}_nofile`], memory_bytes: limits[`${i.name}_memory_bytes`] }));
  const processes = rows.reduce((t, r) => t + r.n, 0);
  const several = processes > 1 ? ` × ${processes} processes` : '';
  const least = (key) => Math.min(...rows.map((i) => i[key]));
  const sum = (f) => rows.reduce((t, i) => t + f(i), 0);
  return [
    {
      key: 'nofile', limit: `HAProxy open files (nofile)${several}`, value: least('nofile'),
      allows: sum((i) => perContainer(i.n, i.nofile)),
      symptom: 'HAProxy refuses the config: "Cannot raise FD limit to 2 × maxconn + N, limit is <nofile>"',
      raise: 'more processes (--processes N, HAPROXY_PROCESSES), or raise HAPROXY_NOFILE in .env; the Docker daemon\'s own nofile (LimitNOFILE) and fs.nr_open cap it',
      command: (target) => `--processes ${processesFor(target, limits, topology)}, or HAPROXY_NOFILE=${nofileFor(target, processes)} in .env `
        + 'with the Docker daemon allowed as much (systemctl edit docker: [Service] LimitNOFILE=infinity, then systemctl restart docker)',
    },
    {
      limit: `kernel fs.nr_open (largest nofile)${several}`, value: limits.nr_open,
      allows: sum((i) => perContainer(i.n, limits.nr_open)),
      symptom: 'the container does not start: "ulimit: operation not permitted"',
      raise: 'sysctl -w fs.nr_open=N on the Docker host',
      command: (target) => `sysctl -w fs.nr_open=${nofileFor(target, processes)} (as root, on the Docker host)`,
    },
    {
      limit: `HAProxy memory limit (HAPROXY_MEMORY)${several}`,
      symptom: 'HAProxy is OOM-killed: every connection drops to 0 (scripts/scenario.sh oom)',
      // The steps' own (limits.steps_memory: oom's trap and fix), not the
      // lab's: what they run with, and no cap of the run's (a trap is meant to fail).
      ...(limits.steps_memory ? {
        value: `set by the steps: ${limits.steps_memory.join(', ')}`, allows: Infinity,
        raise: 'the steps set it (compose_env.HAPROXY_MEMORY)',
      } : {
        value: least('memory_bytes'),
        allows: rows.every((i) => i.memory_bytes) ? sum((i) => floor((i.memory_bytes * MEMORY_SHARE) / bytesPer(limits, 'haproxy'))) : Infinity,
        raise: 'raise HAPROXY_MEMORY in .env',
        command: (target) => `HAPROXY_MEMORY=${memoryFor(target, limits, processes)} in .env`,
      }),
    },
  ];
}

// capsOf LIMITS [TOPOLOGY]: every limit with the connection count it allows,
// the message a user would see when it runs out, and how to raise it.
export function capsOf(limits, topology = TOPOLOGY) {
  const ports = portsPerPair(limits);
  const total = bytesPer(limits, 'haproxy') + bytesPer(limits, 'backend') + bytesPer(limits, 'holder') + KERNEL_BYTES_PER_CONNECTION;
  const replicas = topology.limits.replicas;
  const [openFiles, nrOpen, memory] = haproxyCaps(limits, topology);
  return [
    openFiles,
    nrOpen,
    {
      limit: `holder replicas × per replica (nofile ${limits.holder_nofile}, ${ports} ports per IP)`,
      value: replicas, allows: replicas * perReplica(limits, 'holder'),
      symptom: 'holder: "out of local ports" (EADDRNOTAVAIL) or "out of file descriptors" (EMFILE)',
      raise: 'raise NOFILE in .env or the ephemeral port range (client sysctls in compose.yaml)',
    },
    {
      limit: `backend replicas × per replica (nofile ${limits.backend_nofile}, ${ports} ports from HAProxy)`,
      value: replicas, allows: replicas * perReplica(limits, 'backend'),
      symptom: 'HAProxy logs connection errors (SC) and answers 503',
      raise: 'raise NOFILE / BACKEND_MEMORY in .env',
    },
    {
      limit: 'conntrack table (nf_conntrack_max, 2 entries per connection)',
      value: limits.conntrack_max,
      allows: limits.bridge_tracked ? floor((limits.conntrack_max - (limits.conntrack_count ?? 0)) / 2) : Infinity,
      symptom: 'kernel: "nf_conntrack: table full, dropping packet"; new connections time out',
      raise: 'sysctl -w net.netfilter.nf_conntrack_max=N on the Docker host',
      // Two entries per connection, beside what the table holds already.
      command: (target) => `sysctl -w net.netfilter.nf_conntrack_max=${2 * target + (limits.conntrack_count ?? 0) + CONNTRACK_SPARE} (as root, on the Docker host)`,
    },
    {
      limit: `free memory (${Math.round(total / 1000)} KB per connection, all sides and the kernel)`,
      value: limits.mem_available_bytes,
      allows: floor((limits.mem_available_bytes * MEMORY_SHARE) / total),
      symptom: 'the kernel OOM killer ends the biggest process (dmesg: "Out of memory: Killed process")',
      raise: 'more RAM, or Docker Desktop: Settings → Resources → Memory',
    },
    memory,
  ];
}

// preflight TARGET LIMITS → {target, largest, binding, fits, caps}.
// TARGET "max" means the largest count that fits.
export function preflight(target, limits, topology = TOPOLOGY) {
  const caps = capsOf(limits, topology);
  const binding = caps.reduce((a, b) => (b.allows < a.allows ? b : a));
  const largest = binding.allows;
  const wanted = target === 'max' ? largest : target;
  return { target: wanted, largest, binding, fits: wanted <= largest && wanted > 0, caps };
}

// pastTheWall PREFLIGHT: whether a target that does not fit is the lesson's
// run instead (--processes N below what it needs): only HAProxy's open files
// bind, every other limit holds it, so the levels past what N processes allow
// run into that wall (the article's reason for nbproc) and harm nothing:
// HAProxy stops accepting at maxconn, the rest wait in the accept queue.
export const pastTheWall = (p) => !p.fits && p.target > 0 && p.binding.key === 'nofile'
  && p.caps.every((c) => c.key === 'nofile' || c.allows >= p.target);

// refusal PREFLIGHT: the one line for a target that does not fit: the
// exact change that would make it fit, when the binding limit has one.
export function refusal(p) {
  const b = p.binding;
  const fix = b.command ? `for ${p.target}: ${b.command(p.target)}` : b.raise;
  return `${p.target} concurrent connections do not fit here: ${b.limit} = ${shownValue(b)} allows at most ${p.largest} ` +
    `(${fix}); try --target ${p.largest} or --target max`;
}

// sizeLevels TARGET FRACTIONS LIMITS SECONDS [TOPOLOGY] → one sizing per
// level: the connections, the holder and backend replicas that keep every
// process and IP pair under its limit, the HAProxy settings (maxconn per
// process, timeouts longer than the hold, enough server-template slots), and
// the services' settings (compose_env): limits.processes HAProxy processes,
// and limits.haproxy_memory when the run raised the lab's HAProxy memory.
// RAMP {seconds, down, perSecond, downPerSecond, minPerSecond}: the scenario's
// ramp-up and ramp-down, made longer for a level that would open more than
// perSecond connections a second (RAMP_UP), or close more than downPerSecond
// (RAMP_DOWN; the holders close at the pace they opened, up to that). A paced ramp (the holders wait for HAProxy) may go as slow as
// minPerSecond (at most half of perSecond): every planned end moves later by
// what that would add to the ramp-up (RAMP_SLACK).
// IN_ORDER {project}: the held backend's replicas filled one after another
// (inOrderServers), else balanced round robin over the server template.
export function sizeLevels(target, fractions, limits, holdSeconds, topology = TOPOLOGY, ramp = null, inOrder = null) {
  const holder = perReplica(limits, 'holder');
  const backend = perReplica(limits, 'backend');
  const held = backendNamed(topology, HELD_BACKEND);
  const containers = containersOf(topology);
  const processes = limits.processes ?? 1;
  const nofile = Math.min(...containers.map((i) => limits[`${i.name}_nofile`]));
  // The run's: its processes, and the memory they need when the lab's is less.
  const composeEnv = { HAPROXY_PROCESSES: String(processes), ...(limits.haproxy_memory ? { HAPROXY_MEMORY: limits.haproxy_memory } : {}) };
  return fractions.map((fraction) => {
    const connections = Math.max(1, Math.round(target * fraction));
    // A level opens its connections at ramp.perSecond at most: a longer
    // ramp-up than the scenario's when it has more of them.
    const rampUp = ramp ? Math.max(ramp.seconds, Math.ceil(connections / ramp.perSecond)) : null;
    // One process: its share and the margin, up to what its open files
    // allow. Several: each as many as its open files allow, for the kernel's
    // hash does not spread them evenly. Past the wall (a lesson's --processes
    // N): HAProxy holds maxconn per process, the rest of the level waits in
    // the kernel's accept queue.
    const most = haproxyAllows(nofile) + MAXCONN_MARGIN;
    const wall = most * processes * containers.length;
    const levelPastTheWall = connections > wall;
    // And closes them at the pace they opened (each connection is held as
    // long: loadgen/holder's heldSeconds), at most ramp.downPerSecond: each
    // close is an answer from the backend through HAProxy (250,000 of them
    // in 15 s timed out on 2 cores).
    const rampDown = ramp ? Math.max(ramp.down, Math.ceil(connections / (ramp.downPerSecond ?? ramp.perSecond))) : null;
    // Past the wall the clients do not wait for HAProxy (below): no slack.
    const slowest = ramp?.minPerSecond && !levelPastTheWall ? Math.min(ramp.minPerSecond, ramp.perSecond / 2) : null;
    const slack = slowest ? Math.max(0, Math.ceil(connections / slowest) - rampUp) : 0;
    const longer = ramp ? rampUp - ramp.seconds + rampDown - ramp.down + slack : 0;
    const timeout = `${Math.ceil(holdSeconds + longer) + 60}s`;
    const replicas = Math.max(1, Math.ceil(connections / holder));
    const maxconn = String(processes > 1 ? most : Math.min(most, Math.ceil(connections / containers.length) + MAXCONN_MARGIN));
    const ordered = inOrder ? inOrderServers(connections, backend, processes * containers.length, Number(maxconn), held, inOrder.project) : null;
    const backends = ordered ? ordered.servers : Math.max(1, Math.ceil(connections / backend));
    return {
      connections,
      ...(levelPastTheWall ? { wall } : {}),
      replicas,
      backends: { [held.name]: backends },
      env: {
        CONNECTIONS: String(connections), HOLDER_REPLICAS: String(replicas),
        ...(ramp && rampUp > ramp.seconds ? { RAMP_UP: String(rampUp) } : {}),
        ...(ramp && rampDown > ramp.down ? { RAMP_DOWN: String(rampDown) } : {}),
        ...(slack > 0 ? { RAMP_SLACK: String(slack) } : {}),
        // Past the wall the lesson is HAProxy's accept queue: clients that
        // waited for HAProxy would stop opening at maxconn and never fill it.
        ...(levelPastTheWall ? { MAX_UNCONFIRMED: '0' } : {}),
      },
      compose_env: composeEnv,
      haproxy: {
        global: { maxconn },
        defaults: { maxconn, 'timeout client': timeout, 'timeout server': timeout },
        [`backend ${held.proxy}`]: ordered ? ordered.settings
          : { [`server-template ${held.template}`]: `${Math.max(held.slots, backends)} ${held.name}:${held.port}` },
      },
    };
  });
}

// inOrderServers CONNECTIONS PER_REPLICA PROCESSES MAXCONN HELD PROJECT →
// {servers, perServer, settings}: the held backend balanced "first", one
// server per replica named by its container (PROJECT-backend-slow-I), each
// with maxconn PER_SERVER per process. Every process fills replica 1, then
// 2, ..., in the same order (a template's slots take Docker's DNS answers
// shuffled, each process its own order), so one or two replicas at a time
// take a ramp's new connections, in batches: balanced round robin, every
// replica woke for a few connections at a time, and a Node wake-up costs
// more than a connection's own work. A replica holds at most PER_SERVER x
// PROCESSES, what its open files and memory allow; one server more than the
// level needs takes the processes' uneven shares (the kernel's hash), up to
// MAXCONN a process. A server starts with no address (init-addr none), and
// Docker's DNS gives it one at once: a level's config is loaded before its
// new replicas start, and libc at load waited 5 s on each of the first
// names not there yet, in every process.
export function inOrderServers(connections, perReplicaBackend, processes, maxconn, held, project) {
  const perServer = Math.max(1, floor(perReplicaBackend / processes));
  const servers = Math.max(1, Math.min(Math.ceil(connections / (perServer * processes)) + 1, Math.ceil(maxconn / perServer)));
  const lines = Array.from({ length: servers }, (_, i) => `${held.template}${i + 1} ${project}-${held.name}-${i + 1}:${held.port} maxconn ${perServer} init-addr none`);
  return { servers, perServer, settings: { balance: 'first', [`server-template ${held.template}`]: null, server: lines } };
}

const human = (v) => (v === Infinity ? 'no limit' : v === undefined || v === null ? '-' : String(v));
const GIB = 1024 ** 3;
// Memory figures read better in GiB.
const shownValue = (c) => (/memory/.test(c.limit) && c.value > 0 ? `${(c.value / GIB).toFixed(1)} GiB` : human(c.value));

// formatPreflight PREFLIGHT → the table printed before a run.
export function formatPreflight(p) {
  const rows = p.caps.map((c) => [c.limit, shownValue(c), human(c.allows), c === p.binding ? '← binds first' : '']);
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i].length), ['limit', 'value', 'allows'][i].length));
  const line = (r) => `  ${r[0].padEnd(w[0])}  ${r[1].padStart(w[1])}  ${r[2].padStart(w[2])}  ${r[3]}`.trimEnd();
  return [
    `preflight: target ${p.target} concurrent connections, largest that fits here ${p.largest}`,
    line(['limit', 'value', 'allows', '']),
    ...rows.map(line),
    `  first to run out: ${p.binding.limit}; a user sees: ${p.binding.symptom}; to raise it: ${p.binding.raise}`,
    ...(p.wall ? [`  past the wall: ${p.limits.processes === 1 ? '1 HAProxy process holds' : `${p.limits.processes} HAProxy processes hold`} at most ${p.wall} `
      + `(--processes ${p.limits.processes}; ${p.binding.limit} = ${shownValue(p.binding)}: maxconn ${haproxyAllows(p.binding.value) + MAXCONN_MARGIN} each, `
      + 'checks and scrapes included); a level above it shows the wall: HAProxy stops accepting at maxconn, the rest wait '
      + `in the kernel's accept queue and time out (for all ${p.target}: ${p.binding.command(p.target).split(',')[0]})`] : []),
    ...(p.limits?.processes ? [`  sized for this run: ${p.limits.processes} HAProxy process${p.limits.processes > 1 ? 'es' : ''} (HAPROXY_PROCESSES)`
      + `${p.limits.haproxy_memory ? `, HAProxy memory limit ${p.limits.haproxy_memory} (HAPROXY_MEMORY; the lab's is less)` : ''}`] : []),
  ].join('\n');
}

// readLimits FILE [TOPOLOGY]: the limits the runner read (collect_limits:
// NAME=value lines) as numbers, each HAProxy instance's too (INSTANCE_nofile,
// INSTANCE_memory_bytes: haproxy_nofile...), port_range as [first, last],
// bridge_tracked as a boolean; an Error naming the value that is not what it
// should be.
const LIMIT_NUMBERS = [
  'backend_nofile', 'holder_nofile', 'nr_open', 'conntrack_max', 'conntrack_count',
  'mem_available_bytes', 'backend_memory_bytes', 'holder_memory_bytes',
];
export function readLimits(file, topology = TOPOLOGY) {
  const values = parseEnv(readFileSync(file, 'utf8'));
  const number = (name, text) => {
    if (!/^\d+$/.test(text ?? '')) throw new Error(`${file}: ${name} should be a whole number, found "${text ?? ''}"`);
    return Number(text);
  };
  const limits = Object.fromEntries(LIMIT_NUMBERS.map((name) => [name, number(name, values[name])]));
  for (const { name } of containersOf(topology)) {
    for (const key of [`${name}_nofile`, `${name}_memory_bytes`]) limits[key] = number(key, values[key]);
  }
  limits.port_range = (values.port_range ?? '').split(' ').map((p) => number('port_range', p));
  if (limits.port_range.length !== 2) throw new Error(`${file}: port_range should be "first last", found "${values.port_range ?? ''}"`);
  if (!['true', 'false'].includes(values.bridge_tracked)) throw new Error(`${file}: bridge_tracked should be true or false, found "${values.bridge_tracked ?? ''}"`);
  limits.bridge_tracked = values.bridge_tracked === 'true';
  return limits;
}
