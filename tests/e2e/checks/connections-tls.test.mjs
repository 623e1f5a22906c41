// connections --quick --tls (E2E_RUN): every verdict passed (the scenario's:
// each level held whole, no failure); each level held plain, then over TLS
// right after it at the same level; HAProxy counted a full TLS handshake per
// held TLS connection; bytes per connection with and without TLS side by side.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });
const tls = (r) => r.id.endsWith('-tls');

test('each level plain, then over TLS at the same level', () => {
  // The connections each step held: its x is the level, "N TLS" on the TLS step's.
  const pairs = s.rows.map((r, i) => (i % 2 ? `${r.id} ${r.measured?.connections}` : `${r.id}-tls ${r.measured?.connections}`));
  assert.ok(s.rows.length >= 2 && s.rows.length % 2 === 0, `steps: expected plain and TLS pairs, found ${s.rows.map((r) => r.id)}`);
  assert.deepEqual(pairs.filter((_, i) => i % 2), pairs.filter((_, i) => !(i % 2)), 'each TLS step (id and connections) after its plain one');
});

test('HAProxy did a full TLS handshake per held TLS connection, none for plain ones', () => {
  const found = Object.fromEntries(s.rows.map((r) => [r.id, r.measured?.handshakes_full]));
  const expected = Object.fromEntries(s.rows.map((r) => [r.id, tls(r) ? r.measured?.client_held : 0]));
  assert.deepEqual(found, expected, 'full handshakes per step: the TLS steps\' held connections, 0 for the plain ones');
});

test('bytes per connection with and without TLS, side by side', () => {
  const found = perStep(s, 'bytes_haproxy');
  assert.ok(Object.values(found).every(Number.isFinite), `HAProxy bytes per connection per step: ${JSON.stringify(found)}`);
  assert.ok(s.readings.some((l) => l.startsWith('with and without TLS — ')), `readings: ${JSON.stringify(s.readings)}`);
});
