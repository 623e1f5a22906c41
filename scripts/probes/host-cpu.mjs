// The Docker host's CPU, once a second, for a connection step's breakdown of
// where each connection's CPU goes: run by scripts/lib/step-load.sh in a
// probe with the host's pid namespace and /sys/fs/cgroup read-only at
// /host-cgroup. Reads files only (no process started, no socket scanned),
// so its own cost does not grow with connections held.
//   node host-cpu.mjs [HAPROXY_CONTAINER_ID ...]
// Lines, raw (scripts/labctl/evidence/breakdown.mjs reads them):
//   AT_MS stat USER NICE SYSTEM IDLE IOWAIT IRQ SOFTIRQ STEAL   /proc/stat's cpu line, in ticks
//   AT_MS cg CONTAINER_ID NS                                    every container's cgroup CPU time
//   AT_MS proc COMM PID TICKS                                   Docker's daemons (with the children they reaped) and shims (their own)
//   AT_MS haproxy CONTAINER_ID PID TICKS                        each HAProxy worker process of those containers
//   AT_MS other COMM PID TICKS                                  every 10 s, each other process outside the containers
//                                                               that has used CPU (with the children it reaped), kernel
//                                                               threads too: what the breakdown's "the rest" is made of
// The first lines say the tick rate and how often "other" lines come:
// "# ticks_per_second 100", "# other_every_ms 10000".
// Ends when its stdin closes, or on SIGTERM.
import fs from 'node:fs';

const CGROUP = '/host-cgroup';
const DAEMONS = /^(dockerd|containerd|containerd-shim.*|docker-proxy|runc.*)$/;
const haproxyIds = process.argv.slice(2);
const out = [];
const read = (file) => { try { return fs.readFileSync(file, 'latin1'); } catch { return null; } };

// Each container's CPU time in ns: cgroup v1 cpuacct.usage, else v2 cpu.stat usage_usec.
const v1Dirs = ['cpuacct/docker', 'cpu,cpuacct/docker'].map((d) => `${CGROUP}/${d}`).filter((d) => fs.existsSync(d));
function containerCpu() {
  const found = new Map();
  for (const dir of v1Dirs) {
    for (const id of fs.readdirSync(dir)) {
      const v = read(`${dir}/${id}/cpuacct.usage`);
      if (/^[0-9a-f]{64}$/.test(id) && v !== null) found.set(id, BigInt(v.trim()));
    }
  }
  if (found.size === 0) {
    for (const [dir, re] of [[`${CGROUP}/system.slice`, /^docker-([0-9a-f]{64})\.scope$/], [`${CGROUP}/docker`, /^([0-9a-f]{64})$/]]) {
      let names = [];
      try { names = fs.readdirSync(dir); } catch { continue; }
      for (const name of names) {
        const m = re.exec(name), stat = m && read(`${dir}/${name}/cpu.stat`);
        const usec = stat && /^usage_usec ([0-9]+)/m.exec(stat);
        if (usec) found.set(m[1], BigInt(usec[1]) * 1000n);
      }
    }
  }
  return found;
}

// A container's processes (host pids): v1 cpuacct's or v2's cgroup.procs.
function containerPids(id) {
  for (const file of [...v1Dirs.map((d) => `${d}/${id}/cgroup.procs`), `${CGROUP}/system.slice/docker-${id}.scope/cgroup.procs`, `${CGROUP}/docker/${id}/cgroup.procs`]) {
    const text = read(file);
    if (text !== null) return text.split('\n').filter(Boolean);
  }
  return [];
}

// /proc/PID/stat → [comm, utime + stime (+ cutime + cstime: CHILDREN), ppid] (null if gone).
function procTicks(pid, children) {
  const text = read(`/proc/${pid}/stat`);
  const close = text?.lastIndexOf(')');
  if (!text || close < 0) return null;
  const f = text.slice(close + 2).split(' '); // f[0] is field 3 (state)
  const own = Number(f[11]) + Number(f[12]);
  return [text.slice(text.indexOf('(') + 1, close), children ? own + Number(f[13]) + Number(f[14]) : own, f[1]];
}
const commOf = (pid) => read(`/proc/${pid}/comm`)?.trim();

let daemons = [], scanned = 0;
const shims = new Set();
// A process in a container: its cgroup path names the container (v1 /docker/ID, v2 docker-ID.scope).
const inContainer = (pid) => /docker[-/][0-9a-f]{64}/.test(read(`/proc/${pid}/cgroup`) ?? '');
// Every this many passes: Docker's daemons found again, the other processes written.
const PASS_MS = 1000;
const SCAN_EVERY_PASSES = 10;
// scanProcesses AT: Docker's daemons and shims found again, and each other
// process outside the containers that has used CPU written out.
function scanProcesses(at) {
  daemons = [];
  shims.clear();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    const comm = read(`/proc/${pid}/comm`)?.trim();
    if (!comm) continue;
    if (DAEMONS.test(comm)) {
      daemons.push(pid);
      if (comm.startsWith('containerd-shim')) shims.add(pid);
      continue;
    }
    if (inContainer(pid)) continue;
    const p = procTicks(pid, true);
    if (p && p[1] > 0) out.push(`${at} other ${p[0].replace(/\s/g, '_')} ${pid} ${p[1]}`);
  }
}

function pass() {
  const at = Date.now();
  const stat = /^cpu +(.*)$/m.exec(read('/proc/stat') ?? '');
  if (stat) out.push(`${at} stat ${stat[1].trim().split(/\s+/).slice(0, 8).join(' ')}`);
  for (const [id, ns] of containerCpu()) out.push(`${at} cg ${id} ${ns}`);
  // Shims come and go with containers: look for new ones every few passes.
  if (scanned++ % SCAN_EVERY_PASSES === 0) scanProcesses(at);
  for (const pid of daemons) {
    // A shim reaps what runs in its container (an exec'd healthcheck), which
    // its container's cgroup already counts: its own time only.
    const p = procTicks(pid, !shims.has(pid));
    if (p) out.push(`${at} proc ${p[0].replace(/\s/g, '_')} ${pid} ${p[1]}`);
  }
  for (const id of haproxyIds) {
    for (const pid of containerPids(id)) {
      const p = procTicks(pid, false);
      // Workers only: a master (its parent is not HAProxy) forwards signals.
      if (p && p[0] === 'haproxy' && commOf(p[2]) === 'haproxy') out.push(`${at} haproxy ${id} ${pid} ${p[1]}`);
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
  out.length = 0;
}

process.stdout.write(`# ticks_per_second 100\n# other_every_ms ${SCAN_EVERY_PASSES * PASS_MS}\n`);
pass();
const timer = setInterval(pass, PASS_MS);
const stop = () => { clearInterval(timer); pass(); process.exit(0); };
process.on('SIGTERM', stop);
process.stdin.on('end', stop).on('error', stop).resume();
