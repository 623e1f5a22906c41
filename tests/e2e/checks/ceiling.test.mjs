// ceiling --quick (E2E_RUN): HAProxy's CPU bounded to the scenario's
// allowance and read back as such; at each curve's highest rate HAProxy is
// what saturated (not the load tool, not the machine), at its first nothing;
// each curve's ceiling reading gives the prediction beside the measurement.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s);

test('every step ran with HAProxy\'s allowance read back from its cgroup', () => {
  const allowances = perStep(s, 'haproxy_allowance');
  assert.ok(Object.values(allowances).every((a) => Math.abs(a - 0.2) < 1e-6), `haproxy_allowance: expected 0.2 on every step, found ${JSON.stringify(allowances)}`);
});

test('each curve\'s highest rate saturated HAProxy, and only HAProxy', () => {
  const curves = [...new Set(s.rows.map((r) => r.curve))];
  assert.ok(curves.length >= 2, `curves: expected at least 2, found ${JSON.stringify(curves)}`);
  for (const curve of curves) {
    const last = s.rows.filter((r) => r.curve === curve).at(-1);
    const sat = last.measured.saturation;
    assert.ok(sat?.haproxy, `${last.id}: expected HAProxy's ceiling, found saturated ${JSON.stringify(sat?.saturated)} (${sat?.text})`);
    // Its CPU time reads a little under its quota at a ceiling (84% once), its throttling does not.
    const { haproxy_busy_pct: busy, haproxy_throttled_pct: throttled } = last.measured;
    assert.ok(throttled >= 50 || busy >= 85,
      `${last.id}: HAProxy's quota used up in ≥50% of its CFS periods or its busy % ≥85: expected, found ${throttled}% of periods, busy ${busy}%`);
  }
});

test('the first step of each curve is below saturation (the cost it predicts from)', () => {
  for (const curve of new Set(s.rows.map((r) => r.curve))) {
    const first = s.rows.find((r) => r.curve === curve);
    assert.deepEqual(first.measured.saturation.saturated, [], `${first.id}: expected nothing saturated, found ${first.measured.saturation.text}`);
    assert.ok(Number.isFinite(first.measured.haproxy_throttled_pct) && first.measured.haproxy_throttled_pct < 50, `${first.id}: HAProxy's throttling read back and under 50% of its periods: expected, found ${first.measured.haproxy_throttled_pct}`);
  }
});

test('a ceiling reading per curve in the run, with its prediction', () => {
  const lines = s.readings.filter((l) => / HAProxy took in at most /.test(l));
  assert.equal(lines.length, 2, `ceiling lines: expected 2, found ${JSON.stringify(s.readings)}`);
  for (const l of lines) assert.match(l, /predicted 0\.2 cores ÷ [\d.]+ µs per request .*(within|OUTSIDE) ±25%.*; the ceiling is HAProxy's/);
});
