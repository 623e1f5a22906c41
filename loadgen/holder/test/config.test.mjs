// Settings from the environment, the replica share and schedule math, the
// replica number from DNS, and holder.mjs's one-line error for a bad setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { endAtMs, globalId, heldSeconds, loadConfig, openAtMs, plannedSeconds, resolveIndex, shareSize } from '../lib.mjs';

const HOLDER = fileURLToPath(new URL('../holder.mjs', import.meta.url));
const base = { CONNECTIONS: '10' };
const rejects = (env, message) => assert.throws(() => loadConfig({ ...base, ...env }), { message });

test('defaults', () => {
  assert.deepEqual(loadConfig(base), {
    target: 'http://haproxy:8080', host: 'haproxy', port: 8080, hostHeader: 'haproxy:8080', tls: false, ca: '/certs/ca.crt', path: '/slow',
    connections: 10, replicas: 1, index: 1, rampUp: 10, hold: 60, rampDown: 10, maxUnconfirmed: 0, rampSlack: 0, connectTimeout: 10, grace: 15, tickMs: 100,
    testid: 'adhoc', summaryDir: '', resultsRoot: '/results',
  });
  // Empty means unset, as compose passes ${VAR:-}.
  assert.equal(loadConfig({ ...base, TARGET: '', RAMP_UP: '', HOLDER_REPLICAS: '' }).rampUp, 10);
});

test('good values', () => {
  const c = loadConfig({
    TARGET: 'http://10.0.0.5:80/', HOLD_PATH: '/slow?x=1', CONNECTIONS: '100000', HOLDER_REPLICAS: '4', HOLDER_INDEX: '4',
    RAMP_UP: '0', HOLD: '1.5', RAMP_DOWN: '86400', CONNECT_TIMEOUT: '0.5', GRACE: '0', TESTID: 'conn-1 x', MAX_UNCONFIRMED: '250', RAMP_SLACK: '30', TICK_MS: '500',
    LOADGEN_SUMMARY_DIR: 'run-1/step_2', RESULTS_ROOT: '/tmp/r',
  });
  assert.deepEqual(c, {
    target: 'http://10.0.0.5:80', host: '10.0.0.5', port: 80, hostHeader: '10.0.0.5:80', tls: false, ca: '/certs/ca.crt', path: '/slow?x=1',
    connections: 100000, replicas: 4, index: 4, rampUp: 0, hold: 1.5, rampDown: 86400, maxUnconfirmed: 250, rampSlack: 30, connectTimeout: 0.5, grace: 0, tickMs: 500,
    testid: 'conn-1 x', summaryDir: 'run-1/step_2', resultsRoot: '/tmp/r',
  });
  // Durations in Go's spelling, as every load tool reads them.
  const spelled = loadConfig({ ...base, RAMP_UP: '1m30s', HOLD: '2m', RAMP_DOWN: '500ms', CONNECT_TIMEOUT: '250ms', GRACE: '1h', RAMP_SLACK: '.5s' });
  assert.deepEqual([spelled.rampUp, spelled.hold, spelled.rampDown, spelled.connectTimeout, spelled.grace, spelled.rampSlack], [90, 120, 0.5, 0.25, 3600, 0.5]);
  const v6 = loadConfig({ ...base, TARGET: 'http://[::1]:8080' });
  assert.deepEqual([v6.host, v6.hostHeader], ['::1', '[::1]:8080']);
  // Several replicas and no HOLDER_INDEX: left for DNS.
  assert.equal(loadConfig({ ...base, HOLDER_REPLICAS: '3' }).index, undefined);
});

test('bad values: one message naming the variable and the value', () => {
  const tlsTarget = loadConfig({ ...base, TARGET: 'https://ecdsa.haproxy:8443', TLS_CA: '/x/ca.crt' });
  assert.deepEqual([tlsTarget.tls, tlsTarget.host, tlsTarget.port, tlsTarget.ca], [true, 'ecdsa.haproxy', 8443, '/x/ca.crt']);
  for (const t of ['ftp://haproxy:8080', 'http://haproxy', 'http://haproxy:0', 'http://haproxy:65536', 'http://h:80/x', 'haproxy:8080', 'http://a b:1']) {
    rejects({ TARGET: t }, `TARGET must be an http://host:port or https://host:port URL (got ${JSON.stringify(t)})`);
  }
  for (const p of ['slow', '/a b', '/a#b', '/\u00e9']) {
    rejects({ HOLD_PATH: p }, `HOLD_PATH must be a path starting with / (printable ASCII, no spaces or #) (got ${JSON.stringify(p)})`);
  }
  for (const n of ['0', '-1', '1.5', 'x', ' 1', '10000001']) {
    rejects({ CONNECTIONS: n }, `CONNECTIONS must be an integer from 1 to 10000000 (got ${JSON.stringify(n)})`);
  }
  // Unset: the holder's own default (compose passes the name through, no value).
  assert.equal(loadConfig({}).connections, 1000);
  rejects({ HOLDER_REPLICAS: '0' }, 'HOLDER_REPLICAS must be an integer from 1 to 10000 (got "0")');
  rejects({ HOLDER_REPLICAS: '3', HOLDER_INDEX: '4' }, 'HOLDER_INDEX must be an integer from 1 to 3 (got "4")');
  rejects({ HOLDER_INDEX: '0' }, 'HOLDER_INDEX must be an integer from 1 to 1 (got "0")');
  rejects({ MAX_UNCONFIRMED: '-1' }, 'MAX_UNCONFIRMED must be an integer from 0 to 10000000 (got "-1")');
  rejects({ TICK_MS: '5' }, 'TICK_MS must be an integer from 10 to 1000 (got "5")');
  const spelling = 'a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds';
  for (const name of ['RAMP_UP', 'HOLD', 'RAMP_DOWN', 'GRACE', 'RAMP_SLACK']) {
    for (const v of ['-1', '1e3', 'abc', '1d', '86401', '24h1s']) rejects({ [name]: v }, `${name} must be ${spelling}, from 0s to 24h (got ${JSON.stringify(v)})`);
  }
  rejects({ CONNECT_TIMEOUT: '0' }, `CONNECT_TIMEOUT must be ${spelling}, from 1ms to 24h (got "0")`);
  rejects({ TESTID: 'a\tb' }, 'TESTID must be printable ASCII (got "a\\tb")');
  for (const d of ['/abs', '../up', 'a/../b', 'a b', 'a\\b']) {
    rejects({ LOADGEN_SUMMARY_DIR: d }, `LOADGEN_SUMMARY_DIR must be a relative folder under RESULTS_ROOT without .. (got ${JSON.stringify(d)})`);
  }
});

test('share: replicas split CONNECTIONS exactly, disjoint, differing by at most 1', () => {
  assert.deepEqual([1, 2, 3].map((i) => shareSize(10, 3, i)), [4, 3, 3]);
  assert.deepEqual([1, 2, 3].map((i) => shareSize(2, 3, i)), [1, 1, 0]);
  for (const [total, replicas] of [[10, 3], [7, 7], [1000, 6], [5, 1]]) {
    const seen = new Set();
    for (let i = 1; i <= replicas; i++) {
      for (let k = 0; k < shareSize(total, replicas, i); k++) seen.add(globalId(k, replicas, i));
    }
    assert.equal(seen.size, total);
    assert.deepEqual([...seen].sort((a, b) => a - b), [...Array(total).keys()]);
  }
});

test('schedule: opens spread over RAMP_UP, ends spread over RAMP_DOWN after HOLD', () => {
  assert.deepEqual([0, 1, 2, 3].map((k) => openAtMs(k, 4, 10)), [0, 2500, 5000, 7500]);
  assert.deepEqual([0, 1, 2, 3].map((k) => endAtMs(k, 4, 10, 60, 20)), [70000, 75000, 80000, 85000]);
  assert.equal(openAtMs(0, 1, 10), 0);
  assert.equal(endAtMs(3, 4, 0, 1, 0), 1000);
  // Every connection is open from the end of RAMP_UP to the start of RAMP_DOWN.
  for (let k = 0; k < 100; k++) assert.ok(endAtMs(k, 100, 10, 60, 10) - openAtMs(k, 100, 10) >= 60000);
});

test('each connection is held RAMP_UP + RAMP_SLACK + HOLD; the run lasts that plus the longer of its ramp-up and RAMP_DOWN', () => {
  const cfg = loadConfig({ RAMP_UP: '10', RAMP_SLACK: '5', HOLD: '60', RAMP_DOWN: '20' });
  assert.equal(heldSeconds(cfg), 75);
  assert.equal(plannedSeconds(cfg), 95, 'RAMP_DOWN 20 s is longer than the ramp-up (15 s)');
  assert.equal(plannedSeconds({ ...cfg, rampDown: 2 }), 90, 'a ramp-down as long as the ramp-up (15 s)');
});

test('resolveIndex: the number from the container name Docker DNS gives back', async () => {
  const interfaces = { lo: [{ family: 'IPv4', internal: true, address: '127.0.0.1' }], eth0: [{ family: 'IPv4', internal: false, address: '172.18.0.7' }] };
  const asked = [];
  const reverse = async (ip) => { asked.push(ip); return ['haproxy-lab-holder-12.haproxy-lab_default']; };
  assert.equal(await resolveIndex({ reverse, interfaces }), 12);
  assert.deepEqual(asked, ['172.18.0.7']);
  await assert.rejects(resolveIndex({ reverse: async () => ['haproxy-lab-backend-2.x'], interfaces }),
    { message: "cannot work out this replica's number from DNS (reverse of 172.18.0.7); set HOLDER_INDEX" });
  await assert.rejects(resolveIndex({ reverse: async () => { throw new Error('ENOTFOUND'); }, interfaces }), /set HOLDER_INDEX$/);
});

function holder(env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [HOLDER], { env: { PATH: process.env.PATH, ...env } }, (err, stdout, stderr) => resolve({ code: err?.code ?? 0, stdout, stderr }));
  });
}

test('holder.mjs: a bad setting is one line on stderr and exit 2', async () => {
  const r = await holder({ CONNECTIONS: '10', RAMP_UP: 'soon' });
  assert.deepEqual(r, { code: 2, stdout: '', stderr: 'holder: RAMP_UP must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 0s to 24h (got "soon")\n' });
  const r2 = await holder({ CONNECTIONS: '10', TARGET: 'http://x' });
  assert.deepEqual([r2.code, r2.stderr], [2, 'holder: TARGET must be an http://host:port or https://host:port URL (got "http://x")\n']);
});
