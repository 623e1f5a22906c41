// HAProxy's requests/s against its cores (scenarios/cores.json): the steps a
// machine fits, with a faked core count, and the scaling reading.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { UsageError, buildPlan, loadScenario } from '../plan/scenarios.mjs';
import { readingsOf } from '../report/readings.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('cores: the steps this machine fits', () => {
  const s = loadScenario(ROOT, 'cores');
  const plan = (machineCores) => buildPlan(s, 'cores', { quick: false, machineCores });
  test('on 8 cores: HAProxy on 1 to 4 cores, the load tools on as many others, one line on what is left out', () => {
    const p = plan(8);
    assert.deepEqual(p.steps.map((t) => t.cores), [1, 2, 3, 4]);
    assert.deepEqual(p.steps.map((t) => [t.compose_env.HAPROXY_CPUSET, t.compose_env.LAB_CPUSET, t.haproxy.global.nbthread, t.load.env.THREADS]),
      [['7', '0-6', '1', '1'], ['6-7', '0-5', '2', '2'], ['5-7', '0-4', '3', '3'], ['4-7', '0-3', '4', '4']]);
    assert.match(p.notes.at(-1), /^This machine runs HAProxy on 1, 2, 3, 4 cores only: .*the steps on 6, 8 cores would need up to 16 cores, and Docker sees 8/);
  });
  test('on 2 cores: HAProxy on 1 core, and the line says why', () => {
    const p = plan(2);
    assert.deepEqual(p.steps.map((t) => t.id), ['cores-1']);
    assert.match(p.notes.at(-1), /^This machine runs HAProxy on 1 core only: the load tools get as many cores as HAProxy .* Docker sees 2 \(docker info's NCPU\)\.$/);
  });
  test('on 1 core: refused in one line, nothing planned', () => {
    assert.throws(() => plan(1), (err) => err instanceof UsageError && /needs at least 2 here: .* Docker sees 1 .*bigger machine/.test(err.message));
  });
  test('a scenario without client_cores_per_core plans every step', () => {
    const ceiling = loadScenario(ROOT, 'ceiling');
    assert.equal(buildPlan(ceiling, 'ceiling', { quick: false, machineCores: 2 }).steps.length, ceiling.steps.length);
  });
});

describe('cores: requests/s against cores', () => {
  const row = (cores, rate, core, rest, saturated) => ({ id: `cores-${cores}`, label: `${cores} cores`, curve: 'plain', cores, x: cores,
    measured: { haproxy_req_rate: rate, haproxy_core_busy_pct: core, rest_core_busy_pct: rest,
      saturation: { haproxy: saturated.length > 0, saturated, text: '' } } });
  const plan = { curves: { plain: 'plain' }, readings: [{ kind: 'core_scaling', curve: 'plain', article: '1 vCPU 29,332/s' }] };
  test('one line per core count, in order, with its scaling against 1 core', () => {
    const [r] = readingsOf(plan, [row(2, 50000, 95, 80, ['HAProxy\'s cores']), row(1, 30000, 96, 85, ['HAProxy\'s core'])]);
    assert.deepEqual(r.lines, [
      'HAProxy on 1 core: 30,000 requests/s, 30,000 per core; its cores 96% busy, the others 85%; saturated: HAProxy\'s core',
      'HAProxy on 2 cores: 50,000 requests/s, 25,000 per core; its cores 95% busy, the others 80%; saturated: HAProxy\'s cores; 1.67× 1 core\'s (83% of linear)',
      'article: 1 vCPU 29,332/s',
    ]);
  });
  test('one core count only: says the notes tell why', () => {
    const [r] = readingsOf(plan, [row(1, 30000, 96, 85, [])]);
    assert.equal(r.lines[1], 'one core count in this run: the notes say why');
  });
});
