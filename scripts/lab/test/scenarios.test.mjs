import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfig } from '../render.mjs';
import { UsageError, buildPlan, listScenarios, loadScenario, parseDuration, parseOptions } from '../scenarios.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const baseline = readFileSync(`${root}/haproxy/haproxy.cfg`, 'utf8');

test('every shipped scenario loads, plans and renders its configs', () => {
  const names = listScenarios(root);
  assert.ok(names.includes('maxconn-sweep'));
  for (const name of names) {
    const s = loadScenario(root, name);
    for (const quick of [false, true]) {
      const plan = buildPlan(s, name, { quick });
      assert.ok(plan.steps.length >= s.steps.length, name);
      for (const step of plan.steps) {
        const cfg = renderConfig(baseline, step.haproxy, `${name}/${step.id}`);
        assert.match(cfg, new RegExp(`description ${name}/${step.id}`));
        assert.ok(step.load.seconds > 0);
        for (const v of Object.values(step.load.env)) assert.doesNotMatch(v, /\s/);
      }
    }
  }
});

test('maxconn-sweep is the article: 100 clients, 30 s, 5 s timeout, maxconn 20..100', () => {
  const plan = buildPlan(loadScenario(root, 'maxconn-sweep'), 'maxconn-sweep', { quick: false });
  assert.deepEqual(plan.steps.map((s) => s.haproxy.global.maxconn), ['20', '40', '60', '80', '100']);
  assert.deepEqual(plan.steps.map((s) => s.published.successful), [180, 360, 540, 720, 900]);
  const env = plan.steps[0].load.env;
  assert.equal(env.VUS, '100');
  assert.equal(env.DURATION, '30s');
  assert.equal(env.TIMEOUT, '5s');
  assert.equal(env.LOAD_PATH, '/slow');
  assert.equal(plan.steps[0].expect.successful, '±3%');
});

test('--quick and --duration make "within N% of published" informational', () => {
  const s = loadScenario(root, 'maxconn-sweep');
  const quick = buildPlan(s, 'maxconn-sweep', { quick: true });
  assert.equal(quick.steps[0].load.env.DURATION, '9s');
  assert.equal(quick.steps[0].expect.successful, '~±3%');
  assert.equal(quick.steps[0].expect.failed, '>0');
  const longer = buildPlan(s, 'maxconn-sweep', { quick: false, duration: 60 });
  assert.equal(longer.steps[0].load.env.DURATION, '60s');
  assert.equal(longer.steps[0].load.seconds, 60);
});

test('repeats are interleaved and get their own folders', () => {
  const plan = buildPlan(loadScenario(root, 'fullconn'), 'fullconn', { quick: false, repeat: 2 });
  const ids = plan.steps.map((s) => `${s.id}#${s.run}`);
  assert.equal(ids[0], 'fast-fullconn-20#1');
  assert.equal(ids[1], 'fast-fullconn-1#1');
  assert.equal(ids[6], 'fast-fullconn-20#2');
  assert.equal(new Set(plan.steps.map((s) => s.dir)).size, plan.steps.length);
});

test('options: good values parse, bad ones are one clear UsageError', () => {
  assert.deepEqual(parseOptions(['--quick', '--duration', '10', '--replicas=2']), { quick: true, duration: 10, replicas: 2 });
  assert.throws(() => parseOptions(['--durations', '3']), UsageError);
  assert.throws(() => parseOptions(['--duration', 'abc']), /--duration needs a whole number from 1 to 3600 \(got "abc"\)/);
  assert.throws(() => parseOptions(['--replicas', '0']), /--replicas needs a whole number from 1 to 32/);
  assert.throws(() => parseOptions(['--repeat']), /--repeat needs a whole number/);
  assert.throws(() => parseOptions(['--duration', '-5']), /got "-5"/);
});

test('unknown scenario names the known ones', () => {
  assert.throws(() => loadScenario(root, 'maxconn'), /unknown scenario "maxconn": try one of .*maxconn-sweep/);
  assert.throws(() => loadScenario(root, '../etc/passwd'), UsageError);
});

test('durations', () => {
  assert.equal(parseDuration('30s'), 30);
  assert.equal(parseDuration('2m'), 120);
  assert.equal(parseDuration('1m30s'), 90);
  assert.throws(() => parseDuration('soon'), /bad duration/);
});
