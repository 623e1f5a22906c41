// Preflight arithmetic: what each limit allows, which binds first, the
// refusal, and the sizing of each level (replicas, maxconn, timeouts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BYTES_PER_CONNECTION, HAPROXY_SPARE_FDS, KERNEL_BYTES_PER_CONNECTION, MAXCONN_MARGIN, PROCESS_SPARE_FDS,
  PROCESS_BASE_BYTES, PROCESS_SHARE, capsOf, formatPreflight, memoryFor, pastTheWall, perReplica, portsPerPair, preflight, processesFor, refusal, sizeLevels,
  inOrderServers,
} from '../plan/preflight.mjs';
import { TOPOLOGY } from '../core/topology.mjs';
import { fileURLToPath } from 'node:url';

const MAX_REPLICAS = TOPOLOGY.limits.replicas;
const SLOW_PORT = TOPOLOGY.backends.find((b) => b.name === 'backend-slow').port;

// This machine: dockerd's hard nofile 20000 caps every container.
const here = {
  haproxy_nofile: 20000, backend_nofile: 20000, holder_nofile: 20000, port_range: [1024, 65535], nr_open: 1048576,
  conntrack_max: 262144, conntrack_count: 1000, bridge_tracked: true, mem_available_bytes: 24e9,
  haproxy_memory_bytes: 2 * 1024 ** 3, backend_memory_bytes: 512 * 1024 ** 2, holder_memory_bytes: 1024 ** 3,
};
// A tuned Linux host: 4M files per container, defaults elsewhere.
const tuned = { ...here, haproxy_nofile: 4194304, backend_nofile: 1048576, holder_nofile: 1048576, nr_open: 4194304, mem_available_bytes: 256e9, haproxy_memory_bytes: 64 * 1024 ** 3 };

test('HAProxy needs 2 fds per connection plus spares: nofile 20000 allows 9900', () => {
  const p = preflight(500000, here);
  assert.equal(p.largest, (20000 - HAPROXY_SPARE_FDS) / 2 - MAXCONN_MARGIN);
  // HAProxy 3.2 asked for 2 × maxconn + 53 files with the lab's config: the margin covers it.
  assert.ok(2 * (p.largest + MAXCONN_MARGIN) + 53 <= 20000);
  assert.equal(p.binding.limit, 'HAProxy open files (nofile)');
  assert.equal(p.fits, false);
  assert.equal(refusal(p), '500000 concurrent connections do not fit here: HAProxy open files (nofile) = 20000 allows at most 9900 '
    + '(for 500000: --processes 54, or HAPROXY_NOFILE=1000200 in .env with the Docker daemon allowed as much (systemctl edit docker: '
    + '[Service] LimitNOFILE=infinity, then systemctl restart docker)); try --target 9900 or --target max');
  assert.equal(preflight('max', here).target, 9900);
  assert.equal(preflight('max', here).fits, true);
  assert.equal(preflight(9901, here).fits, false);
});

test('conntrack binds next once nofile is raised: 2 entries per end-to-end connection', () => {
  const p = preflight(500000, tuned);
  assert.equal(p.binding.limit, 'conntrack table (nf_conntrack_max, 2 entries per connection)');
  assert.equal(p.largest, Math.floor((262144 - 1000) / 2));
  // The exact command: 2 entries per connection, what the table holds, a spare.
  assert.match(refusal(p), /for 500000: sysctl -w net\.netfilter\.nf_conntrack_max=1005096 \(as root, on the Docker host\)/);
  // Bridged traffic not tracked: conntrack is no limit, HAProxy's 4M files bind.
  const untracked = preflight(500000, { ...tuned, bridge_tracked: false });
  assert.equal(untracked.binding.limit, 'HAProxy open files (nofile)');
  assert.equal(untracked.largest, (4194304 - HAPROXY_SPARE_FDS) / 2 - MAXCONN_MARGIN);
  assert.equal(untracked.fits, true);
  // Little memory: memory binds, at 80% of it over every side's bytes per connection.
  const small = preflight(500000, { ...tuned, bridge_tracked: false, mem_available_bytes: 4e9 });
  const total = BYTES_PER_CONNECTION.haproxy + BYTES_PER_CONNECTION.backend + BYTES_PER_CONNECTION.holder + KERNEL_BYTES_PER_CONNECTION;
  assert.equal(small.binding.limit.startsWith('free memory'), true);
  assert.equal(small.largest, Math.floor((4e9 * 0.8) / total));
});

test('per replica: the smaller of nofile, the port range and the memory limit', () => {
  assert.equal(portsPerPair({ port_range: [32768, 60999] }), 28232);
  assert.equal(perReplica(here, 'holder'), 20000 - PROCESS_SPARE_FDS);
  assert.equal(perReplica({ ...tuned, port_range: [32768, 60999] }, 'holder'), 28232);
  assert.equal(perReplica({ ...tuned, backend_memory_bytes: 100e6 }, 'backend'), Math.floor((100e6 * 0.8) / BYTES_PER_CONNECTION.backend));
  const caps = capsOf({ ...tuned, port_range: [32768, 60999] });
  assert.equal(caps.find((c) => c.limit.startsWith('holder replicas')).allows, MAX_REPLICAS * 28232);
});

test('levels: replicas so no IP pair runs out of ports, maxconn and timeouts above the hold', () => {
  const limits = { ...tuned, port_range: [32768, 60999] };
  const [small, big] = sizeLevels(100000, [0.1, 1], limits, 120);
  assert.equal(small.connections, 10000);
  assert.equal(small.replicas, 1);
  assert.deepEqual(small.backends, { 'backend-slow': 1 });
  assert.equal(big.connections, 100000);
  assert.equal(big.replicas, 4); // 100000 / 28232 ports per client IP
  assert.deepEqual(big.backends, { 'backend-slow': 4 });
  assert.equal(big.env.CONNECTIONS, '100000');
  assert.equal(big.env.HOLDER_REPLICAS, '4');
  assert.equal(big.haproxy.global.maxconn, '100050');
  assert.equal(big.haproxy.defaults['timeout server'], '180s');
  assert.equal(big.haproxy['backend be_slow']['server-template slow'], `10 backend-slow:${SLOW_PORT}`);
  const huge = sizeLevels(1000000, [1], { ...limits, haproxy_nofile: 4194304 }, 60)[0];
  assert.equal(huge.haproxy['backend be_slow']['server-template slow'], `36 backend-slow:${SLOW_PORT}`);
});

test('the printed table names every limit and the one that binds', () => {
  const text = formatPreflight(preflight(500000, here));
  assert.match(text, /^preflight: target 500000 concurrent connections, largest that fits here 9900/);
  assert.match(text, /HAProxy open files \(nofile\)\s+20000\s+9900\s+← binds first/);
  assert.match(text, /free memory .*22\.4 GiB/);
  assert.match(text, /first to run out: HAProxy open files \(nofile\); a user sees: HAProxy refuses the config: "Cannot raise FD limit/);
});

test('readLimits: the runner\'s limits.env as numbers; a bad value is named', async () => {
  const { readLimits } = await import('../plan/preflight.mjs');
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-'));
  const lines = [
    '# collect_limits', 'haproxy_nofile=20000', 'backend_nofile=20000', 'holder_nofile=20000', 'port_range=32768 60999',
    'nr_open=1048576', 'conntrack_max=262144', 'conntrack_count=12', 'bridge_tracked=true', 'mem_available_bytes=1000',
    'haproxy_memory_bytes=2147483648', 'backend_memory_bytes=0', 'holder_memory_bytes=1073741824',
  ];
  fs.writeFileSync(path.join(dir, 'ok.env'), `${lines.join('\n')}\n`);
  const limits = readLimits(path.join(dir, 'ok.env'));
  assert.deepEqual(limits.port_range, [32768, 60999]);
  assert.equal(limits.bridge_tracked, true);
  assert.equal(limits.haproxy_memory_bytes, 2147483648);
  fs.writeFileSync(path.join(dir, 'bad.env'), `${lines.join('\n').replace('haproxy_nofile=20000', 'haproxy_nofile=')}\n`);
  assert.throws(() => readLimits(path.join(dir, 'bad.env')), /haproxy_nofile should be a whole number, found ""/);
});

test('N processes: each holds 95% of what its files allow (the kernel\'s hash spreads them unevenly), so 250,000 needs 27', () => {
  const each = Math.floor(9900 * PROCESS_SHARE);
  assert.equal(processesFor(9900, here), 1);
  assert.equal(processesFor(9901, here), 2);
  assert.equal(processesFor(250000, here), Math.ceil(250000 / each));
  assert.equal(processesFor(250000, here), 27);
  const big = { ...here, conntrack_max: 1048576, haproxy_memory_bytes: 8 * 1024 ** 3 };
  const p = preflight(250000, { ...big, processes: 27 });
  const files = p.caps.find((c) => c.limit.startsWith('HAProxy open files'));
  assert.equal(files.limit, 'HAProxy open files (nofile) × 27 processes');
  assert.equal(files.allows, 27 * each);
  assert.equal(preflight(250000, { ...big, processes: 26 }).binding.limit, 'HAProxy open files (nofile) × 26 processes');
});

test('N processes: each level gives every process its whole maxconn, and the run\'s processes and memory', () => {
  const limits = { ...here, processes: 3, haproxy_memory: '1024m' };
  const [level] = sizeLevels(20000, [1], limits, 60);
  assert.equal(level.haproxy.global.maxconn, String(9900 + MAXCONN_MARGIN), 'a process may get more than its third');
  assert.deepEqual(level.compose_env, { HAPROXY_PROCESSES: '3', HAPROXY_MEMORY: '1024m' });
  const [single] = sizeLevels(5000, [1], here, 60);
  assert.equal(single.haproxy.global.maxconn, String(5000 + MAXCONN_MARGIN));
  assert.deepEqual(single.compose_env, { HAPROXY_PROCESSES: '1' });
});

test('backends in order: be_slow balances first over one server per replica, by container name, each replica under its files', () => {
  const limits = { ...here, conntrack_max: 1100000, processes: 54, haproxy_memory_bytes: 12 * 1024 ** 3 };
  const perReplicaBackend = perReplica(limits, 'backend');
  const [small, big] = sizeLevels(500000, [0.1, 1], limits, 60, TOPOLOGY, null, { project: 'lab-x' });
  const perServer = Math.floor(perReplicaBackend / 54);
  for (const level of [small, big]) {
    const be = level.haproxy['backend be_slow'];
    const n = level.backends['backend-slow'];
    assert.equal(be.balance, 'first');
    assert.equal(be['server-template slow'], null, 'the template goes: its slots take DNS answers shuffled');
    assert.equal(be.server.length, n, 'one server per replica');
    assert.equal(be.server[0], `slow1 lab-x-backend-slow-1:${SLOW_PORT} maxconn ${perServer} init-addr none`);
    assert.equal(be.server[n - 1], `slow${n} lab-x-backend-slow-${n}:${SLOW_PORT} maxconn ${perServer} init-addr none`);
    // Each replica gets at most perServer from each of the 54 processes: within what it carries.
    assert.ok(perServer * 54 <= perReplicaBackend, `${perServer} x 54 <= ${perReplicaBackend}`);
    // One server more than the level needs, for the processes' uneven shares.
    assert.ok(n * perServer * 54 >= level.connections + perServer * 54, `${n} servers hold ${level.connections} and one server to spare`);
  }
  // Never more servers than a process's maxconn can fill.
  assert.equal(big.backends['backend-slow'], Math.ceil(Number(big.haproxy.global.maxconn) / perServer));
  // Round robin over the template without it (Swarm, or no project named).
  const [plain] = sizeLevels(500000, [1], limits, 60);
  assert.equal(plain.haproxy['backend be_slow'].balance, undefined);
  assert.match(plain.haproxy['backend be_slow']['server-template slow'], /^\d+ backend-slow:/);
  // One process: one server holds what a replica carries.
  assert.deepEqual(inOrderServers(600, perReplicaBackend, 1, 650, { template: 'slow', name: 'backend-slow', port: SLOW_PORT }, 'p').servers, 1);
});

test('past the wall: --processes 1 just above its open files is the lesson\'s run, sized at the wall; other limits still refuse', () => {
  const one = preflight(11000, { ...here, processes: 1 });
  assert.equal(one.fits, false);
  assert.equal(pastTheWall(one), true, 'only open files bind at 11000 with one process');
  // Another limit short of the target: a refusal, wall or not.
  assert.equal(pastTheWall(preflight(11000, { ...here, processes: 1, conntrack_max: 20000 })), false);
  assert.equal(pastTheWall(preflight(9000, { ...here, processes: 1 })), false, 'a target that fits is no wall');
  // Levels of 1100, 5500 and 11000: maxconn stops at what the files allow
  // (9950), and only the level above it is past the wall.
  const levels = sizeLevels(11000, [0.1, 0.5, 1], { ...here, processes: 1 }, 60);
  assert.deepEqual(levels.map((l) => l.haproxy.global.maxconn), [String(1100 + MAXCONN_MARGIN), String(5500 + MAXCONN_MARGIN), String(9900 + MAXCONN_MARGIN)]);
  assert.deepEqual(levels.map((l) => l.wall), [undefined, undefined, 9900 + MAXCONN_MARGIN]);
  // Three processes hold it: no wall.
  assert.deepEqual(sizeLevels(11000, [1], { ...here, processes: 3 }, 60).map((l) => l.wall), [undefined]);
  const text = formatPreflight({ ...one, fits: true, wall: one.binding.allows, limits: { processes: 1 } });
  assert.match(text, /past the wall: 1 HAProxy process holds at most 9900 \(--processes 1; HAProxy open files \(nofile\) = 20000: maxconn 9950 each, checks and scrapes included\); a level above it shows the wall: .* \(for all 11000: --processes 2\)/);
});

test('memoryFor: HAProxy\'s bytes per connection and each process\'s own, at 80%, in whole 256m', () => {
  const bytes = (250000 * BYTES_PER_CONNECTION.haproxy + 27 * PROCESS_BASE_BYTES) / 0.8;
  assert.equal(memoryFor(250000, here, 27), `${Math.ceil(bytes / 2 ** 28) * 256}m`);
  assert.match(memoryFor(1, here, 1), /^256m$/);
});

test('a big level opens at ramp_per_second and closes at ramp_down_per_second; timeouts outlast both', () => {
  const ramp = { perSecond: 2000, downPerSecond: 1000, seconds: 30, down: 15 };
  const [small, big] = sizeLevels(250000, [0.1, 1], { ...here, processes: 27 }, 120, TOPOLOGY, ramp);
  assert.equal(small.env.RAMP_UP, undefined, '25,000 open within the scenario\'s 30 s at 2,000/s');
  assert.equal(small.env.RAMP_DOWN, '25', '25,000 close in 25 s at 1,000/s');
  assert.equal(big.env.RAMP_UP, '125');
  assert.equal(big.env.RAMP_DOWN, '250');
  assert.equal(big.haproxy.defaults['timeout client'], `${120 + (125 - 30) + (250 - 15) + 60}s`);
  const [plain] = sizeLevels(250000, [1], { ...here, processes: 27 }, 120);
  assert.equal(plain.env.RAMP_UP, undefined, 'no ramp given: the scenario\'s own');
  assert.equal(big.env.RAMP_SLACK, undefined, 'no slowest pace given: no slack');
});

test('a paced ramp may go as slow as ramp_min_per_second: the slack keeps the hold, and the timeouts outlast it', () => {
  const ramp = { perSecond: 2000, downPerSecond: 1000, seconds: 30, down: 15, minPerSecond: 300 };
  const [quick, small, big] = sizeLevels(250000, [600 / 250000, 0.1, 1], { ...here, processes: 27 }, 120, TOPOLOGY, ramp);
  assert.equal(quick.env.RAMP_SLACK, undefined, '600 open at 300/s within the 30 s ramp-up: no slack');
  assert.equal(small.env.RAMP_SLACK, String(Math.ceil(25000 / 300) - 30));
  assert.equal(big.env.RAMP_SLACK, String(Math.ceil(250000 / 300) - 125));
  assert.equal(big.haproxy.defaults['timeout client'], `${120 + (125 - 30) + (250 - 15) + (834 - 125) + 60}s`);
  // A TLS level ramps at 150/s: it may go at half that, not at the plain floor above it.
  const [tls] = sizeLevels(12000, [1], { ...here, processes: 2 }, 120, TOPOLOGY, { ...ramp, perSecond: 150 });
  // Past the wall (one process, 12,000 > what its files allow) the clients do not wait for HAProxy: no slack.
  assert.equal(sizeLevels(12000, [1], { ...here, processes: 1 }, 120, TOPOLOGY, ramp)[0].env.RAMP_SLACK, undefined);
  assert.deepEqual([tls.env.RAMP_UP, tls.env.RAMP_SLACK], ['80', String(12000 / 75 - 80)]);
});

// limitsFolder PREFIX HAPROXY_MEMORY_BYTES [PORT_RANGE] → a temporary folder
// holding a runner's limits.env for this machine (the CLI's --limits).
async function limitsFolder(prefix, haproxyMemoryBytes, portRange = '32768 60999') {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.writeFileSync(path.join(dir, 'limits.env'), `${[
    'haproxy_nofile=20000', 'backend_nofile=20000', 'holder_nofile=20000', `port_range=${portRange}`, 'nr_open=1048576',
    'conntrack_max=262144', 'conntrack_count=12', 'bridge_tracked=true', 'mem_available_bytes=24000000000',
    `haproxy_memory_bytes=${haproxyMemoryBytes}`, 'backend_memory_bytes=536870912', 'holder_memory_bytes=1073741824',
  ].join('\n')}\n`);
  return dir;
}

test('memory the steps set themselves (oom: a trap and its fix) is shown as theirs and no sizing overrides it', async () => {
  const { execFileSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  // A lab whose HAProxy has 64 MiB: less than 6,000 connections need, so the
  // sizing would raise it for a scenario that leaves the memory to the lab.
  const dir = await limitsFolder('steps-memory-', 64 * 1024 ** 2);
  const cli = (...args) => execFileSync(process.execPath, ['scripts/labctl/cli.mjs', ...args], { cwd: root, encoding: 'utf8' });
  // A run folder's path has results/ in it (where the load generators write).
  const out = path.join(dir, 'results', 'oom', '20260101T000000Z');
  const table = cli('preflight', 'oom', '--limits', path.join(dir, 'limits.env'), '--quick');
  assert.match(table, /HAProxy memory limit \(HAPROXY_MEMORY\)\s+set by the steps: 48m, 1g\s+no limit/, table);
  cli('plan', 'oom', '--out', out, '--limits', path.join(dir, 'limits.env'), '--quick');
  const plan = JSON.parse(fs.readFileSync(path.join(out, 'plan.json'), 'utf8'));
  assert.deepEqual(plan.steps.map((s) => s.compose_env.HAPROXY_MEMORY), ['48m', '1g'], 'each step\'s memory as the scenario sets it');
  // Lesson 08's exercise: its one value for every step.
  const lesson = cli('preflight', 'oom', '--limits', path.join(dir, 'limits.env'), '--quick', '--settings', 'lessons/solutions/08-memory.json');
  assert.match(lesson, /set by the steps: 256m\s/, lesson);
  // A scenario that leaves the memory to the lab is still sized: raised above 64 MiB.
  const connections = cli('preflight', 'connections', '--limits', path.join(dir, 'limits.env'), '--quick', '--target', '6000');
  assert.match(connections, /HAProxy memory limit \(HAPROXY_MEMORY\)\s+[\d.]+ GiB/, connections);
  assert.match(connections, /HAProxy memory limit \d+m \(HAPROXY_MEMORY; the lab's is less\)/, connections);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('plan --project: the connections levels name the backends\' containers in order; without it, or on Swarm, the template; a bad name refused', async () => {
  const { execFileSync, spawnSync } = await import('node:child_process');
  const fs = await import('node:fs');
  const path = await import('node:path');
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const dir = await limitsFolder('in-order-', 2 * 1024 ** 3, '1024 65535');
  const plan = (name, ...args) => {
    const out = path.join(dir, 'results', 'connections', name);
    execFileSync(process.execPath, ['scripts/labctl/cli.mjs', 'plan', 'connections', '--out', out, '--limits', path.join(dir, 'limits.env'),
      '--target', '30000', ...args], { cwd: root, encoding: 'utf8' });
    return fs.readFileSync(path.join(out, 'configs', '03-level-100pct.cfg'), 'utf8');
  };
  const ordered = plan('a', '--project', 'my-lab');
  assert.match(ordered, /\n {4}balance first\n/);
  assert.match(ordered, new RegExp(`\\n {4}server slow1 my-lab-backend-slow-1:${SLOW_PORT} maxconn \\d+ init-addr none\\n`));
  assert.doesNotMatch(ordered, /server-template slow /);
  for (const cfg of [plan('b'), plan('c', '--project', 'my-lab', '--on-swarm')]) {
    assert.match(cfg, new RegExp(`\\n {4}server-template slow \\d+ backend-slow:${SLOW_PORT}\\n`));
    assert.doesNotMatch(cfg, /balance first/);
  }
  const bad = spawnSync(process.execPath, ['scripts/labctl/cli.mjs', 'plan', 'connections', '--out', path.join(dir, 'results', 'x'),
    '--limits', path.join(dir, 'limits.env'), '--project', 'My Lab'], { cwd: root, encoding: 'utf8' });
  assert.equal(bad.status, 2, bad.stderr);
  assert.match(bad.stderr, /--project needs a Compose project name .* got "My Lab"/);
  fs.rmSync(dir, { recursive: true, force: true });
});
