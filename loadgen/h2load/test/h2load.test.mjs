// The h2load wrapper: settings, the flags it gives h2load, the pacing
// arithmetic, its reading of h2load's report (real outputs of h2load 1.70,
// fixtures/), its summary; and, where h2load is installed (the lab's h2load
// image), real runs on a local server through run.mjs.
import assert from 'node:assert/strict';
import { spawnSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connectionRate, h2loadArgs, loadConfig, logHistogram, parseReport, seconds, summarize, versionOf } from '../lib.mjs';
import { bucketOf } from '../../lib/histogram.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// Each fixture is h2load's stdout for the arguments h2loadArgs gave for the
// settings beside it (captured with the lab's h2load image, h2load 1.70.0,
// against a throwaway HAProxy answering /self and /half, 503 half the time,
// and a server that never answers /hang).
const fixture = (name) => fs.readFileSync(path.join(here, 'fixtures', `${name}.txt`), 'utf8');
const FIXTURES = {
  'paced-keepalive': { TARGET: 'http://127.0.0.1:8080', LOAD_PATH: '/self', RATE: '400', DURATION: '2', CONNECTIONS: '8' },
  'unpaced-close': { TARGET: 'http://127.0.0.1:8080', LOAD_PATH: '/self', DURATION: '2', CONNECTIONS: '8', KEEPALIVE: 'false' },
  'paced-close': { TARGET: 'http://127.0.0.1:8080', LOAD_PATH: '/self', RATE: '300', DURATION: '2', KEEPALIVE: 'false' },
  'half-503': { TARGET: 'http://127.0.0.1:8081', LOAD_PATH: '/half', RATE: '100', DURATION: '2', CONNECTIONS: '4' },
  timeout: { TARGET: 'http://127.0.0.1:8081', LOAD_PATH: '/hang', RATE: '40', DURATION: '3', CONNECTIONS: '4', TIMEOUT: '1' },
  refused: { TARGET: 'http://127.0.0.1:8099', LOAD_PATH: '/self', DURATION: '1', CONNECTIONS: '4' },
};
const summaryOf = (name) => {
  const cfg = loadConfig(FIXTURES[name]);
  return summarize({ cfg, report: parseReport(fixture(name)), output: fixture(name), cpu: { ns: 1e8, source: 'test' }, version: '1.70.0' });
};
const arg = (args, flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);

test('defaults: unpaced (a closed loop), 50 kept-alive connections for 10 s, HTTP/1.1, one request in flight each', () => {
  const cfg = loadConfig({});
  assert.deepEqual(h2loadArgs(cfg), ['--h1', '-t', '1', '-m', '1', '-N', '10000ms', '-c', '50', '-D', '10000ms', 'http://haproxy:8080/fast']);
  assert.deepEqual([cfg.paced, cfg.pacing, cfg.rate, cfg.planned], [false, 'none', null, null]);
  assert.equal(loadConfig({ RATE: '0' }).paced, false, 'RATE 0 is unpaced too');
});

test('KEEPALIVE=false: Connection: close, h2load opens a new connection per request', () => {
  const args = h2loadArgs(loadConfig({ KEEPALIVE: 'false', CONNECTIONS: '20', DURATION: '3' }));
  assert.equal(arg(args, '-H'), 'Connection: close');
  assert.equal(arg(args, '-c'), '20');
  assert.equal(arg(args, '--rps'), undefined);
});

test('durations in Go\'s spelling or bare seconds; H2LOAD_EXTRA_ARGS before the URL', () => {
  const args = h2loadArgs(loadConfig({ DURATION: '1m30s', TIMEOUT: '2', H2LOAD_EXTRA_ARGS: '-H X-Lab:1 --warm-up-time=1s' }));
  assert.equal(arg(args, '-D'), '90000ms');
  assert.equal(arg(args, '-N'), '2000ms');
  assert.deepEqual(args, ['--h1', '-t', '1', '-m', '1', '-N', '2000ms', '-H', 'X-Lab:1', '--warm-up-time=1s',
    '-c', '50', '-D', '90000ms', 'http://haproxy:8080/fast']);
});

test('paced, kept alive: each connection at RATE ÷ replicas ÷ connections per second (fractions too)', () => {
  const cfg = loadConfig({ RATE: '2000', CONNECTIONS: '20', DURATION: '3' });
  assert.deepEqual([cfg.pacing, cfg.rate, cfg.connections, cfg.rps, cfg.planned], ['per-connection', 2000, 20, 100, 6000]);
  assert.equal(arg(h2loadArgs(cfg), '--rps'), '100');
  const split = loadConfig({ RATE: '1000', CONNECTIONS: '50', H2LOAD_REPLICAS: '3', H2LOAD_INDEX: '2' });
  assert.deepEqual([split.rate, split.connections, split.index], [1000 / 3, 17, 2], 'a replica\'s share, its connections rounded up');
  assert.ok(Math.abs(split.rps - 1000 / 3 / 17) < 1e-12);
  assert.equal(Number(arg(h2loadArgs(split), '--rps')), split.rps, 'h2load takes a fractional --rps');
});

test('paced, kept alive: at most RATE × TIMEOUT ÷ 2 connections (one idle for TIMEOUT is closed for good)', () => {
  assert.equal(loadConfig({ RATE: '10', CONNECTIONS: '50', TIMEOUT: '2' }).connections, 10);
  assert.equal(loadConfig({ RATE: '10', CONNECTIONS: '50', TIMEOUT: '2', THREADS: '16' }).threads, 10, 'no more threads than connections');
  assert.throws(() => loadConfig({ RATE: '0.1', TIMEOUT: '10' }), /^RangeError: RATE must be at least 0\.2 with TIMEOUT 10 .*\(got "0\.1"\)$/);
});

test('paced, a connection per request: new connections at the rate (-r per --rate-period), one request each', () => {
  const cfg = loadConfig({ RATE: '300', DURATION: '2', KEEPALIVE: 'false', CONNECTIONS: '20' });
  const args = h2loadArgs(cfg);
  assert.deepEqual([arg(args, '-r'), arg(args, '--rate-period'), arg(args, '-c'), arg(args, '-n'), arg(args, '-H')],
    ['3', '10ms', '600', '600', 'Connection: close']);
  assert.equal(arg(args, '-D'), undefined, 'h2load: -r and -D are exclusive');
  assert.equal(arg(args, '--rps'), undefined, '--rps does not pace a new connection\'s first request');
  assert.deepEqual(connectionRate(2000, 1), { per: 2, ms: 1 });
  assert.deepEqual(connectionRate(1500, 1), { per: 3, ms: 2 });
  assert.deepEqual(connectionRate(2000, 4), { per: 4, ms: 2 }, 'at least one connection per thread each period');
  assert.equal(connectionRate(0.5, 1).per, 1, 'below 1/s: one connection every 2 s or so');
  const { per, ms } = connectionRate(333.33, 1);
  assert.ok(Math.abs((per * 1000) / ms - 333.33) <= 333.33 * 0.005, `${per} per ${ms} ms is within 0.5% of 333.33/s`);
  assert.equal(connectionRate(0.01, 1), null);
  assert.throws(() => loadConfig({ RATE: '0.01', KEEPALIVE: 'false' }), /^RangeError: RATE must be at least 0\.016666666666666666 with THREADS 1 .*\(got "0\.01"\)$/);
});

test('bad settings are refused with the name, what is allowed and what was given', () => {
  assert.throws(() => loadConfig({ RATE: 'fast' }), /^RangeError: RATE must be a number from 0 to 10000000 \(got "fast"\)$/);
  assert.throws(() => loadConfig({ CONNECTIONS: '2.5' }), /^RangeError: CONNECTIONS must be a whole number from 1 to 1000000 \(got "2\.5"\)$/);
  assert.throws(() => loadConfig({ THREADS: '0' }), /^RangeError: THREADS must be a number from 1 to 64 \(got "0"\)$/);
  assert.throws(() => loadConfig({ KEEPALIVE: 'yes' }), /^RangeError: KEEPALIVE must be true or false \(got "yes"\)$/);
  assert.throws(() => loadConfig({ TIMEOUT: '-1' }), /^RangeError: TIMEOUT must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 100ms to 1h \(got "-1"\)$/);
  assert.throws(() => loadConfig({ DURATION: '1d' }), /^RangeError: DURATION must be a duration such as 30s, 2m, 1m30s or 500ms, or a number of seconds, from 100ms to 24h \(got "1d"\)$/);
  assert.throws(() => loadConfig({ H2LOAD_EXTRA_ARGS: '-c5' }), /^RangeError: H2LOAD_EXTRA_ARGS must not set -c: the wrapper sets it itself \(from CONNECTIONS: set that instead\) \(got "-c5"\)$/);
  assert.throws(() => loadConfig({ H2LOAD_EXTRA_ARGS: '--rps=5' }), /^RangeError: H2LOAD_EXTRA_ARGS must not set --rps: the wrapper sets it itself \(from RATE: set that instead\)/);
  assert.throws(() => loadConfig({ TARGET: 'haproxy:8080' }), /^RangeError: TARGET must be an http\(s\):\/\/host:port URL/);
  assert.throws(() => loadConfig({ LOADGEN_SUMMARY_DIR: '../x' }), /LOADGEN_SUMMARY_DIR must be a relative folder/);
  assert.throws(() => loadConfig({ H2LOAD_REPLICAS: '2', H2LOAD_INDEX: '3' }), /^RangeError: H2LOAD_INDEX must be a number from 1 to 2 \(got "3"\)$/);
  for (const env of [{ RATE: 'fast' }, { CONNECTIONS: '2.5' }, { TARGET: 'x' }]) {
    assert.throws(() => loadConfig(env), (err) => !err.message.includes('\n'), 'one line');
  }
});

test('TLS: an https target as given; h2load checks no certificate, the summary says so', () => {
  const cfg = loadConfig({ TARGET: 'https://ecdsa.haproxy:8443', LOAD_PATH: '/self' });
  assert.equal(h2loadArgs(cfg).at(-1), 'https://ecdsa.haproxy:8443/self');
  assert.equal(summarize({ cfg, report: null, cpu: {} }).tls_verified, false);
  assert.equal(summarize({ cfg: loadConfig({}), report: null, cpu: {} }).tls_verified, null);
});

test('the per-request log: a request in its latency bucket, a failed stream left out as h2load\'s table does', async () => {
  const log = ['1733000000000000\t200\t1500', '1733000000000100\t503\t1500', '1733000000000200\t-1\t9000', '1733000000000300\t200\t250000', ''];
  const h = await logHistogram(log);
  assert.deepEqual(h.counts, { [bucketOf(1.5)]: 2, [bucketOf(250)]: 1 });
  assert.deepEqual(h2loadArgs(loadConfig({}), '/tmp/x/requests.log').slice(-6, -5), ['--log-file=/tmp/x/requests.log']);
});

test('h2load\'s durations and version line', () => {
  assert.deepEqual(['108us', '38.10ms', '2.00s', '1.5', ''].map(seconds), [108e-6, 0.0381, 2, null, null]);
  assert.equal(versionOf('h2load nghttp2/1.70.0\n'), '1.70.0');
});

test('the fixtures are what h2loadArgs gives for their settings, from h2load 1.70', () => {
  for (const name of Object.keys(FIXTURES)) assert.match(fixture(name), /^requests: /m, name);
  assert.match(fixture('paced-keepalive'), /^spawning thread #0: 8 total client\(s\)\. Timing-based test/m);
  assert.match(fixture('paced-close'), /^spawning thread #0: 600 total client\(s\)\. Up to 3 client\(s\) will be created every 10ms 600 total requests$/m);
});

test('a paced kept-alive run (1.70\'s table: median, p95, p99 by the header row)', () => {
  const report = parseReport(fixture('paced-keepalive'));
  assert.deepEqual([report.seconds, report.req_rate], [2, 400]);
  assert.deepEqual(report.counts, { total: 800, started: 808, done: 800, succeeded: 800, failed: 0, errored: 0, timeout: 0 });
  assert.deepEqual(report.request, { min: 0.259, max: 12.15, median: 0.526, p95: 3.36, p99: 10.16, mean: 1.05 });
  assert.deepEqual(report.connect, { min: 0.009, max: 0.114, median: 0.077, p95: 0.114, p99: 0.114, mean: 0.07 });
  assert.deepEqual(report.ttfb, { min: 0.361, max: 0.519, median: 0.458, p95: 0.519, p99: 0.519, mean: 0.449 });
  const s = summaryOf('paced-keepalive');
  assert.deepEqual([s.tool, s.paced, s.rate, s.planned, s.requests, s.ok, s.failed, s.dropped, s.seconds, s.req_rate],
    ['h2load', true, 400, 800, 800, 800, 0, 0, 2, 400]);
  assert.equal(s.output, fixture('paced-keepalive'), 'h2load\'s stdout kept verbatim');
  assert.deepEqual(s.args, h2loadArgs(loadConfig(FIXTURES['paced-keepalive'])));
});

test('an unpaced run with a connection per request: nothing planned, nothing dropped', () => {
  const s = summaryOf('unpaced-close');
  assert.deepEqual([s.paced, s.keepalive, s.rate, s.planned, s.requests, s.ok, s.failed, s.dropped], [false, false, null, null, 17789, 17789, 0, 0]);
  assert.equal(s.latency_ms.p99, 4.68);
});

test('a paced run with a connection per request: requests are h2load\'s total, one per connection', () => {
  const s = summaryOf('paced-close');
  assert.deepEqual([s.pacing, s.connections, s.planned, s.requests, s.ok, s.failed, s.dropped, s.seconds], ['new-connections', 600, 600, 600, 600, 0, 0, 1.99]);
  assert.equal(s.latency_ms.median, 0.316);
});

test('503s: answered but failed', () => {
  const s = summaryOf('half-503');
  assert.deepEqual(s.status, { '2xx': 105, '3xx': 0, '4xx': 0, '5xx': 95 });
  assert.deepEqual([s.requests, s.ok, s.failed, s.dropped], [200, 105, 95, 0]);
});

test('timeouts: counted by h2load in "timeout" alone, failed here; the connections they closed sent nothing more (dropped)', () => {
  const s = summaryOf('timeout');
  assert.deepEqual([s.counts.done, s.counts.timeout, s.requests, s.ok, s.failed, s.planned, s.dropped], [0, 4, 4, 0, 4, 120, 116]);
  assert.deepEqual(s.latency_ms, { min: null, max: null, median: null, p95: null, p99: null, mean: null }, 'no answer: no latency (h2load prints 0us)');
  assert.ok(s.connect_ms.max > 0, 'the connections were made');
});

test('nobody listening: h2load reports nothing sent (1.70 counts no failure), the summary 0 requests and no latency', () => {
  const s = summaryOf('refused');
  assert.deepEqual([s.requests, s.ok, s.failed, s.dropped], [0, 0, 0, 0]);
  assert.equal(s.connect_ms.max, null);
  assert.equal(s.latency_ms.p99, null);
});

test('an older h2load\'s table (min max mean sd: up to 1.69, format of its source at v1.68.0): the missing columns null', () => {
  const report = parseReport(fixture('h2load-1.68-format'));
  assert.deepEqual(report.request, { min: 0.108, max: 38.1, median: null, p95: null, p99: null, mean: 0.513 });
  assert.deepEqual(report.ttfb, { min: 0.621, max: 1.22, median: null, p95: null, p99: null, mean: 1.01 });
  assert.equal(report.counts.done, 77855);
});

test('no report (h2load stopped early), an interrupted run: null counts, nothing dropped', () => {
  assert.equal(parseReport('starting benchmark...\nprogress: 10% of clients started\n'), null);
  const s = summarize({ cfg: loadConfig({ RATE: '100' }), report: null, output: 'starting benchmark...\n', cpu: { ns: 1, source: 'test' }, interrupted: true });
  assert.deepEqual([s.requests, s.ok, s.failed, s.dropped, s.interrupted, s.latency_ms.p99], [null, null, null, 0, true, null]);
});

const hasH2load = spawnSync('h2load', ['--version']).status === 0;
const skip = !hasH2load && 'no h2load here (runs in the h2load image)';

// runWrapper ENV [SIGNAL_AFTER_MS]: run.mjs against a local server answering
// "ok" → {code, out, summary, root}.
async function runWrapper(env, signalAfterMs) {
  const server = http.createServer((req, res) => res.end('ok'));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'h2load-run-'));
  const child = spawn(process.execPath, [path.join(here, '..', 'run.mjs')], {
    env: { ...process.env, TARGET: `http://127.0.0.1:${server.address().port}`, LOAD_PATH: '/', RESULTS_ROOT: root, LOADGEN_SUMMARY_DIR: 's', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  if (signalAfterMs) setTimeout(() => child.kill('SIGTERM'), signalAfterMs);
  const code = await new Promise((r) => child.on('exit', r));
  server.close();
  const file = path.join(root, 's', 'h2load-1.json');
  const summary = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
  fs.rmSync(root, { recursive: true });
  return { code, out, summary };
}

test('a real paced run through run.mjs: every request sent and answered, the summary written', { skip }, async () => {
  const { code, out, summary: s } = await runWrapper({ RATE: '100', DURATION: '1', CONNECTIONS: '4' });
  assert.equal(code, 0, `run.mjs exit status; its output:\n${out}`);
  assert.match(out, /h2load 1\/1: done, 100\/100 ok, 0 failed, 0 dropped/);
  assert.deepEqual([s.requests, s.ok, s.failed, s.dropped, s.status['2xx']], [100, 100, 0, 0, 100]);
  assert.match(s.version, /^[0-9]+\.[0-9]+/);
  assert.ok(s.cpu.ns > 0, `CPU time read (${JSON.stringify(s.cpu)})`);
  assert.ok(s.cpu_start.ns > 0 && s.cpu_start.ns < s.cpu.ns, `CPU time at h2load's start (${JSON.stringify(s.cpu_start)})`);
  assert.ok(s.latency_ms.p99 > 0 && s.latency_ms.p99 < 1000, `p99 ${s.latency_ms.p99} ms`);
  const inHistogram = Object.values(s.latency_histogram.counts).reduce((t, n) => t + n, 0);
  assert.equal(inHistogram, 100, `requests in the log's latency histogram: expected all 100, found ${inHistogram}`);
  assert.match(s.output, /^finished in /m);
});

test('a real run with a connection per request, paced: new connections at the rate', { skip }, async () => {
  const { code, out, summary: s } = await runWrapper({ RATE: '50', DURATION: '1', KEEPALIVE: 'false' });
  assert.equal(code, 0, `run.mjs exit status; its output:\n${out}`);
  assert.deepEqual([s.pacing, s.requests, s.ok], ['new-connections', 50, 50]);
});

test('a real unpaced run stopped by SIGTERM: exit 130, the summary says interrupted', { skip }, async () => {
  const { code, out, summary: s } = await runWrapper({ DURATION: '10', CONNECTIONS: '2' }, 1000);
  assert.equal(code, 130, `run.mjs exit status; its output:\n${out}`);
  assert.deepEqual([s.interrupted, s.requests, s.dropped], [true, null, 0]);
  assert.ok(s.cpu.ns > 0);
});

test('bad settings: exit 2 and one line naming the variable, before any load', { skip: !hasH2load && 'runs in the h2load image' }, () => {
  const out = spawnSync(process.execPath, [path.join(here, '..', 'run.mjs')], { env: { ...process.env, CONNECTIONS: 'many' }, encoding: 'utf8' });
  assert.equal(out.status, 2);
  assert.equal(out.stderr, 'h2load: CONNECTIONS must be a number from 1 to 1000000 (got "many")\n');
});
