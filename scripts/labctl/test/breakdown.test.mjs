// Where a connection's CPU goes (evidence/breakdown.mjs) and the floors a
// connection run measures (evidence/floors.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { breakdownOf, coresOver, holderWindows, parseContainers, parseHostSampler } from '../evidence/breakdown.mjs';
import { readFloors } from '../evidence/floors.mjs';

const ID = (c) => c.repeat(64);
// Host-sampler passes once a second for SECONDS: the machine 1.5 cores busy
// (of which 0.3 system, 0.2 softirq); HAProxy's container 0.4 (its two
// processes 0.3 and 0.1), a backend 0.3, a holder 0.2, a probe 0.05,
// Prometheus 0.05; dockerd 0.1 (ticks at 100/s); outside the containers,
// every 10 s: PID 1 0.2, two kernel workers 0.03 and 0.02, an idle shell.
function sampler({ t0 = 1_000_000, seconds = 10 } = {}) {
  const ns = (cores, s) => Math.round(cores * s * 1e9);
  const ticks = (cores, s) => Math.round(cores * s * 100);
  const lines = ['# ticks_per_second 100', '# other_every_ms 10000'];
  for (let s = 0; s <= seconds; s++) {
    const at = t0 + s * 1000;
    lines.push(`${at} stat ${1000 + ticks(1.0, s)} 0 ${500 + ticks(0.3, s)} ${9000 + ticks(0.5, s)} 0 0 ${300 + ticks(0.2, s)} 0`);
    for (const [c, cores] of [['a', 0.4], ['b', 0.3], ['c', 0.2], ['d', 0.05], ['e', 0.05]]) lines.push(`${at} cg ${ID(c)} ${ns(cores, s)}`);
    lines.push(`${at} proc dockerd 42 ${100 + ticks(0.1, s)}`, `${at} haproxy ${ID('a')} 7 ${ticks(0.3, s)}`, `${at} haproxy ${ID('a')} 8 ${ticks(0.1, s)}`);
    if (s % 10 === 0) {
      lines.push(`${at} other process_api 1 ${50 + ticks(0.2, s)}`, `${at} other kworker/1:2-events 30 ${ticks(0.03, s)}`,
        `${at} other kworker/0:1 31 ${7 + ticks(0.02, s)}`, `${at} other bash 77 3`);
    }
  }
  return lines.join('\n');
}
const CONTAINERS = [
  `${ID('a')}|lab-haproxy-1|haproxy|`, `${ID('b')}|lab-backend-slow-1|backend-slow|`, `${ID('c')}|lab-holder-1|holder|`,
  `${ID('d')}|quirky_name||host`, `${ID('e')}|lab-prometheus-1|prometheus|`,
].join('\n');
const SERVICES = { haproxy: new Set(['haproxy']), backends: new Set(['backend-slow']), load: new Set(['holder']) };

test('host sampler lines: the machine, each container, each daemon and HAProxy process', () => {
  const h = parseHostSampler(sampler());
  assert.equal(h.stat.length, 11);
  assert.equal(h.cg.size, 5);
  assert.equal(h.proc.get('42').comm, 'dockerd');
  assert.equal(h.haproxy.size, 2);
  assert.equal(h.otherEveryMs, 10000);
  assert.deepEqual([...h.other.values()].map((o) => [o.comm, o.rs.length]), [['process_api', 2], ['kworker/1:2-events', 2], ['kworker/0:1', 2], ['bash', 2]]);
  assert.equal(parseHostSampler(''), null, 'nothing sampled');
  assert.equal(parseContainers(CONTAINERS).get(ID('d')).probe, 'host');
});

test('cores over a window: each part, the rest as what no container or daemon took, the kernel beside', () => {
  const c = coresOver(parseHostSampler(sampler()), parseContainers(CONTAINERS), SERVICES, [1_000_000, 1_010_000]);
  const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-6, `${what}: expected ${b}, found ${a}`);
  near(c.machine, 1.5, 'machine');
  near(c.parts.haproxy, 0.4, 'HAProxy');
  near(c.parts.backends, 0.3, 'backends');
  near(c.parts.load, 0.2, 'holders');
  near(c.parts.probes, 0.05, 'probes');
  near(c.parts.services, 0.05, 'Prometheus');
  near(c.parts.docker, 0.1, 'dockerd');
  near(c.parts.rest, 0.4, 'the rest');
  near(c.kernel.system, 0.3, 'system');
  near(c.kernel.softirq, 0.2, 'softirq');
  assert.deepEqual(c.processes.map((x) => Math.round(x * 10) / 10), [0.3, 0.1], 'each HAProxy process');
  assert.deepEqual(c.others.map(([n, x]) => [n, Math.round(x * 1000) / 1000]), [['process_api', 0.2], ['kworker', 0.05]],
    'outside the containers by name, kernel threads together, the idle left out');
  assert.equal(c.all_known, true);
  assert.equal(coresOver(parseHostSampler(sampler()), new Map(), SERVICES, [1_000_000, 1_010_000]).all_known, false, 'an unnamed container is said');
});

test('cores over a window: a process that lived through one second of it counts its CPU over the whole window', () => {
  // runc's init for a docker exec: 0.5 core for 1 s of a 10 s window is 0.05 cores of it, not 0.5.
  const short = ['1004000 proc runc:[2:INIT] 99 0', '1005000 proc runc:[2:INIT] 99 50'];
  const c = coresOver(parseHostSampler(`${sampler()}\n${short.join('\n')}`), parseContainers(CONTAINERS), SERVICES, [1_000_000, 1_010_000]);
  assert.ok(Math.abs(c.parts.docker - 0.15) < 1e-6, `Docker: expected 0.1 (dockerd) + 0.05 (runc's second), found ${c.parts.docker}`);
  assert.ok(Math.abs(c.parts.rest - 0.35) < 1e-6, `the rest: expected 0.35, found ${c.parts.rest}`);
});

test('holder windows: the ramp (opened), the hold (held), the ramp-down (answered)', () => {
  const samples = [
    [0, 0, 0], [1, 1000, 0], [2, 2000, 0], [3, 2000, 0], [4, 2000, 0], [5, 2000, 0], [6, 2000, 500], [7, 2000, 1500], [8, 2000, 2000],
  ].map(([t, opened, ok]) => ({ t, open: opened - ok, opened_total: opened, confirmed_total: opened, ok_total: ok, failed_total: 0 }));
  const merged = { planned: 2000, started_at_ms: 100_000, samples, hold_window: { from_t: 3, to_t: 5, min_open: 2000 }, ramp_up: 2, ramp_down: 2 };
  const w = holderWindows(merged);
  assert.deepEqual(w.ramp, { window: [100_000, 102_000], connections: 2000 });
  assert.deepEqual(w.hold, { window: [103_000, 105_000], connections: 2000 });
  assert.deepEqual(w.drain, { window: [105_000, 108_000], connections: 2000 });
  // The ramp's 2 s fall in the 10 s sampled: µs per connection opened = cores × 1e6 ÷ (connections/s).
  const b = breakdownOf({ host: parseHostSampler(sampler({ t0: 99_000, seconds: 10 })), containers: parseContainers(CONTAINERS), services: SERVICES, merged });
  assert.equal(Math.round(b.ramp.rate), 1000);
  assert.equal(Math.round(b.ramp.us.haproxy), 400, 'HAProxy 0.4 cores at 1,000/s: 400 µs per connection');
  assert.equal(Math.round(b.hold.us.haproxy), 200, 'held: 0.4 cores ÷ 2,000 held = 200 µs per connection per second');
  assert.equal(b.ramp.asked_rate, 1000);
  assert.equal(Math.round(b.drain.asked_rate), 1000, 'a summary without held_s: RAMP_DOWN 2 s for 2,000');
  assert.equal(breakdownOf({ host: null, containers: new Map(), services: SERVICES, merged }), null);
  // Each connection held as long: the ramp-down is asked at the ramp's pace
  // (1,000/s), not at RAMP_DOWN's (2,000 in 0.5 s); and never faster than RAMP_DOWN.
  const held = (rampDown) => breakdownOf({ host: parseHostSampler(sampler({ t0: 99_000, seconds: 10 })), containers: parseContainers(CONTAINERS),
    services: SERVICES, merged: { ...merged, ramp_down: rampDown, held_s: 3 } }).drain.asked_rate;
  assert.equal(Math.round(held(0.5)), 1000);
  assert.equal(Math.round(held(4)), 500);
});

test('floors: per connection from the Node pair, per request from HAProxy; missing parts are null', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'floors-'));
  const f = (name, text) => fs.writeFileSync(path.join(dir, 'floors', name), text);
  fs.mkdirSync(path.join(dir, 'floors'));
  assert.equal(readFloors(dir), null, 'nothing measured');
  f('node-client.json', '{"role":"client","connected":10000,"failed":0,"seconds":2,"user_us":800000,"system_us":200000}\n');
  f('node-server.json', 'conn-floor: listening on 9000\n{"role":"server","accepted":10000,"user_us":300000,"system_us":100000}\n');
  f('haproxy-h2load.txt', 'finished in 2.00s, 10000.00 req/s, 1MB/s\nrequests: 20000 total, 20000 started, 20000 done, 20000 succeeded, 0 failed, 0 errored, 0 timeout\n');
  f('haproxy-cpu-before.txt', `${ID('f')} 1000000000 ns\n${ID('f')} 0 periods\n`);
  f('haproxy-cpu-after.txt', `${ID('f')} 1500000000 ns\n`);
  f('haproxy-container.txt', 'image=haproxy:3.2 cpuset=1 requests=20000\n');
  const floors = readFloors(dir);
  assert.equal(floors.node.connect_us, 100);
  assert.equal(floors.node.accept_us, 40);
  assert.equal(floors.node.rate, 5000);
  assert.equal(floors.haproxy.close_us, 25);
  assert.equal(floors.haproxy.image, 'haproxy:3.2');
  assert.equal(floors.haproxy.rate, 10000);
  assert.equal(floors.haproxy.busy_pct, 25, '0.5 s of CPU over 2 s');
  f('haproxy-h2load.txt', 'requests: 20000 total, 20000 started, 20000 done, 0 succeeded, 20000 failed\n');
  assert.equal(readFloors(dir).haproxy, null, 'no request succeeded: no HAProxy floor');
});

test('breakdown reading: a table of µs per connection against the floors; HAProxy within N× its floor judged on a long enough last ramp', async () => {
  const { readingsOf } = await import('../report/readings.mjs');
  const parts = (v) => ({ haproxy: v, backends: v, load: v, probes: 0, services: 0, docker: 0, rest: 0 });
  const window = (us, { seconds = 20, connections = 40000, rate = 2000 } = {}) => ({
    connections, seconds, rate, asked_rate: 5000, machine_cores: 1.9, cores: parts((us * rate) / 1e6), us: parts(us), machine_us: 3 * us,
    kernel_cores: { system: 0.5, softirq: 0.2 }, haproxy_processes: 4, haproxy_process_cores: { min: 0.1, max: 0.12, sum: 0.44 }, all_known: true,
    others: [['process_api', 0.21], ['kworker', 0.05]], others_every_s: 10,
  });
  const row = (id, us, ramp) => ({
    id, label: id,
    measured: { cpu_breakdown: { ramp: window(us, ramp), hold: { ...window(1, { connections: 40000, rate: 40000 }), rate: null }, drain: window(us) }, saturation: { saturated: ['the machine\'s cores'] } },
  });
  const run = { connectionFloors: { haproxy: { close_us: 50, requests: 20000, image: 'haproxy:3.2', rate: 7000, busy_pct: 50 }, node: { connect_us: 100, accept_us: 40, connections: 10000, rate: 7000, connect_system_us: 60, accept_system_us: 10 } } };
  const plan = { readings: [{ kind: 'breakdown', haproxy_within: 5 }] };
  const [pass] = readingsOf(plan, [row('level-a', 300), row('level-b', 200)], run);
  assert.equal(pass.ok, true);
  assert.equal(pass.table.length, 1 + 7 + 5, 'a header, the 7 parts, 5 more lines');
  assert.match(pass.table[1].join(' | '), /^HAProxy \(floor 50\.0\) \| 300 \(6\.0×\) \| 1\.0 \| 300 \| 200 \(4\.0×\)/);
  assert.ok(pass.lines.some((l) => /HAProxy per connection opened at level-b: 200 µs, 4\.0× its floor \(want ≤ 5×\): pass/.test(l)), pass.lines.join('\n'));
  assert.ok(pass.lines.some((l) => /level-b: ramp 2000 connections\/s, set by the machine's cores \(saturated\)/.test(l)));
  assert.ok(pass.lines.includes("level-b: outside the lab's containers, the processes that used the most (cores; read every 10 s): ramp process_api 0.210, kworker 0.050; hold process_api 0.210, kworker 0.050; ramp-down process_api 0.210, kworker 0.050"), pass.lines.join('\n'));
  const [fail] = readingsOf(plan, [row('level-a', 300), row('level-b', 300)], run);
  assert.equal(fail.ok, false, '6× its floor');
  const [short] = readingsOf(plan, [row('level-a', 300), row('level-b', 300, { seconds: 3 })], run);
  assert.notEqual(short.ok, false, 'a 3 s ramp is not judged');
  assert.ok(short.lines.some((l) => /not judged, the last level's ramp lasted 3\.0 s/.test(l)));
  const [unfloored] = readingsOf(plan, [row('level-a', 300), row('level-b', 200)], {});
  assert.equal(unfloored.ok, false, 'no floor measured: not passed');
  // Closing as fast as opening (drain_at_least): the last level's ramp-down against its ramp's 2,000/s.
  const drained = (rate, seconds = 20) => {
    const r = row('level-b', 200);
    r.measured.cpu_breakdown.drain = window(200, { rate, seconds });
    return r;
  };
  const judged = { readings: [{ kind: 'breakdown', haproxy_within: 5, drain_at_least: 0.9 }] };
  const [kept] = readingsOf(judged, [row('level-a', 300), drained(1900)], run);
  assert.equal(kept.ok, true);
  assert.ok(kept.lines.includes('Closing as fast as opening at level-b: 1900 closes/s, 95% of the 2000 opens/s of its ramp (want ≥ 90%): pass'), kept.lines.join('\n'));
  const [slow] = readingsOf(judged, [row('level-a', 300), drained(1500)], run);
  assert.equal(slow.ok, false, 'closing at 75% of the opening pace');
  const [brief] = readingsOf(judged, [row('level-a', 300), drained(1500, 3)], run);
  assert.notEqual(brief.ok, false, 'a 3 s ramp-down is not judged');
  assert.ok(brief.lines.some((l) => /^Closing as fast as opening: not judged, the last level's ramp-down lasted 3\.0 s/.test(l)), brief.lines.join('\n'));
  assert.ok(!pass.lines.some((l) => /Closing as fast/.test(l)), 'without drain_at_least: no such line');
});
