// --versus IMAGE: each step again right after it on a second HAProxy image
// (the planner), and the two side by side (the versus reading).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { UsageError, buildPlan, loadScenario, parseOptions } from '../plan/scenarios.mjs';
import { readingsOf } from '../report/readings.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('--versus: the plan', () => {
  test('each step, then its twin on the image, with its own curve', () => {
    const s = loadScenario(ROOT, 'ceiling');
    const plan = buildPlan(s, 'ceiling', { ...parseOptions(['--quick', '--versus', 'haproxy-lab/haproxy:2.6'], s), machineCores: 2 });
    assert.deepEqual(plan.steps.slice(0, 2).map((t) => [t.id, t.curve, t.compose_env.HAPROXY_IMAGE ?? null, t.versus_of ?? null]), [
      ['plain-keepalive-5000', 'plain-keepalive', null, null],
      ['plain-keepalive-5000-versus', 'plain-keepalive-versus', 'haproxy-lab/haproxy:2.6', 'plain-keepalive-5000'],
    ]);
    assert.equal(plan.steps.length, 2 * s.quick.steps.length);
    assert.equal(plan.curves['plain-keepalive-versus'], `${plan.curves['plain-keepalive']}, haproxy-lab/haproxy:2.6`);
    assert.equal(plan.options.versus, 'haproxy-lab/haproxy:2.6');
    assert.deepEqual(plan.readings.at(-1), { kind: 'versus', metric: 'haproxy_us_per_req_load' });
    // The twin keeps its step's cores and its own second method at its curve's top.
    assert.equal(plan.steps[1].compose_env.HAPROXY_CPUSET, '1');
    assert.ok(plan.steps.some((t) => t.curve === 'plain-keepalive-versus' && t.check));
  });
  test('a step without a curve: its x says the image', () => {
    const s = loadScenario(ROOT, 'tls-cost');
    const plan = buildPlan(s, 'tls-cost', { ...parseOptions(['--versus=haproxy:2.8.27'], s) });
    assert.deepEqual(plan.steps.slice(0, 2).map((t) => t.x), ['plain keep-alive', 'plain keep-alive haproxy:2.8.27']);
  });
  test('bad input: one line naming what was expected, nothing planned', () => {
    const s = loadScenario(ROOT, 'tls-cost');
    assert.throws(() => parseOptions(['--versus', 'Not An Image'], s), (e) => e instanceof UsageError && e.message === '--versus needs an image, e.g. haproxy:2.8, or "previous" (got "Not An Image")');
    assert.throws(() => parseOptions(['--versus'], s), /--versus needs an image, e\.g\. haproxy:2\.8, or "previous" \(got ""\)/);
    const conn = loadScenario(ROOT, 'connections');
    assert.throws(() => parseOptions(['--versus', 'haproxy:2.8.27'], conn), /unknown option "--versus"/);
  });
});

describe('--versus: the reading', () => {
  const row = (id, us, build, versusOf = null) => ({ id, label: id, versus_of: versusOf, build,
    measured: { haproxy_us_per_req: us } });
  const a = { image: 'haproxy-lab/haproxy:3.2', haproxy: '3.2.26-1', ssl_library: 'OpenSSL 3.6.5 29 Sep 2026' };
  const b = { image: 'haproxy-lab/haproxy:2.6', haproxy: '2.6.12-1+deb12u2', ssl_library: 'OpenSSL 3.0.17 1 Jul 2025' };
  test('each build named once, then each step with its twin: HAProxy\'s µs per request on both and their ratio', () => {
    const [r] = readingsOf({ readings: [{ kind: 'versus', metric: 'haproxy_us_per_req' }] }, [row('rsa', 1900, a), row('rsa-versus', 5700, b, 'rsa'), row('ka', 25, a), row('ka-versus', 30, b, 'ka')]);
    assert.deepEqual(r.lines, [
      'first: haproxy-lab/haproxy:3.2: HAProxy 3.2.26-1, OpenSSL 3.6.5 29 Sep 2026',
      'second: haproxy-lab/haproxy:2.6: HAProxy 2.6.12-1+deb12u2, OpenSSL 3.0.17 1 Jul 2025',
      'rsa: HAProxy 1900.0 µs per request, 5700.0 µs on the second image: 3.00×',
      'ka: HAProxy 25.0 µs per request, 30.0 µs on the second image: 1.20×',
    ]);
  });
});
