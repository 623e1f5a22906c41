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
