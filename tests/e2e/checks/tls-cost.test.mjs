// tls-cost --quick (E2E_RUN): every verdict passed (the scenario's: no
// failure, the cost order plain keep-alive < plain close < TLS resumed, full
// ECDSA < full RSA in HAProxy ÷ (client + backends) CPU, no full handshake
// on plain keep-alive, none resumed where resumption is off, resumed above
// 95% where it is on). Beyond them: the orders the scenario only informs
// about where the gap is whole handshakes, the handshakes HAProxy counted
// against the requests, the client's and the backends' CPU measured, the
// sign floor reached, the SSL library named.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { perStep, runDir, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });
const row = (id) => s.rows.find((r) => r.id === id)?.measured ?? {};
const us = perStep(s, 'haproxy_us_per_req');
const perRest = perStep(s, 'haproxy_over_client_backends');

// TLS keep-alive above plain keep-alive and full ECDSA above resumed only
// inform (the scenario's ~>): at a low rate those gaps are within a 6 s
// step's noise. A resumed handshake per request above TLS keep-alive, and a
// full RSA one above a resumed one, are whole handshakes and signatures. The
// second pair, a connection per request each, in HAProxy ÷ (client +
// backends) CPU: the machine's speed between the steps cancels out.
test('HAProxy\'s CPU per request: TLS keep-alive < resumed (µs) < full RSA (÷ client + backends)', () => {
  assert.ok(us['tls-resumed'] > us['tls-keepalive'], `tls-resumed above tls-keepalive in µs per request: ${JSON.stringify(us)}`);
  assert.ok(perRest['tls-full-rsa'] > perRest['tls-resumed'], `tls-full-rsa above tls-resumed in HAProxy ÷ (client + backends) CPU: ${JSON.stringify(perRest)}`);
});

test('the handshakes HAProxy counted: none in plain steps, one full per request where resumption is off, one per connection kept alive', () => {
  assert.equal(row('plain-keepalive').handshakes_resumed, 0, 'plain-keepalive: resumed handshakes');
  assert.deepEqual([row('plain-close').handshakes_full, row('plain-close').handshakes_resumed], [0, 0], 'plain-close: full, resumed');
  for (const id of ['tls-full-rsa', 'tls-full-ecdsa']) {
    assert.equal(row(id).handshakes_full, row(id).haproxy_requests, `${id}: full handshakes = requests HAProxy counted (a connection per request)`);
  }
  assert.ok(row('tls-keepalive').handshakes_full <= 20, `tls-keepalive: a handshake per kept-alive connection (≤ 20), found ${row('tls-keepalive').handshakes_full}`);
});

test('the client\'s and the backends\' own CPU per request are measured beside HAProxy\'s', () => {
  for (const metric of ['loadgen_us_per_req', 'backend_us_per_req']) {
    const each = perStep(s, metric);
    assert.ok(Object.keys(each).length === s.rows.length && Object.values(each).every((v) => v > 0), `${metric} per step: ${JSON.stringify(each)}`);
  }
});

// The report reads the sign times the runner measured (tls-floor.env): a
// floor line for each, and each full handshake costs HAProxy at least one
// signature.
test('the sign floor: read on this machine, each full handshake costs HAProxy more than its signature', () => {
  const lines = s.readings.filter((l) => / floor: /.test(l));
  assert.equal(lines.length, 2, `sign floor readings: expected 2 (RSA, ECDSA), found ${JSON.stringify(s.readings)}`);
  for (const l of lines) assert.match(l, / ≥ one /, l);
});

test('versions.env names the SSL library HAProxy runs on', () => {
  const versions = readFileSync(join(runDir(), 'versions.env'), 'utf8');
  assert.match(versions, /^ssl_library=\S+/m, `versions.env: ${versions}`);
});
