// ceiling --quick (E2E_RUN): HAProxy on a core of its own, read back as
// such; its received rate is the offered one where it keeps up; each
// curve's top step names what saturated (HAProxy or the client side), is
// followed by the second method (wrk, over the bridge and over loopback);
// the run carries its reference.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s);
const curves = [...new Set(s.rows.map((r) => r.curve))];
const top = (curve) => s.rows.filter((r) => r.curve === curve).at(-1);

test('every step ran with HAProxy on one core of its own, its core\'s busy time read', () => {
  const allowances = perStep(s, 'haproxy_allowance');
  assert.ok(Object.values(allowances).every((a) => a === 1), `haproxy_allowance: expected 1 (a one-core cpuset) on every step, found ${JSON.stringify(allowances)}`);
  const busy = perStep(s, 'haproxy_core_busy_pct');
  assert.ok(Object.values(busy).every((b) => Number.isFinite(b) && b > 0), `haproxy_core_busy_pct: expected a reading on every step, found ${JSON.stringify(busy)}`);
});

test('at each curve\'s first step, paced well below saturation, HAProxy received the offered rate, within 2%', () => {
  // Its received rate is its own count of requests over the window its cores were read
  // in: a stale or misaligned reading is well off the rate it was offered here.
  for (const curve of curves) {
    const first = s.rows.find((r) => r.curve === curve);
    const offered = Number(first.x);
    const ratio = first.measured.haproxy_req_rate / offered;
    assert.ok(Math.abs(ratio - 1) <= 0.02, `${first.id}: received ${first.measured.haproxy_req_rate}/s of the offered ${offered}/s: expected 1 ± 0.02, found ${ratio}`);
  }
});

test('each curve\'s top step names what saturated, and the capacity line says whose ceiling it was', () => {
  assert.ok(curves.length >= 2, `curves: expected at least 2, found ${JSON.stringify(curves)}`);
  for (const curve of curves) {
    const sat = top(curve).measured.saturation;
    assert.ok(sat?.haproxy || sat?.client, `${top(curve).id}: expected HAProxy or the client side saturated, found ${JSON.stringify(sat?.saturated)} (${sat?.text})`);
  }
  const lines = s.readings.filter((l) => / HAProxy took in at most | one core of client cannot outrun one core of HAProxy here: /.test(l));
  assert.equal(lines.length, curves.length, `capacity lines: expected ${curves.length}, found ${JSON.stringify(s.readings)}`);
});

test('each curve\'s top step is followed by the second method, over the bridge and over loopback', () => {
  for (const curve of curves) {
    const m = top(curve).measured;
    for (const k of ['check_us_per_req', 'check_loopback_us_per_req', 'check_client_us_per_req', 'check_busy_pct']) {
      assert.ok(Number.isFinite(m[k]) && m[k] > 0, `${top(curve).id}: ${k} expected a positive figure, found ${m[k]}`);
    }
  }
});

test('the run\'s reference and each curve\'s cost per core beside it', () => {
  assert.ok(s.readings.some((l) => /^reference: [\d.]+ µs of HAProxy's CPU per plain kept-alive request/.test(l)), JSON.stringify(s.readings));
  assert.equal(s.readings.filter((l) => / per request while the load ran at .*× the reference/.test(l)).length, curves.length, JSON.stringify(s.readings));
});
