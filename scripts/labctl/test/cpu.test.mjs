// CPU per container from the cgroup readings the runner keeps in a step
// folder (evidence/cpu.mjs), and what the report makes of it: HAProxy's µs
// per request, its idle rate taken out.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCpuReadings, stepCpu } from '../evidence/cpu.mjs';
import { isServiceContainer } from '../core/topology.mjs';

const lines = (...rows) => rows.map((r) => r.join(' ')).join('\n');

describe('cgroup CPU readings', () => {
  test('"AT_MS NAME VALUE UNIT" lines, ns (cgroup v1) and us (v2), others ignored', () => {
    assert.deepEqual(parseCpuReadings(lines([1000, 'p-haproxy-1', 5000, 'ns'], [1000, 'p-vegeta-1', 7, 'us'], ['junk'], [1, 'x', 2, 'ms'])),
      [{ at: 1000, name: 'p-haproxy-1', ns: 5000 }, { at: 1000, name: 'p-vegeta-1', ns: 7000 }]);
    assert.equal(parseCpuReadings(null), null);
  });

  test('before and after: the difference over the time between them, % of one core', () => {
    const cpu = stepCpu({ before: parseCpuReadings('1000 p-haproxy-1 1000000000 ns'), after: parseCpuReadings('3000 p-haproxy-1 1500000000 ns') }, 1000);
    assert.deepEqual(cpu['p-haproxy-1'], { ns: 5e8, seconds: 2, percent: 25, idle_ns_per_s: null, net_ns: null });
  });

  test('an idle reading before: its rate over the step is taken out (net_ns)', () => {
    const cpu = stepCpu({
      idle: parseCpuReadings('0 p-haproxy-1 0 ns'),
      before: parseCpuReadings('5000 p-haproxy-1 50000000 ns'), // 10 ms/s idle
      after: parseCpuReadings('15000 p-haproxy-1 350000000 ns'),
    }, 5000);
    assert.equal(cpu['p-haproxy-1'].idle_ns_per_s, 1e7);
    assert.equal(cpu['p-haproxy-1'].net_ns, 3e8 - 1e8, 'used 300 ms in 10 s, 100 ms of them idle');
  });

  test('a container born during the step (a load tool): its last sample, since the step started', () => {
    const cpu = stepCpu({ before: [], after: [], samples: parseCpuReadings('2000 p-vegeta-1 100 ns\n4000 p-vegeta-1 400000000 ns') }, 0);
    assert.deepEqual([cpu['p-vegeta-1'].ns, cpu['p-vegeta-1'].seconds, cpu['p-vegeta-1'].percent], [4e8, 4, 10]);
  });

  test('nothing read: null', () => {
    assert.equal(stepCpu({}, 0), null);
  });

  test('compose names: a service\'s containers, not a project that contains its name', () => {
    assert.ok(isServiceContainer('haproxy-lab-haproxy-1', ['haproxy']));
    assert.ok(!isServiceContainer('haproxy-lab-backend-fast-1', ['haproxy']), 'the project name is not the service');
    assert.ok(!isServiceContainer('haproxy-lab-haproxy-exporter-1', ['haproxy']));
    assert.ok(isServiceContainer('haproxy-lab-test-backend-slow-12', ['backend-slow']));
  });
});
