// scenarios/README.md and loadScenario describe the same format: every key
// the loader accepts is documented in its section and every documented key is
// accepted, every load tool's variable is documented, the refusals are the
// documented lines, and the README's worked example loads.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ARTICLE_KEYS, BACKEND_SERVICES, CHART_KEYS, COMPARISON_KEYS, CONNECTIONS_KEYS, LITTLES_LAW_KEYS, LOAD_KEYS,
  QUICK_KEYS, READING_KINDS, SCENARIO_KEYS, SOURCE_KEYS, STEP_KEYS, STEP_VARIANT_KEYS, X_KEYS,
  buildPlan, loadScenario, runnerVars, scenarioVars,
} from '../plan/scenarios.mjs';
import { LOAD_TOOLS } from '../core/loadtools.mjs';
import { METRICS } from '../core/metrics.mjs';
import { READINGS } from '../report/readings.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'scenarios/README.md'), 'utf8');

// The README's text under a heading (## or ###), up to the next heading.
function section(title) {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^#{2,3} ${title}$`).test(l));
  assert.ok(start >= 0, `scenarios/README.md has no heading "${title}"`);
  const end = lines.findIndex((l, i) => i > start && /^#{1,3} /.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

// The names a section's tables document: each row's first cell, `name`.
const documented = (title) => [...section(title).matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
// A table row's cells after the first: `name` → [cells].
const rowsOf = (title) => Object.fromEntries([...section(title).matchAll(/^\| `([^`]+)` \|(.*)\|$/gm)]
  .map((m) => [m[1], m[2].split('|').map((c) => c.trim())]));

function assertSameNames(title, accepted) {
  const docs = documented(title);
  const missing = accepted.filter((k) => !docs.includes(k));
  const extra = docs.filter((k) => !accepted.includes(k));
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] },
    `section "${title}": accepted ${accepted.join(', ')}; documented ${docs.join(', ')}`);
}

const jsonAfter = (title) => JSON.parse(/```json\n([\s\S]*?)```/.exec(section(title))[1]);
const example = jsonAfter('Adding a scenario');

const made = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

// A root holding one scenario NAME.json (with the lab's loadgen/ and compose.yaml).
function rootWith(name, scenario) {
  const dir = mkdtempSync(join(tmpdir(), 'scenario-format-'));
  made.push(dir);
  mkdirSync(join(dir, 'scenarios'));
  symlinkSync(join(root, 'loadgen'), join(dir, 'loadgen'));
  symlinkSync(join(root, 'compose.yaml'), join(dir, 'compose.yaml'));
  writeFileSync(join(dir, 'scenarios', `${name}.json`), JSON.stringify(scenario, null, 2));
  return dir;
}

// The example with CHANGE applied to a copy; the error loadScenario throws.
function refusal(name, change) {
  const scenario = structuredClone(example);
  change(scenario);
  const dir = rootWith(name, scenario);
  try {
    loadScenario(dir, name);
  } catch (err) {
    return err.message;
  }
  return assert.fail(`scenarios/${name}.json loaded: expected a refusal`);
}

test('every key the loader accepts is documented in its section, and only those', () => {
  assertSameNames('Top level', SCENARIO_KEYS);
  assertSameNames('Steps', STEP_KEYS);
  assertSameNames('load', LOAD_KEYS);
  assertSameNames('quick and article', [...new Set([...QUICK_KEYS, ...ARTICLE_KEYS, ...STEP_VARIANT_KEYS])]);
  assertSameNames('source', SOURCE_KEYS);
  assertSameNames('x', X_KEYS);
  assertSameNames('chart', CHART_KEYS);
  assertSameNames('connections', CONNECTIONS_KEYS);
  assertSameNames('backends', BACKEND_SERVICES);
  assertSameNames('comparisons', COMPARISON_KEYS);
  assertSameNames('littles_law', LITTLES_LAW_KEYS);
  assertSameNames('readings', [...new Set(['kind', ...Object.values(READING_KINDS).flat()])]);
  for (const kind of Object.keys(READING_KINDS)) assert.match(section('readings'), new RegExp(`^- \`${kind}\`:`, 'm'), kind);
});

test('the loader accepts the reading kinds the report knows', () => {
  assert.deepEqual(Object.keys(READING_KINDS).sort(), Object.keys(READINGS).sort());
});

test('every metric of the report is documented, and only those', () => {
  assertSameNames('Metrics', METRICS);
});

test('every variable of every load tool is documented, with who sets it', () => {
  for (const [name, tool] of Object.entries(LOAD_TOOLS)) {
    assertSameNames(name, [...tool.reads, ...tool.compose]);
    const rows = rowsOf(name);
    for (const v of scenarioVars(tool)) assert.equal(rows[v][0], 'scenario', `${name} ${v}`);
    for (const v of runnerVars(tool)) assert.equal(rows[v][0], 'runner', `${name} ${v}`);
  }
});

test('the README\'s worked example loads and plans', () => {
  const dir = rootWith('my-maxconn', example);
  const s = loadScenario(dir, 'my-maxconn');
  for (const quick of [false, true]) assert.equal(buildPlan(s, 'my-maxconn', { quick }).steps.length, 2);
});

test('an unknown key fails with the place, the key and the accepted ones', () => {
  const line = refusal('typo', (s) => { s.steps[0].expext = s.steps[0].expect; });
  assert.equal(line, `scenarios/typo.json: step maxconn-10: unknown key "expext" (accepted: ${STEP_KEYS.join(', ')})`);
  assert.ok(readme.includes(`scenario: ${line}\n`), line);
  assert.equal(refusal('top', (s) => { s.colums = s.columns; }),
    `scenarios/top.json: top level: unknown key "colums" (accepted: ${SCENARIO_KEYS.join(', ')})`);
  assert.equal(refusal('chart', (s) => { s.chart = { y: 'failed', ylabel: 'x' }; }),
    `scenarios/chart.json: chart: unknown key "ylabel" (accepted: ${CHART_KEYS.join(', ')})`);
});

test('a load variable its tool does not read fails, naming what it reads', () => {
  const reads = scenarioVars(LOAD_TOOLS.k6).join(', ');
  const line = refusal('var', (s) => { s.steps[0].load = { env: { HOLD: '5' } }; });
  assert.equal(line, `scenarios/var.json: step maxconn-10: load variable HOLD is not read by k6 (it reads: ${reads})`);
  assert.ok(readme.includes(`scenario: ${line.slice(0, line.indexOf('(it reads: ') + 'it reads: '.length + 1)}`), line);
  assert.equal(refusal('runner', (s) => { s.quick.env.LOADGEN_REPLICAS = '2'; }),
    `scenarios/runner.json: quick: load variable LOADGEN_REPLICAS is not read by k6 (it reads: ${reads})`);
});

test('a step without what its tool needs fails, saying what it found', () => {
  const line = refusal('nodur', (s) => { delete s.load.env.DURATION; delete s.quick; });
  assert.equal(line, 'scenarios/nodur.json: step maxconn-10: k6 needs DURATION (or MAX_DURATION for a fixed count of requests)'
    + ' in its load variables (found: VUS, LOAD_PATH, TIMEOUT, KEEPALIVE)');
  assert.ok(readme.includes(`scenario: ${line}\n`), line);
  assert.match(refusal('quickonly', (s) => { s.quick.env.DURATION = '7s'; delete s.load.env.DURATION; }),
    /step maxconn-10: k6 needs DURATION/);
});

test('other refusals name what was expected and what was found', () => {
  const cases = [
    [(s) => { s.load.tool = 'wrk'; }, new RegExp(`step maxconn-10: load tool "wrk" is not one of ${Object.keys(LOAD_TOOLS).join(', ')}$`)],
    [(s) => { s.load.script = 'nope.js'; }, /step maxconn-10: k6 runs a script: expected .*, found string "nope.js"$/],
    [(s) => { s.compose_env = { HAPROXY_MEMROY: '1g' }; }, /compose_env: HAPROXY_MEMROY is not a setting a step may change \(it may: .*HAPROXY_MEMORY/],
    [(s) => { s.columns.push('hits'); }, /columns: unknown metric "hits" \(metrics: requests, /],
    [(s) => { s.steps[0].article = { env: { VUS: 5 } }; }, /step maxconn-10: "article" needs a top-level "article"/],
    [(s) => { s.backends = { 'backend-fast': 11 }; }, /backends backend-fast: expected a whole number from 1 to 10, found number 11$/],
    [(s) => { s.readings = [{ kind: 'tipping' }]; }, /readings\[0\]: expected \{"kind": one of tipping_point, memory, syn_timing, sign_floor, saturation, capacity, curve_ratio, per_core, core_scaling, versus, breakdown\}/],
    [(s) => { s.load.env.VUS = { n: 1 }; }, /load: VUS "\[object Object\]" must be words separated by single spaces, without quotes, \\, \$ or `$/],
    [(s) => { s.load.env.LOADGEN_EXTRA_ARGS = "--user-agent 'a b'"; }, /load: LOADGEN_EXTRA_ARGS .* must be words separated by single spaces/],
    [(s) => { s.load.env.DURATION = '1d'; }, /step maxconn-10: DURATION must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, at least 1ms \(got "1d"\)$/],
    [(s) => { s.load.env.LOADGEN_EXTRA_ARGS = '--vus 3'; }, /step maxconn-10: LOADGEN_EXTRA_ARGS must not set --vus: the wrapper sets it itself \(from VUS: set that instead\)/],
    [(s) => { s.compose_env = { SLOW_MS: '1 0' }; }, /compose_env: SLOW_MS "1 0" must be one word$/],
    [(s) => { s.readings = [{ kind: 'breakdown', drain_at_least: 90 }]; }, /readings\[0\] \(breakdown\) drain_at_least: expected a share above 0 and at most 1, found 90$/],
  ];
  for (const [change, expected] of cases) assert.match(refusal('bad', change), expected);
});
