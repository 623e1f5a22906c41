// The run folder, the runner's only input: run.env and steps/NN-id/step.env
// as plan writes them (scripts/labctl/plan/runfolder.mjs), read back the way
// scripts/scenario.sh's read_env reads them.
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPlan, loadScenario } from '../plan/scenarios.mjs';
import { runEnv, writeRunFolder } from '../plan/runfolder.mjs';
import { envText, parseEnv } from '../core/envfile.mjs';
import { LOAD_TOOLS } from '../core/loadtools.mjs';
import { TOPOLOGY, parseTopology } from '../core/topology.mjs';
import { KERNEL_TABLE_UP_TO } from '../plan/samplers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'runfolder-'));
// The table's FIELD of every load tool, in its order.
const every = (field) => Object.values(LOAD_TOOLS).map((t) => t[field]);
// cli ARGS...: scripts/labctl/cli.mjs run as the runner runs it, from the repository's root.
const cli = (...args) => spawnSync(process.execPath, [path.join(root, 'scripts/labctl/cli.mjs'), ...args], { cwd: root, encoding: 'utf8' });

test('a k6 step: named values, the load environment with the runner\'s variables, compose settings', () => {
  const plan = buildPlan(loadScenario(root, 'backend-timeout'), 'backend-timeout', { quick: true });
  const out = path.join(tmp(), 'results/backend-timeout/20260101T000000Z');
  writeRunFolder(out, plan, 'none', 'scripts/scenario.sh backend-timeout --quick');
  const run = parseEnv(fs.readFileSync(path.join(out, 'run.env'), 'utf8'));
  assert.deepEqual(run, { scenario: 'backend-timeout', steps: '2', preflight: 'none', load_services: every('service').join(' '), load_profiles: every('profile').join(' '), sized_services: Object.values(LOAD_TOOLS).filter((t) => t.sized).map((t) => t.service).join(' '), tls_floor: 'none', connection_floors: 'none', versus: '', baseline_switch: 'restart', command: 'scripts/scenario.sh backend-timeout --quick' });
  const step = parseEnv(fs.readFileSync(path.join(out, plan.steps[0].dir, 'step.env'), 'utf8'));
  assert.equal(step.id, 'backend-timeout-2s');
  assert.equal(step.service, 'loadgen', 'k6 runs as the loadgen service');
  assert.equal(step.config, 'configs/01-backend-timeout-2s.cfg');
  assert.equal(step.listeners, 'configs/01-backend-timeout-2s.listeners');
  assert.equal(step.switch, 'restart', 'a step the planner did not compare with the one before: a restart');
  assert.equal(step['load.TESTID'], 'backend-timeout-20260101T000000Z-backend-timeout-2s');
  assert.equal(step['load.LOADGEN_SUMMARY_DIR'], 'backend-timeout/20260101T000000Z/steps/01-backend-timeout-2s',
    'summaries go under /results in the container: the path relative to results/');
  assert.equal(step['load.LOADGEN_SCRIPT'], '/loadgen/open.js');
  assert.equal(step['compose.BACKEND_SERVER_TIMEOUT_MS'], '2000');
});

// The runner stops every tool run.env names, whichever the steps use: all of them.
test('run.env names every load tool\'s service and profile, each once', () => {
  const run = parseEnv(runEnv({ scenario: 'x', steps: [] }, 'needed'));
  assert.deepEqual(run.load_services.split(' '), [...new Set(every('service'))], 'load_services');
  assert.deepEqual(run.load_profiles.split(' '), [...new Set(every('profile'))], 'load_profiles');
  const words = [...every('service'), ...every('profile')].filter((w) => !/^[a-z0-9][a-z0-9_-]*$/.test(w));
  assert.deepEqual(words, [], 'services and profiles that are not one word (bash splits the lists on spaces)');
});

// The bash outside a run (the e2e tests' cleanup) reads the same table
// through cli.mjs tools: "TOOL SERVICE PROFILE", one tool a line.
test('cli.mjs tools prints the table\'s rows as bash reads them', () => {
  const run = cli('tools');
  assert.equal(run.status, 0, `cli.mjs tools: exit ${run.status}, stderr ${run.stderr}`);
  const rows = run.stdout.trim().split('\n').map((line) => line.split(' '));
  assert.deepEqual(rows, Object.entries(LOAD_TOOLS).map(([name, t]) => [name, t.service, t.profile]), 'cli.mjs tools: one "TOOL SERVICE PROFILE" line per tool');
});

// The runner's topology outside a run: cli.mjs topology, the table as a run's plan writes it.
test('cli.mjs topology prints the table a plan writes, one row per HAProxy process, and refuses a bad count; the plan writes the samplers\' arguments from it', () => {
  const run = cli('topology', '--processes', '3');
  assert.equal(run.status, 0, `cli.mjs topology: exit ${run.status}, stderr ${run.stderr}`);
  const instances = run.stdout.split('\n').filter((l) => l.startsWith('instance ')).map((l) => l.split(/\s+/)[1]);
  assert.deepEqual(instances, ['haproxy', 'haproxy-p2', 'haproxy-p3']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'topology-'));
  const out = path.join(dir, 'results/maxconn-sweep/20260101T000000Z');
  try {
    const plan = cli('plan', 'maxconn-sweep', '--quick', '--out', out, '--lab-processes', '3');
    assert.equal(plan.status, 0, `cli.mjs plan: exit ${plan.status}, stderr ${plan.stderr}`);
    assert.equal(fs.readFileSync(path.join(out, 'topology.txt'), 'utf8'), run.stdout, 'the same table as the plan writes for 3 processes');
    // The sampler's arguments for the one HAProxy container, read back against the table: backends' and
    // frontends' ports (in /proc/net/tcp's hex), the proxies, the table's size limit, the frontends, each
    // process's runtime API.
    assert.deepEqual(fs.readdirSync(path.join(out, 'samplers')), ['haproxy.args']);
    const [backendHex, frontendHex, proxies, most, clients, ...apis] = fs.readFileSync(path.join(out, 'samplers/haproxy.args'), 'utf8').trimEnd().split('\n');
    const decoded = (hex) => hex.split('|').map((h) => parseInt(h, 16)).sort((a, b) => a - b);
    const sorted = (ports) => [...new Set(ports)].sort((a, b) => a - b);
    assert.deepEqual(decoded(backendHex), sorted(TOPOLOGY.backends.map((b) => b.port)), 'the backends\' ports');
    assert.deepEqual(decoded(frontendHex), sorted(TOPOLOGY.frontends.filter((f) => f.instance === 'haproxy').map((f) => f.port)), 'the frontends\' ports');
    assert.equal(proxies, TOPOLOGY.backends.map((b) => b.proxy).join('|'));
    assert.equal(most, String(KERNEL_TABLE_UP_TO));
    assert.equal(clients, [...new Set(TOPOLOGY.frontends.map((f) => f.name))].sort().join('|'));
    const planned = parseTopology(fs.readFileSync(path.join(out, 'topology.txt'), 'utf8'));
    assert.deepEqual(apis, planned.instances.map((i) => `${i.name}=${i.runtime_api}`), 'each process\'s runtime API');
    assert.equal(apis.length, 3);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const bad of [['--processes', '0'], ['--processes', 'two'], []]) {
    const refused = cli('topology', ...bad);
    assert.equal(refused.status, 2, `topology ${bad.join(' ')}: exit 2`);
    assert.match(refused.stderr, /^scenario: topology takes --processes N, a whole number from 1/);
  }
});

// A connection scenario's first plan (no limits yet): the lab's topology, for the runner to read the limits of its processes.
test('a plan that waits for the preflight writes the lab\'s topology and samplers\' arguments already', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'preflight-topology-'));
  const out = path.join(dir, 'results/connections/20260101T000000Z');
  try {
    const plan = cli('plan', 'connections', '--quick', '--out', out, '--lab-processes', '2');
    assert.equal(plan.status, 0, `cli.mjs plan: exit ${plan.status}, stderr ${plan.stderr}`);
    assert.equal(parseEnv(fs.readFileSync(path.join(out, 'run.env'), 'utf8')).preflight, 'needed');
    assert.deepEqual(fs.readFileSync(path.join(out, 'topology.txt'), 'utf8').split('\n').filter((l) => l.startsWith('instance ')).map((l) => l.split(' ')[1]),
      ['haproxy', 'haproxy-p2'], 'the lab\'s 2 processes');
    assert.ok(fs.existsSync(path.join(out, 'samplers/haproxy.args')), 'samplers/haproxy.args');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a holder step: its service, profile and replicas variable come from the table of load tools', () => {
  const scenario = loadScenario(root, 'connections');
  const sizes = scenario.steps.map((t) => ({
    connections: 100 * t.fraction, replicas: 2, env: { CONNECTIONS: String(100 * t.fraction) }, haproxy: {}, backends: {},
  }));
  const plan = buildPlan(scenario, 'connections', { quick: true, sizes });
  const out = path.join(tmp(), 'results/connections/x');
  writeRunFolder(out, plan, 'done');
  const step = parseEnv(fs.readFileSync(path.join(out, plan.steps[2].dir, 'step.env'), 'utf8'));
  assert.deepEqual([step.tool, step.service, step.profile, step.replicas], ['holder', 'holder', 'hold', '2']);
  assert.equal(step['load.HOLDER_REPLICAS'], '2');
  assert.equal(step['load.LOADGEN_SCRIPT'], undefined, 'the holder has no k6 script');
});

test('a connection scenario before its preflight: run.env says so, and no step is planned', () => {
  const out = tmp();
  writeRunFolder(out, { scenario: 'connections', steps: [] }, 'needed');
  assert.deepEqual(fs.readdirSync(out), ['run.env']);
  assert.equal(parseEnv(fs.readFileSync(path.join(out, 'run.env'), 'utf8')).preflight, 'needed');
  assert.match(runEnv({ scenario: 'connections', steps: [] }, 'needed'), /^steps=0$/m);
});

test('values the runner could not read back as written are refused', () => {
  assert.throws(() => envText([], [['label', 'two\nlines']]), /cannot write label=/);
  assert.throws(() => envText([], [['compose.SLOW_MS', '1 0']]), /compose\.SLOW_MS must be one word \(got "1 0"\)/);
  assert.throws(() => envText([], [['load.VEGETA_EXTRA_ARGS', "-header 'X: 1'"]]), /load\.VEGETA_EXTRA_ARGS must be words without tabs, quotes/);
  // A load value may be words: the runner quotes it in the tool's env file.
  assert.equal(envText([], [['load.H2LOAD_EXTRA_ARGS', '-H X-Lab:1 --sni=lab']]), '\nload.H2LOAD_EXTRA_ARGS=-H X-Lab:1 --sni=lab\n');
  assert.throws(() => envText([], [['Bad-Name', 'x']]), /cannot write Bad-Name=/);
  assert.equal(envText(['h'], [['label', 'maxconn 20, 100 clients'], ['load.LOAD_PATH', '/slow?ms=3000']]),
    '# h\nlabel=maxconn 20, 100 clients\nload.LOAD_PATH=/slow?ms=3000\n');
});
