// connections --quick --tls (E2E_RUN): each level held plain, then over TLS
// right after it; HAProxy counted a full TLS handshake per held TLS
// connection; bytes per connection with and without TLS side by side.
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('each level plain, then over TLS', () => {
  assert.deepEqual(s.rows.map((r) => r.id), ['level-10pct', 'level-10pct-tls', 'level-50pct', 'level-50pct-tls', 'level-100pct', 'level-100pct-tls']);
  assert.deepEqual(column(s, 'client_held'), [60, 60, 300, 300, 600, 600], 'connections held per step');
});

test('HAProxy did a TLS handshake per held TLS connection, none for plain ones', () => {
  assert.deepEqual(column(s, 'handshakes_full'), [0, 60, 0, 300, 0, 600], `full handshakes per step: ${JSON.stringify(perStep(s, 'handshakes_full'))}`);
});

test('bytes per connection with and without TLS, side by side', () => {
  const found = perStep(s, 'bytes_haproxy');
  assert.ok(Object.values(found).every(Number.isFinite), `HAProxy bytes per connection per step: ${JSON.stringify(found)}`);
  assert.ok(s.readings.some((l) => l.startsWith('with and without TLS — ')), `readings: ${JSON.stringify(s.readings)}`);
});
