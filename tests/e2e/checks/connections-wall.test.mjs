// connections --quick --processes 1 --target 5300 with HAProxy's open files at
// 10200 (E2E_RUN): the lesson's wall. Every verdict passed (the scenario's:
// the levels under the wall held with no failure; at the one past it HAProxy
// stops at maxconn, the wall 10200 files allow, and reports maxconn reached).
// The preflight planned the run past that wall, and the rest of the clients'
// connections wait in HAProxy's accept queue, though the clients count them
// as open.
import assert from 'node:assert/strict';
import test from 'node:test';
import { summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });
const past = s.rows.at(-1) ?? {};

test('the preflight planned the run past the wall of one process, open files binding', () => {
  assert.equal(s.limits?.wall, 5000, `the wall (connections one process plans for) in summary.json: expected 5000, found ${s.limits?.wall}`);
  assert.equal(s.limits.binding, 'HAProxy open files (nofile)', 'the limit that binds');
  assert.deepEqual(s.rows.map((r) => r.model?.wall ?? null), [null, null, 5050], 'the wall per level (maxconn × processes)');
});

test('past the wall: the connections HAProxy does not take wait in its accept queue, counted open by the clients', () => {
  const m = past.measured ?? {};
  // At least most of the 250 HAProxy could not take; more while the ramp
  // outran its accepts, with the 2 cores busy: a moment, not the wall.
  assert.ok(m.accept_queue_max >= 150,
    `longest accept queue: expected at least most of the 250 HAProxy could not take (150 or more), found ${m.accept_queue_max}`);
  assert.ok(m.client_held > m.haproxy_conns_peak, `the clients count their queued connections as open: held ${m.client_held}, HAProxy ${m.haproxy_conns_peak}`);
});
