import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderConfig } from '../plan/render.mjs';
import { UsageError, buildPlan, evalModel, listScenarios, loadScenario, parseDuration, parseOptions } from '../plan/scenarios.mjs';
import { sizeLevels } from '../plan/preflight.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const baseline = readFileSync(`${root}/haproxy/haproxy.cfg`, 'utf8');
const limits = {
  haproxy_nofile: 20000, backend_nofile: 20000, holder_nofile: 20000, port_range: [1024, 65535], nr_open: 1048576,
  conntrack_max: 262144, conntrack_count: 0, bridge_tracked: true, mem_available_bytes: 24e9,
};

test('every shipped scenario loads, plans and renders its configs', () => {
  const names = listScenarios(root);
  assert.ok(names.includes('maxconn-sweep'));
  for (const name of names) {
    const s = loadScenario(root, name);
    for (const quick of [false, true]) {
      const sizes = s.connections ? sizeLevels(1000, s.steps.map((t) => t.fraction), limits, 100) : undefined;
      // A machine every step fits (scenarios with client_cores_per_core leave out what does not).
      const plan = buildPlan(s, name, { quick, sizes, machineCores: 64 });
      assert.ok(plan.steps.length >= (quick && s.quick?.steps ? s.quick.steps.length : s.steps.length), name);
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
  assert.deepEqual(parseOptions(['--quick', '--duration', '10', '--replicas=2']), { quick: true, article: false, tls: false, duration: 10, replicas: 2 });
  assert.throws(() => parseOptions(['--durations', '3']), UsageError);
  assert.throws(() => parseOptions(['--duration', 'abc']), /--duration needs a whole number from 1 to 3600 \(got "abc"\)/);
  assert.throws(() => parseOptions(['--replicas', '0']), /--replicas needs a whole number from 1 to 64/);
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

test('model values: + - * / and ( ) over the step\'s variables', () => {
  assert.equal(evalModel('RATE * BACKEND_SERVER_TIMEOUT_MS / 1000', { RATE: '50', BACKEND_SERVER_TIMEOUT_MS: '2000' }), 100);
  assert.equal(evalModel('(A + B) * -2 - 1', { A: '1', B: '2' }), -7);
  assert.equal(evalModel('T * 2', { T: '1500ms' }), 3);
  assert.throws(() => evalModel('RATE * X', { RATE: '1' }), /X is not a number in this step \(unset\)/);
  assert.throws(() => evalModel('RATE; rm', { RATE: '1' }), /unexpected ";"/);
});

test('--article and --target exist only where the scenario has them', () => {
  const ct = loadScenario(root, 'client-timeout');
  assert.equal(parseOptions(['--article'], ct).article, true);
  assert.throws(() => parseOptions(['--article'], loadScenario(root, 'maxconn-sweep')), /unknown option "--article"/);
  assert.throws(() => parseOptions(['--article', '--quick'], ct), /--quick and --article exclude each other/);
  const article = buildPlan(ct, 'client-timeout', parseOptions(['--article'], ct));
  assert.deepEqual(article.steps.map((s) => s.load.env.TIMEOUT), ['30s', '70s']);
  assert.equal(article.steps[0].load.env.SLEEP_MS, '60000');
  const conn = loadScenario(root, 'connections');
  assert.equal(parseOptions(['--target', 'max'], conn).target, 'max');
  assert.equal(parseOptions(['--target=5000'], conn).target, 5000);
  assert.throws(() => parseOptions(['--target', 'lots'], conn), /--target needs a whole number of connections from 1 to 100000000, or "max" \(got "lots"\)/);
  assert.throws(() => parseOptions(['--target', '5'], ct), /unknown option "--target"/);
  // HAProxy processes: connection scenarios only, 1 to 64 (haproxy/processes.sh).
  assert.equal(parseOptions(['--processes', '3'], conn).processes, 3);
  assert.throws(() => parseOptions(['--processes', '0'], conn), /--processes needs a whole number from 1 to 64 \(got "0"\)/);
  assert.throws(() => parseOptions(['--processes', '65'], conn), /--processes needs a whole number from 1 to 64 \(got "65"\)/);
  assert.throws(() => parseOptions(['--processes', '2'], ct), /unknown option "--processes"/);
});

test('connection levels: sized replicas and HAProxy settings, more holder replicas on request', () => {
  const conn = loadScenario(root, 'connections');
  assert.throws(() => buildPlan(conn, 'connections', { quick: true }), /need a preflight sizing/);
  const sizes = sizeLevels(9900, conn.steps.map((t) => t.fraction), limits, 120);
  const plan = buildPlan(conn, 'connections', { quick: false, sizes, replicas: 2 });
  assert.deepEqual(plan.steps.map((s) => s.connections), [990, 4950, 9900]);
  assert.deepEqual(plan.steps.map((s) => s.load.replicas), [2, 2, 2]);
  assert.equal(plan.steps[2].load.env.HOLDER_REPLICAS, '2');
  assert.equal(plan.steps[2].load.env.CONNECTIONS, '9900');
  assert.equal(plan.steps[2].load.tool, 'holder');
  // No sized ramp here (no ramp given): the scenario's RAMP_UP, HOLD and RAMP_DOWN.
  const env = Object.fromEntries(Object.entries(conn.load.env).map(([k, v]) => [k, Number(v)]));
  assert.equal(plan.steps[2].load.seconds, env.RAMP_UP + env.HOLD + env.RAMP_DOWN);
  assert.equal(plan.steps[2].load.sample_at, env.RAMP_UP + env.HOLD / 2);
  assert.equal(plan.steps[2].haproxy.global.maxconn, '9950');
  const cfg = renderConfig(baseline, plan.steps[2].haproxy, 'connections/level-100pct');
  assert.match(cfg, /\n    maxconn 9950\n/);
  assert.match(cfg, /timeout server 180s/);
});

test('backend-timeout: per-step service settings and the rate × timeout model', () => {
  const plan = buildPlan(loadScenario(root, 'backend-timeout'), 'backend-timeout', { quick: true });
  assert.deepEqual(plan.steps.map((s) => s.compose_env.BACKEND_SERVER_TIMEOUT_MS), ['2000', '0']);
  assert.equal(plan.steps[0].model.rate_x_timeout, 100);
  // Checks of the lab's own model stay hard in --quick; the article's are informational.
  assert.equal(plan.steps[0].expect.plateau_conns, '±15%of:rate_x_timeout');
});

// A checkout whose files are the real one's (symlinked) plus FILES ({path:
// text}): --settings and lesson checks read files inside the lab's folder.
function checkoutWith(files) {
  const dir = mkdtempSync(join(tmpdir(), 'lab-settings-'));
  for (const entry of readdirSync(root)) if (!(entry in files) && entry !== 'lessons') symlinkSync(join(root, entry), join(dir, entry));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), typeof text === 'string' ? text : JSON.stringify(text));
  }
  return dir;
}

test('--settings lays a file\'s settings over every step, checked like the steps\' own', () => {
  const dir = checkoutWith({ 'exercises/mine.json': { haproxy: { global: { maxconn: '100' } }, load: { env: { TIMEOUT: '9s' } }, backends: { 'backend-slow': 2 } } });
  const s = loadScenario(dir, 'maxconn-sweep', { settings: 'exercises/mine.json' });
  const plan = buildPlan(s, 'maxconn-sweep', { quick: false });
  assert.deepEqual(plan.steps.map((t) => t.haproxy.global.maxconn), ['100', '100', '100', '100', '100']);
  assert.ok(plan.steps.every((t) => t.load.env.TIMEOUT === '9s' && t.load.env.VUS === '100'), 'the load env merged name by name');
  assert.ok(plan.steps.every((t) => t.backends['backend-slow'] === 2 && t.backends['backend-fast'] === 1));
  // Wrong settings: one line naming the file (or the option), nothing planned.
  const bad = checkoutWith({
    'e/key.json': { hapraxy: {} }, 'e/var.json': { load: { env: { NOPE: '1' } } }, 'e/list.json': '[]', 'e/scale.json': { backends: { 'backend-slow': 99 } },
  });
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: 'e/key.json' }), /e\/key\.json: settings: unknown key "hapraxy"/);
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: 'e/var.json' }), /NOPE.*\(with --settings e\/var\.json\)/);
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: 'e/list.json' }), /e\/list\.json: expected \{"haproxy"/);
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: 'e/scale.json' }), /e\/scale\.json: backends backend-slow/);
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: 'e/none.json' }), (err) => err instanceof UsageError && /--settings e\/none\.json: no such file/.test(err.message));
  assert.throws(() => loadScenario(bad, 'maxconn-sweep', { settings: '../etc/x.json' }), /inside the lab's folder/);
});

test('a lesson check is a scenario in lessons/checks/, named lesson-*, not listed with the experiments', () => {
  const check = JSON.parse(readFileSync(join(root, 'scenarios/maxconn-sweep.json'), 'utf8'));
  check.steps = [check.steps.at(-1)];
  const dir = checkoutWith({ 'lessons/checks/lesson-01-test.json': check });
  assert.equal(loadScenario(dir, 'lesson-01-test').steps.length, 1);
  assert.ok(!listScenarios(dir).includes('lesson-01-test'));
  assert.throws(() => loadScenario(dir, 'lesson-02-none'), (err) => err instanceof UsageError && /unknown lesson check "lesson-02-none": try one of lesson-01-test/.test(err.message));
});
