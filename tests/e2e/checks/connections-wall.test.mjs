// connections --quick --processes 1 --target 5300 with HAProxy's open files at
// 10200 (E2E_RUN): the lesson's wall. The two levels under it are held with no
// failure; at the one past it HAProxy stops at maxconn 5050 (what 10200 files
// allow), reports maxconn reached, and the rest of the clients' connections
// wait in its accept queue, though the clients count them as open.
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });
const [low, mid, past] = s.rows;

test('the preflight planned the run past the wall of one process, open files binding', () => {
  assert.equal(s.limits?.wall, 5000, `the wall (connections one process plans for) in summary.json: expected 5000, found ${s.limits?.wall}`);
  assert.equal(s.limits.binding, 'HAProxy open files (nofile)', 'the limit that binds');
  assert.deepEqual(s.rows.map((r) => r.model?.wall ?? null), [null, null, 5050], 'the wall per level (maxconn × processes)');
});

test('under the wall: every connection held, none failed', () => {
  assert.deepEqual(column(s, 'client_held').slice(0, 2), [530, 2650], 'connections held at the two lower levels');
  assert.deepEqual([low.measured.failed, mid.measured.failed], [0, 0], `failed per level (${JSON.stringify(perStep(s, 'failed'))})`);
});

test('past the wall: HAProxy stops at maxconn, the rest wait in its accept queue', () => {
  const m = past.measured;
  assert.ok(Math.abs(m.haproxy_conns_peak - 5050) <= 50, `HAProxy's connections at the wall: expected 5050 ±50, found ${m.haproxy_conns_peak}`);
  assert.ok(m.maxconn_reached > 0, `maxconn reached: expected more than 0, found ${m.maxconn_reached}`);
  // At least most of the 250 HAProxy could not take; more while the ramp
  // outran its accepts (804 once, with the 2 cores busy: a moment, not the wall).
  assert.ok(m.accept_queue_max >= 150,
    `longest accept queue: expected at least most of the 250 HAProxy could not take (150 or more), found ${m.accept_queue_max}`);
  assert.ok(m.client_held > m.haproxy_conns_peak, `the clients count their queued connections as open: held ${m.client_held}, HAProxy ${m.haproxy_conns_peak}`);
});
