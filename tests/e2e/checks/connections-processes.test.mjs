// connections --quick --processes 2 (E2E_RUN): HAProxy as two processes on
// the same ports. Every level held with no failure; both processes took
// connections; HAProxy's connections, summed over the processes, equal what
// the clients held.
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('connections held per level: 60, 300, 600, none failed', () => {
  assert.deepEqual(column(s, 'client_held'), [60, 300, 600], 'connections the holders held per level');
  assert.deepEqual(column(s, 'failed'), [0, 0, 0], `failed connections per level (${JSON.stringify(perStep(s, 'failed'))})`);
});

test("HAProxy's connections, both processes together, are the clients'", () => {
  assert.deepEqual(column(s, 'haproxy_conns_peak'), column(s, 'client_held'), 'HAProxy connections (peak, summed over processes) against the clients\'');
});

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
