// The h2load tool's summaries in a report (evidence/h2load.mjs): replicas
// summed, the percentiles of all their requests from their histograms merged
// (none without histograms), the mean weighted by requests, the client's CPU
// time; summaries made by loadgen/h2load/lib.mjs from real h2load 1.70
// output (its test fixtures).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEASURES, read } from '../evidence/h2load.mjs';
import { loadConfig, logHistogram, parseReport, summarize } from '../../../loadgen/h2load/lib.mjs';
import { RESOLUTION } from '../../../loadgen/lib/histogram.mjs';

const fixtures = fileURLToPath(new URL('../../../loadgen/h2load/test/fixtures/', import.meta.url));
const dirs = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// stepDir FILES: a step folder holding FILES (name → object or text).
function stepDir(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h2load-read-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
  return dir;
}

// replica INDEX FIXTURE ENV [HISTOGRAM]: the summary run.mjs writes for
// h2load's output FIXTURE (and HISTOGRAM, from its log).
const replica = (index, name, env, latencyHistogram = null) => {
  const output = fs.readFileSync(path.join(fixtures, `${name}.txt`), 'utf8');
  return summarize({ cfg: { ...loadConfig({ H2LOAD_REPLICAS: '2', ...env }), index }, report: parseReport(output), output, latencyHistogram,
    cpu: { ns: 2e8, source: 'cgroup v1 cpuacct.usage' }, cpuStart: { ns: 5e7, source: 'cgroup v1 cpuacct.usage' }, version: '1.70.0' });
};

// logLines REQUESTS: h2load --log-file lines, REQUESTS [[µs, count], ...] answered 200.
const logLines = (requests) => requests.flatMap(([us, count]) => Array(count).fill(`1733000000000000\t200\t${us}`));

test('two replicas: requests, failures and rates summed, the mean weighted by requests; without histograms, no merged percentile', () => {
  // 400/s on 8 connections (800 requests, p99 10.16 ms), and 100/s on 4 (200, half of them 503s, p99 14.85 ms).
  const dir = stepDir({
    'h2load-1.json': replica(1, 'paced-keepalive', { RATE: '800', DURATION: '2', CONNECTIONS: '16' }),
    'h2load-2.json': replica(2, 'half-503', { RATE: '200', DURATION: '2', CONNECTIONS: '8' }),
    'h2load-3.json': '{ cut',
  });
  const got = read(dir);
  assert.deepEqual(Object.keys(got.measured).sort(), [...MEASURES, 'percentiles_from', 'worst_replica_ms'].sort());
  const m = got.measured;
  assert.deepEqual([m.requests, m.successful, m.failed, m.dropped, m.seconds, m.req_rate], [1000, 905, 95, 0, 2, 500]);
  assert.deepEqual([m.p50_ms, m.p95_ms, m.p99_ms, m.percentiles_from], [null, null, null, 'replicas apart'], 'each replica\'s own percentiles do not merge');
  assert.deepEqual(m.worst_replica_ms, { p50_ms: 0.551, p95_ms: 3.36, p99_ms: 14.85 }, 'each the worse replica\'s, kept apart');
  assert.ok(Math.abs(m.mean_ms - (1.05 * 800 + 1.32 * 200) / 1000) < 1e-9, `mean ${m.mean_ms}`);
  // Each replica's CPU less its wrapper's start (node, h2load --version): h2load's own.
  assert.deepEqual(got.client, { cpu_ns: 3e8, cpu_source: 'cgroup v1 cpuacct.usage' });
  assert.deepEqual(got.versions, { h2load: '1.70.0' });
  assert.deepEqual(got.files, ['h2load-1.json', 'h2load-2.json']);
  assert.deepEqual(got.unreadable, ['h2load-3.json']);
});

test('two replicas with different latencies: the p99 of all their requests from their logs\' histograms, not the larger replica\'s', async () => {
  // 800 requests at 0.5 ms and 8 at 20 ms; 200 at 5 ms and 2 at 50 ms. All
  // 1,010: the 1% slowest (10) are the 8 + 2 slow ones, so the p99 is 5 ms
  // where replica 2's own is 50.
  const dir = stepDir({
    'h2load-1.json': replica(1, 'paced-keepalive', { RATE: '800', DURATION: '2', CONNECTIONS: '16' }, await logHistogram(logLines([[500, 800], [20000, 8]]))),
    'h2load-2.json': replica(2, 'half-503', { RATE: '200', DURATION: '2', CONNECTIONS: '8' }, await logHistogram(logLines([[5000, 200], [50000, 2]]))),
  });
  const m = read(dir).measured;
  assert.equal(m.percentiles_from, 'histograms');
  assert.ok(Math.abs(m.p99_ms / 5 - 1) <= RESOLUTION, `merged p99: expected 5 ms within ${RESOLUTION * 100}%, found ${m.p99_ms}`);
  assert.ok(Math.abs(m.p50_ms / 0.5 - 1) <= RESOLUTION, `merged p50: expected 0.5 ms within ${RESOLUTION * 100}%, found ${m.p50_ms}`);
});

test('a replica that got no answer: its requests failed, what it never sent dropped, no latency of its own', () => {
  const got = read(stepDir({ 'h2load-1.json': replica(1, 'timeout', { RATE: '80', DURATION: '3', CONNECTIONS: '8', TIMEOUT: '1' }) }));
  assert.deepEqual([got.measured.requests, got.measured.failed, got.measured.dropped], [4, 4, 116]);
  assert.deepEqual([got.measured.p50_ms, got.measured.p99_ms, got.measured.mean_ms], [null, null, null]);
});

test('no summary: nothing measured', () => {
  const got = read(stepDir({}));
  assert.deepEqual([got.measured, got.client, got.versions, got.files], [null, {}, {}, []]);
});
