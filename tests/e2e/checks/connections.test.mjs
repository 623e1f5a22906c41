// connections --quick --replicas 2 (E2E_RUN): every verdict passed (the
// scenario's: each level held by the clients and by HAProxy through the
// hold, no failure); HAProxy's bytes per connection measured (small levels
// are within the memory noise, so only that a number came) and where a
// connection's CPU goes.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

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
