// Input that must not reach the lab: the planner refuses it (plan --check,
// before the runner touches anything) with one line naming the file or the
// knob and the fix. A line break in an HAProxy value, a setting over the
// runner's own lines, a compose_env outside the knobs a step may change, a
// port out of range; and the .env reading the runner shares with Compose.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STEP_KNOBS, loadScenario } from '../plan/scenarios.mjs';
import { renderConfig } from '../plan/render.mjs';
import { TOPOLOGY_FILE, expandProcesses, parseTopology } from '../core/topology.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const shipped = JSON.parse(readFileSync(join(root, 'scenarios/maxconn-sweep.json'), 'utf8'));
const baseline = readFileSync(join(root, 'haproxy/haproxy.cfg'), 'utf8');
const STEP = 'step maxconn-20';

const made = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'bad-input-')); made.push(d); return d; };

// A lab folder with scenarios/bad.json (maxconn-sweep with CHANGE applied)
// and, when given, the settings file mine.json.
function labWith(change, settings) {
  const dir = tmp();
  mkdirSync(join(dir, 'scenarios'));
  for (const shared of ['loadgen', 'haproxy', 'compose.yaml']) symlinkSync(join(root, shared), join(dir, shared));
  const scenario = structuredClone(shipped);
  change(scenario);
  writeFileSync(join(dir, 'scenarios/bad.json'), JSON.stringify(scenario));
  if (settings) writeFileSync(join(dir, 'mine.json'), JSON.stringify(settings));
  return dir;
}

// The line loadScenario refuses the scenario with (CHANGE to its file, SETTINGS laid over).
function refusal(change, settings) {
  const dir = labWith(change, settings);
  try {
    loadScenario(dir, 'bad', settings ? { settings: 'mine.json' } : {});
  } catch (err) {
    return err.message;
  }
  return assert.fail(`scenarios/bad.json${settings ? ` with --settings mine.json ${JSON.stringify(settings)}` : ''} loaded: expected a refusal`);
}
const stepSets = (haproxy) => (s) => { s.steps[0].haproxy = haproxy; };
const none = () => {};
const accepted = (change, settings) => {
  const dir = labWith(change, settings);
  assert.doesNotThrow(() => loadScenario(dir, 'bad', settings ? { settings: 'mine.json' } : {}), JSON.stringify(settings ?? change.toString()));
};

const ONE_LINE = 'each setting is one line of haproxy.cfg; write it on one line, without control characters';

describe('a control character in an HAProxy setting', () => {
  const injected = '20\n    stats socket ipv4@0.0.0.0:7999 level admin';

  test('in a scenario\'s value, keyword or section: refused, naming the file, the setting and the fix', () => {
    assert.equal(refusal(stepSets({ global: { maxconn: injected } })),
      `scenarios/bad.json: ${STEP} haproxy global: "maxconn": ${JSON.stringify(injected)} has a control character ("\\n"): ${ONE_LINE}`);
    assert.equal(refusal(stepSets({ defaults: { 'timeout client\r': '5s' } })),
      `scenarios/bad.json: ${STEP} haproxy defaults: "timeout client\\r": "timeout client\\r" has a control character ("\\r"): ${ONE_LINE}`);
    assert.equal(refusal(stepSets({ 'backend be_slow\nglobal': { fullconn: '1' } })),
      `scenarios/bad.json: ${STEP} haproxy "backend be_slow\\nglobal": "fullconn": "backend be_slow\\nglobal" has a control character ("\\n"): ${ONE_LINE}`);
    assert.match(refusal(stepSets({ global: { 'cpu-map': ['1/1 0', '1/2 1\u0000'] } })), /"cpu-map": "1\/2 1\\u0000" has a control character \("\\u0000"\)/);
  });

  test('in a --settings file: refused, naming that file', () => {
    assert.equal(refusal(none, { haproxy: { 'frontend fe_main': { 'http-request+': 'deny\nbind :80' } } }),
      `mine.json: haproxy frontend fe_main: "http-request+": "deny\\nbind :80" has a control character ("\\n"): ${ONE_LINE}`);
  });

  test('renderConfig refuses it too: no config is written with it', () => {
    assert.throws(() => renderConfig(baseline, { global: { maxconn: injected } }, 'x'), /section "global": "maxconn": .* has a control character/);
  });
});

describe('a setting over the runner\'s own global lines', () => {
  const SOCKET = '"stats socket", the runtime API the runner reads (show info, show stat) and the exporter\'s socket';

  test('replacing, removing, appending to or adding a stats socket: refused, naming the key', () => {
    assert.equal(refusal(stepSets({ global: { 'stats socket': '/tmp/mine.sock level admin' } })),
      `scenarios/bad.json: ${STEP} haproxy global: "stats socket" would set, replace or remove ${SOCKET}: take "stats socket" out of the settings`);
    assert.equal(refusal(none, { haproxy: { global: { stats: null } } }),
      `mine.json: haproxy global: "stats" would set, replace or remove ${SOCKET}: take "stats" out of the settings`);
    for (const keyword of ['stats socket+', 'stats  socket /tmp/other.sock', 'stats socket ipv4@0.0.0.0:7999']) {
      assert.match(refusal(none, { haproxy: { global: { [keyword]: '' } } }), new RegExp(`^mine\\.json: haproxy global: ${JSON.stringify(keyword).replace(/[+]/g, '\\+')} would set, replace or remove "stats socket"`), keyword);
    }
  });

  test('the master process and the description the runner reads back: refused too', () => {
    assert.match(refusal(stepSets({ global: { 'master-worker': 'no-exit-on-failure' } })), /^scenarios\/bad\.json: step maxconn-20 haproxy global: "master-worker" would set, replace or remove "master-worker", the master process whose CLI the runner reads \(show proc\): take "master-worker" out of the settings$/);
    assert.match(refusal(stepSets({ global: { 'mworker-max-reloads': '1' } })), /"mworker-max-reloads" would set, replace or remove "mworker-max-reloads"/);
    assert.match(refusal(stepSets({ global: { 'description+': 'mine' } })), /"description\+" would set, replace or remove "description", the step's name/);
  });

  test('other stats settings, and stats pages in their frontends, are the step\'s to change', () => {
    accepted(stepSets({ global: { 'stats timeout': '1m' }, 'frontend stats': { 'stats refresh': '1s' } }));
    assert.match(renderConfig(baseline, { global: { 'stats timeout': '1m' } }, 'x'), /stats timeout 1m/);
  });

  test('renderConfig refuses it too', () => {
    assert.throws(() => renderConfig(baseline, { global: { 'stats socket': '/tmp/x.sock' } }, 'x'), /section "global": "stats socket" would set, replace or remove "stats socket"/);
  });
});

describe('compose_env: the knobs a step may change, no other', () => {
  const allowed = `(it may: ${STEP_KNOBS.join(', ')}); the others are the lab's own: set them in .env`;

  test('an image, the user, a host port, a COMPOSE_ variable, the process count or open files: refused, naming the file, the key and the allowed names', () => {
    assert.equal(refusal((s) => { s.compose_env = { LAB_UID: '0' }; }), `scenarios/bad.json: compose_env: LAB_UID is not a setting a step may change ${allowed}`);
    assert.equal(refusal((s) => { s.steps[1].compose_env = { HAPROXY_IMAGE: 'haproxy:2.0' }; }),
      `scenarios/bad.json: step maxconn-40 compose_env: HAPROXY_IMAGE is not a setting a step may change ${allowed}`);
    assert.equal(refusal((s) => { s.quick.compose_env = { HAPROXY_HTTP_PORT: '8081' }; }),
      `scenarios/bad.json: quick compose_env: HAPROXY_HTTP_PORT is not a setting a step may change ${allowed}`);
    assert.equal(refusal(none, { compose_env: { COMPOSE_PROJECT_NAME: 'other' } }),
      `mine.json: compose_env: COMPOSE_PROJECT_NAME is not a setting a step may change ${allowed}`);
    for (const name of ['LAB_GID', 'NODE_IMAGE', 'GRAFANA_PORT', 'HAPROXY_PROCESSES', 'HAPROXY_NOFILE', 'HOLDER_MEMORY']) {
      assert.match(refusal(none, { compose_env: { [name]: '1' } }), new RegExp(`^mine\\.json: compose_env: ${name} is not a setting a step may change \\(it may: `), name);
    }
  });

  test('the knobs a step may change: each one compose.yaml uses and docs/knobs.md lists as a knob; no image, port, user or COMPOSE_ one', () => {
    const compose = new Set([...readFileSync(join(root, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
    const knobs = readFileSync(join(root, 'docs/knobs.md'), 'utf8').split(/^## Read, but not knobs$/m)[0];
    const documented = new Set([...knobs.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]));
    assert.deepEqual(STEP_KNOBS.filter((k) => !compose.has(k)), [], 'knobs compose.yaml does not use');
    assert.deepEqual(STEP_KNOBS.filter((k) => !documented.has(k)), [], 'knobs docs/knobs.md does not list as knobs');
    assert.deepEqual(STEP_KNOBS.filter((k) => /_IMAGE$|_PORT$|^LAB_[UG]ID$|^COMPOSE_|^HAPROXY_PROCESSES$|NOFILE$/.test(k)), [], 'knobs that are the lab\'s own');
    accepted((s) => { s.compose_env = Object.fromEntries(STEP_KNOBS.map((k) => [k, '1'])); });
  });
});

describe('ports: whole numbers from 1 to 65535', () => {
  const NOT_A_PORT = (p) => `"${p}" is not a port: use a whole number from 1 to 65535`;

  test('in a bind, a server address or a server\'s port option: refused, naming the file and the setting', () => {
    assert.equal(refusal(stepSets({ 'frontend fe_main': { bind: ':99999 backlog 128' } })),
      `scenarios/bad.json: ${STEP} haproxy frontend fe_main: "bind": ${NOT_A_PORT(99999)}`);
    assert.equal(refusal(none, { haproxy: { 'backend be_slow': { 'server-template slow': '10 backend-slow:0' } } }),
      `mine.json: haproxy backend be_slow: "server-template slow": ${NOT_A_PORT(0)}`);
    assert.equal(refusal(none, { haproxy: { 'backend be_fast': { 'default-server+': 'port 70000' } } }),
      `mine.json: haproxy backend be_fast: "default-server+": ${NOT_A_PORT(70000)}`);
    assert.match(refusal(stepSets({ 'frontend fe_main': { bind: [':7080', ':7081,:65536'] } })), /"bind": "65536" is not a port/);
    assert.match(refusal(stepSets({ 'backend be_fast': { server: 's1 10.0.0.1:http' } })), /"server": "http" is not a port/);
  });

  test('ports in range, ranges, sockets and the baseline\'s own forms are accepted', () => {
    accepted(stepSets({
      'frontend fe_main': { bind: [':7080 backlog 128', 'ipv4@127.0.0.1:8090-8099', 'unix@/tmp/fe.sock', '[::]:65535'] },
      'frontend stats': { bind: ':"${LAB_STATS_PORT-8404}"' },
      'backend be_slow': { 'server-template slow': '10 backend-slow:7080', 'default-server+': 'port 1' },
    }));
  });

  test('in a scenario\'s variable that is a port or a URL with one: refused, naming the variable', () => {
    assert.equal(refusal((s) => { s.load.env.TARGET = 'http://haproxy:0'; }), `scenarios/bad.json: load: TARGET: ${NOT_A_PORT(0)}`);
    assert.equal(refusal(none, { load: { env: { TARGET: 'https://rsa.haproxy:84430/' } } }), `mine.json: load env: TARGET: ${NOT_A_PORT(84430)}`);
    assert.equal(refusal(none, { compose_env: { HAPROXY_HTTP_PORT: '99999' } }), `mine.json: compose_env: HAPROXY_HTTP_PORT: ${NOT_A_PORT(99999)}`);
    accepted((s) => { s.load.env.TARGET = 'https://rsa.haproxy:7443'; });
  });

  test('in topology.txt, and where HAPROXY_PROCESSES would shift them past 65535: refused, naming the line or the knob', () => {
    const instance = 'instance h service=h runtime_api=127.0.0.1:7999 master_cli=127.0.0.1:7998 processes=HAPROXY_PROCESSES port_step=100';
    assert.throws(() => parseTopology(`${instance}\nfrontend f instance=h protocol=http port=70000`, 't'), { message: `t:2: port: ${NOT_A_PORT(70000)}` });
    assert.throws(() => parseTopology(instance.replace(':7998', ':0'), 't'), { message: `t:1: master_cli: ${NOT_A_PORT(0)}` });
    const lab = `${instance}\nfrontend f instance=h protocol=http port=7080`;
    assert.doesNotThrow(() => expandProcesses(lab, { HAPROXY_PROCESSES: '576' }));
    assert.throws(() => expandProcesses(lab, { HAPROXY_PROCESSES: '600' }), {
      message: 'HAPROXY_PROCESSES=600: process 600 of h would listen on port 67899 (topology.txt: 7999 + 100 a process), past 65535: set HAPROXY_PROCESSES to at most 576',
    });
    // The lab's own topology has room for the 64 processes its limits allow.
    assert.doesNotThrow(() => expandProcesses(readFileSync(TOPOLOGY_FILE, 'utf8'), { HAPROXY_PROCESSES: '64' }));
  });
});

test('plan refuses with one line on stderr, a non-zero exit and nothing written', () => {
  const dir = labWith(none, { haproxy: { global: { 'stats socket': '/tmp/mine.sock' } } });
  const run = spawnSync(process.execPath, [join(root, 'scripts/labctl/cli.mjs'), 'plan', 'bad', '--out', 'results/bad/x', '--settings', 'mine.json'],
    { cwd: dir, encoding: 'utf8' });
  assert.notEqual(run.status, 0, `exit status (stdout: ${run.stdout})`);
  assert.match(run.stderr, /^scenario: mine\.json: haproxy global: "stats socket" would set, replace or remove "stats socket", .*: take "stats socket" out of the settings\n$/);
  assert.equal(existsSync(join(dir, 'results')), false, 'results/ was written');
});
