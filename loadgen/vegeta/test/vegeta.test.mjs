// The vegeta wrapper: settings, the flags it gives vegeta, its summary; and,
// where vegeta is installed (the lab's vegeta image), a real attack on a
// local server through attack.mjs.
import assert from 'node:assert/strict';
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { attackArgs, loadConfig, summarize, targetLine } from '../lib.mjs';
import { read } from '../../../scripts/lab/evidence/vegeta.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (args, name) => args.find((a) => a.startsWith(`-${name}=`))?.slice(name.length + 2);

test('defaults: kept-alive HTTP/1.1 at 200/s for 10 s, TLS sessions resumed', () => {
  const cfg = loadConfig({});
  const args = attackArgs(cfg, '/tmp/r.bin');
  assert.equal(arg(args, 'rate'), '200/1s');
  assert.equal(arg(args, 'duration'), '10000ms');
  assert.equal(arg(args, 'keepalive'), 'true');
  assert.equal(arg(args, 'http2'), 'false');
  assert.equal(arg(args, 'output'), '/tmp/r.bin');
  assert.equal(arg(args, 'session-tickets'), undefined, 'no TLS flags for a plain target');
  assert.equal(arg(args, 'max-connections'), undefined, 'no bound on connections unless asked');
  assert.equal(targetLine(cfg), 'GET http://haproxy:8080/fast\n');
});

test('durations in Go\'s spelling or bare seconds; VEGETA_EXTRA_ARGS after the wrapper\'s flags, none of them', () => {
  const args = attackArgs(loadConfig({ DURATION: '1m30s', TIMEOUT: '500ms', VEGETA_EXTRA_ARGS: '-insecure -header X-Lab:1' }), 'r');
  assert.equal(arg(args, 'duration'), '90000ms');
  assert.equal(arg(args, 'timeout'), '500ms');
  assert.deepEqual(args.slice(-3), ['-insecure', '-header', 'X-Lab:1']);
  assert.equal(arg(attackArgs(loadConfig({ DURATION: '20' }), 'r'), 'duration'), '20000ms');
  assert.deepEqual(summarize({ cfg: loadConfig({ VEGETA_EXTRA_ARGS: '-lazy' }), report: null, cpu: {} }).extra_args, ['-lazy']);
  assert.throws(() => loadConfig({ VEGETA_EXTRA_ARGS: '-rate=1' }), /^RangeError: VEGETA_EXTRA_ARGS must not set -rate: the wrapper sets it itself \(from RATE: set that instead\) \(got "-rate=1"\)$/);
  assert.throws(() => loadConfig({ VEGETA_EXTRA_ARGS: '--output x' }), /^RangeError: VEGETA_EXTRA_ARGS must not set -output: the wrapper sets it itself \(got "--output x"\)$/);
  assert.throws(() => loadConfig({ DURATION: '1d' }), /^RangeError: DURATION must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 100ms to 24h \(got "1d"\)$/);
});

test('a replica sends its share of RATE, as a whole number per period', () => {
  const share = (env) => arg(attackArgs(loadConfig(env), 'r'), 'rate');
  assert.equal(share({ RATE: '1000', VEGETA_REPLICAS: '2' }), '500/1s');
  assert.equal(share({ RATE: '1001', VEGETA_REPLICAS: '2' }), '5005/10s');
  assert.equal(share({ RATE: '1000', VEGETA_REPLICAS: '3' }), '333333/1000s');
});

test('TLS: the lab CA verifies, resumption by tickets on or off, a connection per request', () => {
  const args = attackArgs(loadConfig({ TARGET: 'https://ecdsa.haproxy:8443', TLS_RESUME: 'false', KEEPALIVE: 'false' }), 'r');
  assert.equal(arg(args, 'session-tickets'), 'false');
  assert.equal(arg(args, 'root-certs'), '/certs/ca.crt');
  assert.equal(arg(args, 'keepalive'), 'false');
});

test('MAX_CONNECTIONS: a fixed pool of kept-alive connections', () => {
  assert.equal(arg(attackArgs(loadConfig({ MAX_CONNECTIONS: '100' }), 'r'), 'max-connections'), '100');
  assert.throws(() => loadConfig({ MAX_CONNECTIONS: '-1' }), /MAX_CONNECTIONS must be a number from 0 to 1000000 \(got "-1"\)/);
});

test('bad settings are refused with the name, what is allowed and what was given', () => {
  assert.throws(() => loadConfig({ RATE: 'fast' }), /^RangeError: RATE must be a number from 0\.1 to 10000000 \(got "fast"\)$/);
  assert.throws(() => loadConfig({ KEEPALIVE: 'yes' }), /KEEPALIVE must be true or false \(got "yes"\)/);
  assert.throws(() => loadConfig({ TARGET: 'haproxy:8080' }), /TARGET must be an http\(s\):\/\/host:port URL/);
  assert.throws(() => loadConfig({ LOADGEN_SUMMARY_DIR: '../x' }), /LOADGEN_SUMMARY_DIR must be a relative folder/);
  assert.throws(() => loadConfig({ VEGETA_REPLICAS: '2', VEGETA_INDEX: '3' }), /VEGETA_INDEX must be a number from 1 to 2/);
});

test('the summary: vegeta\'s report verbatim, failures from its success ratio, what it never sent as dropped', () => {
  const cfg = loadConfig({ RATE: '100', DURATION: '10' });
  const report = { requests: 900, success: 0.9, rate: 90, duration: 10e9, latencies: { '50th': 2e6, '99th': 9e6, mean: 3e6 } };
  const s = summarize({ cfg, report, cpu: { ns: 5e8, source: 'test' }, version: '12.13.0' });
  assert.deepEqual([s.tool, s.planned, s.requests, s.ok, s.failed, s.dropped], ['vegeta', 1000, 900, 810, 90, 100]);
  assert.equal(s.report, report);
  assert.equal(summarize({ cfg, report, cpu: {}, interrupted: true }).dropped, 0, 'an interrupted attack drops nothing');
});

test('the reader: replicas summed, the worst percentile, ms from vegeta\'s ns', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vegeta-read-'));
  const replica = (index, requests, p99) => summarize({
    cfg: { ...loadConfig({ RATE: '200', DURATION: '10', VEGETA_REPLICAS: '2' }), index },
    report: { requests, success: 1, rate: requests / 10, duration: 10e9, latencies: { '50th': 1e6, '95th': 2e6, '99th': p99, mean: 1.5e6 } },
    cpu: { ns: 2e8, source: 'cgroup v1 cpuacct.usage' },
    version: '12.13.0',
  });
  fs.writeFileSync(path.join(dir, 'vegeta-1.json'), JSON.stringify(replica(1, 1000, 4e6)));
  fs.writeFileSync(path.join(dir, 'vegeta-2.json'), JSON.stringify(replica(2, 990, 7e6)));
  fs.writeFileSync(path.join(dir, 'vegeta-3.json'), '{ cut');
  const got = read(dir);
  assert.equal(got.measured.requests, 1990);
  assert.equal(got.measured.req_rate, 199);
  assert.equal(got.measured.p99_ms, 7);
  assert.equal(got.measured.mean_ms, 1.5);
  assert.equal(got.measured.dropped, 10);
  assert.equal(got.client.cpu_ns, 4e8);
  assert.deepEqual(got.versions, { vegeta: '12.13.0' });
  assert.deepEqual(got.unreadable, ['vegeta-3.json']);
  fs.rmSync(dir, { recursive: true });
});

const hasVegeta = spawnSync('vegeta', ['-version']).status === 0;

test('a real attack through attack.mjs: every request sent and answered, the summary written', { skip: !hasVegeta && 'no vegeta here (runs in the vegeta image)' }, async () => {
  const server = http.createServer((req, res) => res.end('ok'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vegeta-run-'));
  const child = spawn(process.execPath, [path.join(here, '..', 'attack.mjs')], {
    env: { ...process.env, TARGET: `http://127.0.0.1:${server.address().port}`, RATE: '50', DURATION: '1', KEEPALIVE: 'false', RESULTS_ROOT: root, LOADGEN_SUMMARY_DIR: 's' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await new Promise((r) => child.on('exit', r));
  server.close();
  assert.equal(code, 0, `attack.mjs exit status; its output:\n${out}`);
  const s = JSON.parse(fs.readFileSync(path.join(root, 's', 'vegeta-1.json'), 'utf8'));
  assert.equal(s.report.requests, 50);
  assert.deepEqual(s.report.status_codes, { 200: 50 });
  assert.equal(s.dropped, 0);
  assert.ok(s.cpu.ns > 0, `CPU time read (${JSON.stringify(s.cpu)})`);
  assert.match(s.hist, /^Bucket/);
  fs.rmSync(root, { recursive: true });
});
