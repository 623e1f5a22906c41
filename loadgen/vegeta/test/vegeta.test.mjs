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
import { attackArgs, latencyHistType, loadConfig, parseLatencyHist, summarize, targetLine } from '../lib.mjs';
import { FIRST, LAST, RESOLUTION, bucketOf, histogram, upperMs } from '../../lib/histogram.mjs';
import { read } from '../../../scripts/labctl/evidence/vegeta.mjs';

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

// replicaSummary INDEX REQUESTS P99 [LATENCIES]: a replica's summary of 2
// at 200/s for 10 s, vegeta's p99 P99 ns, LATENCIES (ms) in its histogram.
const replicaSummary = (index, requests, p99, latencies) => summarize({
  cfg: { ...loadConfig({ RATE: '200', DURATION: '10', VEGETA_REPLICAS: '2' }), index },
  report: { requests, success: 1, rate: requests / 10, duration: 10e9, latencies: { '50th': 1e6, '95th': 2e6, '99th': p99, mean: 1.5e6 } },
  latencyHistogram: latencies ? histogram(latencies.reduce((c, ms) => ({ ...c, [bucketOf(ms)]: (c[bucketOf(ms)] ?? 0) + 1 }), {})) : null,
  cpu: { ns: 2e8, source: 'cgroup v1 cpuacct.usage' },
  version: '12.13.0',
});

// readReplicas SUMMARIES: the reader's view of a step folder with them.
function readReplicas(summaries) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vegeta-read-'));
  summaries.forEach((s, i) => fs.writeFileSync(path.join(dir, `vegeta-${i + 1}.json`), typeof s === 'string' ? s : JSON.stringify(s)));
  const got = read(dir);
  fs.rmSync(dir, { recursive: true });
  return got;
}

test('the reader: replicas summed, ms from vegeta\'s ns, a cut summary named', () => {
  const got = readReplicas([replicaSummary(1, 1000, 4e6, [1]), replicaSummary(2, 990, 7e6, [1]), '{ cut']);
  assert.equal(got.measured.requests, 1990);
  assert.equal(got.measured.req_rate, 199);
  assert.equal(got.measured.mean_ms, 1.5);
  assert.equal(got.measured.dropped, 10);
  assert.equal(got.client.cpu_ns, 4e8);
  assert.deepEqual(got.versions, { vegeta: '12.13.0' });
  assert.deepEqual(got.unreadable, ['vegeta-3.json']);
});

test('the reader: two replicas with different latencies give the p99 of all their requests, not the larger one', () => {
  // Replica 1: 990 requests of 2 ms and 10 of 40 ms; replica 2: 990 of 4 ms
  // and 10 of 100 ms. All 2,000: the 1% slowest are the 20 of 40 and 100 ms,
  // so the p99 is the slowest of the rest, 4 ms (replica 2's own p99 is 100
  // ms), and the median the 1,000th, 4 ms.
  const latencies = (fast, slow) => [...Array(990).fill(fast), ...Array(10).fill(slow)];
  const got = readReplicas([replicaSummary(1, 1000, 40e6, latencies(2, 40)), replicaSummary(2, 1000, 100e6, latencies(4, 100))]).measured;
  assert.equal(got.percentiles_from, 'histograms');
  assert.ok(Math.abs(got.p99_ms / 4 - 1) <= RESOLUTION, `merged p99: expected 4 ms within ${RESOLUTION * 100}%, found ${got.p99_ms}`);
  assert.ok(Math.abs(got.p50_ms / 4 - 1) <= RESOLUTION, `merged p50: expected 4 ms within ${RESOLUTION * 100}%, found ${got.p50_ms}`);
  assert.equal(got.worst_replica_ms, null);
});

test('the reader on summaries without histograms: one replica\'s own percentiles, none merged for several', () => {
  const one = readReplicas([replicaSummary(1, 1000, 4e6)]).measured;
  assert.deepEqual([one.p50_ms, one.p95_ms, one.p99_ms, one.percentiles_from], [1, 2, 4, 'one replica']);
  const two = readReplicas([replicaSummary(1, 1000, 4e6), replicaSummary(2, 990, 7e6)]).measured;
  assert.deepEqual([two.p50_ms, two.p95_ms, two.p99_ms, two.percentiles_from], [null, null, null, 'replicas apart']);
  assert.deepEqual(two.worst_replica_ms, { p50_ms: 1, p95_ms: 2, p99_ms: 7 }, 'the worst replica\'s own, kept apart');
  const mixed = readReplicas([replicaSummary(1, 1000, 4e6, [1]), replicaSummary(2, 990, 7e6)]).measured;
  assert.equal(mixed.p99_ms, null, 'a replica without a histogram: no merge of part of the requests');
});

test('vegeta\'s histogram in the shared buckets: its report type, read back', () => {
  const type = latencyHistType();
  const bounds = /^hist\[(.*)\]$/.exec(type)[1].split(',');
  assert.equal(bounds.length, LAST - FIRST + 1, 'a bound per bucket, from 0');
  assert.deepEqual([bounds[0], bounds[1 - FIRST]], ['0', '1000000ns'], 'bucket 0 ends at 1 ms');
  // vegeta's output for it: a header, then "[lo, hi]  count  %  bars" per bucket.
  const lines = bounds.map((lo, k) => `[${lo},\t${bounds[k + 1] ?? '+Inf'}]\t${{ [-FIRST]: 7, [-FIRST + 32]: 3 }[k] ?? 0}\t0.00%\t`);
  assert.deepEqual(parseLatencyHist(['Bucket\t\t#\t%\tHistogram', ...lines].join('\n')), histogram({ 0: 7, 32: 3 }));
  assert.equal(parseLatencyHist('Bucket # % Histogram\n[0s, 1ms] 3 100.00% #\n'), null, 'other buckets: not this histogram');
  assert.equal(upperMs(0), 1);
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
  const inHistogram = Object.values(s.latency_histogram.counts).reduce((t, n) => t + n, 0);
  assert.equal(inHistogram, 50, `requests in vegeta's latency histogram: expected all 50, found ${inHistogram}`);
  fs.rmSync(root, { recursive: true });
});
