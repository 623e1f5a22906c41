// connections --quick --processes 2 (E2E_RUN): HAProxy as two processes on
// the same ports. Every verdict passed (the scenario's: each level held with
// no failure, HAProxy's connections summed over the processes); both
// processes took connections.
import assert from 'node:assert/strict';
import test from 'node:test';
import { summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('both processes took a share at every level (the kernel spreads them)', () => {
  for (const row of s.rows) {
    const processes = row.measured.instances;
    assert.ok(processes, `${row.id}: no per-process figures in summary.json`);
    assert.deepEqual(Object.keys(processes), ['haproxy', 'haproxy-p2'], `${row.id}: the processes`);
    for (const [name, p] of Object.entries(processes)) {
      assert.ok(p.haproxy_conns_peak > 0 && p.haproxy_conns_peak < row.measured.client_held,
        `${row.id}: ${name} held ${p.haproxy_conns_peak} of ${row.measured.client_held}: expected a share, more than 0 and less than all`);
    }
  }
});
