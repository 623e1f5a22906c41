// connections --quick --replicas 2 (E2E_RUN): every level held with no
// failure, HAProxy's bytes per connection measured (small levels are within
// the memory noise, so only that a number came).
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('connections held per level: 60, 300, 600', () => {
  assert.deepEqual(column(s, 'client_held'), [60, 300, 600], 'connections the holders held per level');
});

test('HAProxy held every level whole through the hold, not only at its peak', () => {
  assert.deepEqual(column(s, 'haproxy_held_min'), [60, 300, 600], `the fewest connections HAProxy held in a sample during the hold, per level (${JSON.stringify(perStep(s, 'haproxy_held_min'))})`);
});

test('no failure at any level', () => {
  assert.deepEqual(column(s, 'failed'), s.rows.map(() => 0), `failed connections per level (${JSON.stringify(perStep(s, 'failed'))})`);
});

test("HAProxy's bytes per connection measured at every level", () => {
  const found = perStep(s, 'bytes_haproxy');
  assert.ok(Object.values(found).every(Number.isFinite), `HAProxy bytes per connection per level: expected a number for each, found ${JSON.stringify(found)}`);
});

test('where a connection\'s CPU goes: every level has its ramp, hold and ramp-down split, the floors were measured', () => {
  for (const row of s.rows) {
    const b = row.measured.cpu_breakdown;
    assert.ok(b?.hold, `${row.id}: a hold window in the breakdown (host-sampler.txt), found ${JSON.stringify(b && Object.keys(b))}`);
    const parts = Object.keys(b.hold.cores);
    assert.deepEqual(parts, ['haproxy', 'backends', 'load', 'probes', 'services', 'docker', 'rest'], `${row.id}: the parts of the machine's CPU`);
    assert.ok(b.hold.cores.haproxy > 0 && b.hold.machine_cores >= b.hold.cores.haproxy, `${row.id}: HAProxy's cores in the hold within the machine's: ${JSON.stringify(b.hold)}`);
    assert.ok(b.hold.all_known, `${row.id}: every container sampled was named (containers.txt)`);
  }
  const f = s.floors;
  assert.ok(f?.haproxy?.close_us > 0 && f.haproxy.requests === 20000, `HAProxy's floor: ${JSON.stringify(f?.haproxy)}`);
  assert.ok(f?.node?.connect_us > 0 && f.node.accept_us > 0 && f.node.connections === 10000, `the Node pair's floor: ${JSON.stringify(f?.node)}`);
});
