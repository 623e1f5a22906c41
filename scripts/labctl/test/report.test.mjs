// Tests of report.mjs on results directories built in a temp dir.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, formatTable, readRun, summaryJson, writeOutputs } from '../report/report.mjs';
import { toCSV, toMarkdown } from '../report/format.mjs';
import { formatValue } from '../core/metrics.mjs';
import { checkTags } from './xml.mjs';
import { TOPOLOGY } from '../core/topology.mjs';
import { RESOLUTION, bucketOf, histogram } from '../../../loadgen/lib/histogram.mjs';

// fe_main's port (topology.txt).
const PORT = TOPOLOGY.frontends[0].port;

const fixtures = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures');
const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// A k6 handleSummary "data" object with the fields report.mjs reads.
function k6({ count, failed = 0, ms = 30000, med = 100, p95 = 200, p99 = 300 }) {
  return {
    metrics: {
      http_reqs: { type: 'counter', values: { count, rate: count / (ms / 1000) } },
      http_req_failed: { type: 'rate', values: { passes: failed, fails: count - failed, rate: failed / count } },
      http_req_duration: { type: 'trend', values: { avg: med, min: 1, med, 'p(90)': p95, 'p(95)': p95, 'p(99)': p99, max: p99 } },
    },
    state: { isStdOutTTY: false, testRunDurationMs: ms },
  };
}

// A load of COUNT requests over 10 s with FAILED failures: hits/sec = (count - failed) / 10.
const load = (count, failed = 0) => ({ 'loadgen-1.json': k6({ count, failed, ms: 10000 }) });

function step(id, extra = {}) {
  const run = extra.run ?? 1;
  return {
    index: 1, dir: `steps/${id}-${run}`, id, run, label: id, x: id,
    config: `configs/${id}-${run}.cfg`, haproxy: {}, backends: {}, load: {}, ...extra,
  };
}

function plan(steps, extra = {}) {
  return {
    scenario: 'test-scenario', description: 'a test', source: { title: 'An article', author: 'A. Author', year: 2016, seed: 'seed.txt' },
    notes: [], x: { name: 'n', label: 'the x' }, columns: ['successful', 'failed', 'hits_per_sec'],
    ratio_to: null, comparisons: [], options: { repeat: 1 }, steps, ...extra,
  };
}

// makeRun PLAN {stepDir: {file: text|object}} [top-level files] → a results dir.
function makeRun(p, stepFiles = {}, top = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-report-'));
  tmpDirs.push(dir);
  const write = (file, content) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  };
  write(path.join(dir, 'plan.json'), p);
  for (const [stepDir, files] of Object.entries(stepFiles)) {
    for (const [name, content] of Object.entries(files)) write(path.join(dir, stepDir, name), content);
  }
  for (const [name, content] of Object.entries(top)) write(path.join(dir, name), content);
  return dir;
}

const report = (p, files, top) => buildReport(readRun(makeRun(p, files, top)));

describe('readRun: metrics from the step files', () => {
  const stat = fs.readFileSync(path.join(fixtures, 'haproxy-stat.csv'), 'utf8');
  const netBefore = 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 5 5\nIpExt: InNoRoutes InOctets\nIpExt: 0 100\n';
  const netAfter = 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 17 17\nIpExt: InNoRoutes InOctets\nIpExt: 0 900\n';

  test('two load-generator replicas are merged', () => {
    const p = plan([step('a')]);
    const run = readRun(makeRun(p, {
      'steps/a-1': {
        'loadgen-1.json': k6({ count: 300, failed: 40, ms: 30000, med: 100, p95: 500, p99: 900 }),
        'loadgen-2.json': k6({ count: 280, failed: 60, ms: 30010, med: 120, p95: 400, p99: 1000 }),
        'haproxy-info.txt': 'Name: HAProxy\nMaxconn: 20\nMaxconnReached: 28\nCurrConns: 0\ndescription: test-scenario/a\n',
        'haproxy-stat.csv': stat,
        'netstat-before.txt': netBefore,
        'netstat-after.txt': netAfter,
        'cpu.txt': 'haproxy-lab-haproxy-1 95.3% 40.1MiB\nhaproxy-lab-backend-slow-1 3.5% 20MiB\n',
        'step.json': { started_at: '2024-01-01T00:00:00Z', ended_at: '2024-01-01T00:00:31Z', completed: true, exit_codes: [0, 0] },
      },
    }));
    const m = run.steps[0].measured;
    assert.equal(m.requests, 580);
    assert.equal(m.failed, 100);
    assert.equal(m.successful, 480);
    assert.equal(m.seconds, 30.01);
    assert.equal(m.hits_per_sec, 480 / 30.01);
    // Summaries written before the latency histograms: no percentile of all the requests.
    assert.deepEqual([m.p50_ms, m.p95_ms, m.p99_ms, m.percentiles_from], [null, null, null, 'replicas apart']);
    assert.deepEqual(m.worst_replica_ms, { p50_ms: 120, p95_ms: 500, p99_ms: 1000 });
    assert.equal(m.max_sessions, 20);
    assert.equal(m.max_queue, 80 + 3); // be_slow + be_fast, not the stats backend
    assert.equal(m.errors, 2 + 1 + 4 + 0 + 1 + 7); // fe_main ereq + every BACKEND econ + eresp
    assert.equal(m.maxconn_reached, 28);
    assert.equal(m.listen_overflows, 12);
    assert.deepEqual(m.cpu, { 'haproxy-lab-haproxy-1': 95.3, 'haproxy-lab-backend-slow-1': 3.5 });
    assert.deepEqual(run.steps[0].files.loadgen, ['loadgen-1.json', 'loadgen-2.json']);
    assert.equal(run.steps[0].files.step.completed, true);
    assert.equal(run.incomplete, null);
  });

  test('two replicas with different latencies: the p99 of all their requests from their histograms, not the larger replica\'s', () => {
    // withHistogram DATA LATENCIES: a k6 summary with LATENCIES ([ms, count]) in its histogram.
    const withHistogram = (data, latencies) => ({
      ...data, latency_histogram: histogram(Object.fromEntries(latencies.map(([ms, n]) => [bucketOf(ms), n]))),
    });
    // 1,980 requests at 10 ms and 20 at 300 ms; 980 at 40 ms and 20 at 900 ms.
    // All 3,000: the 1% slowest (30) are 300 and 900 ms ones, so the p99 is 300 ms
    // (each replica's own: 300 and 900), the median 10 ms.
    const dir = makeRun(plan([step('a')], { columns: ['p99_ms'] }), {
      'steps/a-1': {
        'loadgen-1.json': withHistogram(k6({ count: 2000, med: 10, p95: 10, p99: 300 }), [[10, 1980], [300, 20]]),
        'loadgen-2.json': withHistogram(k6({ count: 1000, med: 40, p95: 40, p99: 900 }), [[40, 980], [900, 20]]),
      },
    });
    const m = readRun(dir).steps[0].measured;
    assert.equal(m.percentiles_from, 'histograms');
    assert.ok(Math.abs(m.p99_ms / 300 - 1) <= RESOLUTION, `p99 of all 3,000 requests: expected 300 ms within ${RESOLUTION * 100}%, found ${m.p99_ms}`);
    assert.ok(Math.abs(m.p50_ms / 10 - 1) <= RESOLUTION, `p50 of all 3,000 requests: expected 10 ms within ${RESOLUTION * 100}%, found ${m.p50_ms}`);
    const md = toMarkdown(buildReport(readRun(dir)));
    assert.match(md, /\| step \| p99 ms \(all replicas\) published \| p99 ms \(all replicas\) measured \|/);
    assert.match(md, /latency p50\/p95\/p99 of all replicas' requests 10\.\d\/[0-9.]+\/30\d\.\d ms/);
    assert.doesNotMatch(md, /max of replicas/);
  });

  test('summaries without histograms: one replica\'s own percentiles, several replicas\' worst named apart', () => {
    const one = makeRun(plan([step('a')]), { 'steps/a-1': { 'loadgen-1.json': k6({ count: 300, med: 100, p95: 500, p99: 900 }) } });
    assert.match(toMarkdown(buildReport(readRun(one))), /latency p50\/p95\/p99 100\.0\/500\.0\/900\.0 ms \(one replica: its own\)/);
    const two = makeRun(plan([step('a')]), {
      'steps/a-1': { 'loadgen-1.json': k6({ count: 300, med: 100, p95: 500, p99: 900 }), 'loadgen-2.json': k6({ count: 280, med: 120, p95: 400, p99: 1000 }) },
    });
    assert.match(toMarkdown(buildReport(readRun(two))),
      /latency p50\/p95\/p99 of all replicas' requests - \(no latency histograms in this evidence; the worst replica's own: 120\.0\/500\.0\/1000\.0 ms\)/);
  });

  test('the accept queue on both sides: backlog read back, queue sampled, kernel counters, SYN retries', () => {
    const waits = (counts) => Object.fromEntries(Object.entries(counts)
      .map(([s, count]) => [`connect_waits{after_s:${s}}`, { type: 'counter', values: { count, rate: 0 } }]));
    const replica = (counts) => {
      const data = k6({ count: 1250, ms: 60000 });
      Object.assign(data.metrics, { connect_waits: { type: 'counter', values: { count: 1250 } } }, waits(counts));
      return data;
    };
    const client = (retrans) => `TcpExt: SyncookiesSent TCPSynRetrans\nTcpExt: 0 ${retrans}\n`;
    const p = plan([step('a')]);
    const run = readRun(makeRun(p, {
      'steps/a-1': {
        'loadgen-1.json': replica({ 0: 1000, 1: 150, 3: 100 }),
        'loadgen-2.json': replica({ 0: 1100, 3: 140, 7: 10 }),
        'loadgen-1-netstat-before.txt': client(0),
        'loadgen-1-netstat-after.txt': client(360),
        'loadgen-2-netstat-before.txt': client(2),
        'loadgen-2-netstat-after.txt': client(312),
        'loadgen-1-sysctl.txt': 'net.ipv4.tcp_syn_retries 6\nnet.ipv4.tcp_syn_linear_timeouts 0\n',
        'netstat-before.txt': 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 1 5 5\n',
        'netstat-after.txt': 'TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 301 1705 1712\n',
        'samples.txt': 't haproxy_conns backend_conns accept_queue\n0 900 900 0\n1 2000 2000 129\n2 - - -\n3 2000 2000 57\n',
        'listen-sockets.txt': `State  Recv-Q Send-Q Local Address:Port  Peer Address:Port\nLISTEN 0      128          0.0.0.0:${PORT}       0.0.0.0:*\n`,
        'notes.txt': 'the clients\' kernel has no net.ipv4.tcp_syn_linear_timeouts: this step ran without it\n',
      },
    }));
    const m = run.steps[0].measured;
    assert.equal(m.backlog, 128);
    assert.equal(m.accept_queue_max, 129);
    assert.deepEqual([m.listen_overflows, m.listen_drops, m.syncookies], [1700, 1707, 300]);
    assert.equal(m.syn_retrans, 360 + 310, 'each replica after − before, summed');
    assert.deepEqual(m.connect_waits, { 0: 2100, 1: 150, 3: 240, 7: 10 });
    assert.equal(m.connects_retried, 400);
    assert.deepEqual(m.client_sysctl, { 'net.ipv4.tcp_syn_retries': '6', 'net.ipv4.tcp_syn_linear_timeouts': '0' });
    const report = buildReport(readRun(makeRun({ ...p, readings: [{ kind: 'syn_timing' }] }, {
      'steps/a-1': { 'loadgen-1.json': replica({ 0: 1000, 1: 150, 3: 100 }), 'loadgen-1-sysctl.txt': 'net.ipv4.tcp_syn_linear_timeouts 0\n' },
    })));
    assert.equal(report.readings[0], 'SYN retries, connects by how long they took — a (tcp_syn_linear_timeouts 0): 250 connects after ≥1 s — 1 s: 150, 3 s: 100');
    const md = toMarkdown(buildReport(run));
    assert.match(md, new RegExp(`accept queue of fe_main :${PORT}: backlog \\(ss\\) 128, longest queue sampled 129; HAProxy's kernel: listen overflows 1700, listen drops 1707, SYN cookies sent 300`));
    assert.match(md, /clients: SYN retransmits 670; connects that took about N s: 1 s: 150, 3 s: 240, 7 s: 10 \(clients' kernel: net.ipv4.tcp_syn_retries 6, net.ipv4.tcp_syn_linear_timeouts 0\)/);
    assert.match(md, /- note: the clients' kernel has no net.ipv4.tcp_syn_linear_timeouts/);
  });

  test('a script that does not count connects, a run without ss or client evidence: not measured, not 0', () => {
    const m = readRun(makeRun(plan([step('a')]), { 'steps/a-1': load(100) })).steps[0].measured;
    assert.deepEqual([m.backlog, m.accept_queue_max, m.syn_retrans, m.connects_retried, m.connect_waits], [null, null, null, null, null]);
  });

  test('absent k6 metrics count as 0 and HAProxy files are optional', () => {
    const empty = { metrics: { http_reqs: { values: { count: 0 } } }, state: { testRunDurationMs: 0 } };
    const run = readRun(makeRun(plan([step('a')]), { 'steps/a-1': { 'loadgen-1.json': empty } }));
    const m = run.steps[0].measured;
    assert.equal(m.requests, 0);
    assert.equal(m.failed, 0);
    assert.equal(m.hits_per_sec, 0);
    assert.equal(m.p95_ms, null);
    for (const k of ['max_sessions', 'max_queue', 'errors', 'maxconn_reached', 'listen_overflows', 'cpu']) {
      assert.equal(m[k], null, k);
    }
  });

  test('a half-written summary is ignored, not fatal', () => {
    const run = readRun(makeRun(plan([step('a')]), { 'steps/a-1': { 'loadgen-1.json': k6({ count: 10 }), 'loadgen-2.json': '{"metr' } }));
    assert.equal(run.steps[0].measured.requests, 10);
    assert.deepEqual(run.steps[0].files.unreadable, ['loadgen-2.json']);
  });
});

describe('buildReport', () => {
  test('three repeated runs are aggregated into one row', () => {
    const steps = [1, 2, 3].map((run) => step('a', { run }));
    const r = report(plan(steps), {
      'steps/a-1': load(100), 'steps/a-2': load(130), 'steps/a-3': load(160),
    });
    assert.equal(r.rows.length, 1);
    const row = r.rows[0];
    assert.equal(row.runs, 3);
    assert.equal(row.measured.requests, 130);
    assert.equal(row.min.hits_per_sec, 10);
    assert.equal(row.max.hits_per_sec, 16);
    assert.equal(row.measured.hits_per_sec, 13);
    assert.equal(row.per_run.length, 3);
    // summary.json keeps a repeated step's spread and each run's figures.
    const saved = JSON.parse(summaryJson(r)).rows[0];
    assert.deepEqual([saved.min.hits_per_sec, saved.max.hits_per_sec, saved.per_run.map((x) => x.measured.requests)], [10, 16, [100, 130, 160]]);
  });

  test('±N%: pass within, FAIL outside, FAIL without a published value', () => {
    const r = report(plan([
      step('near', { published: { successful: 100 }, expect: { successful: '±3%' } }),
      step('far', { published: { successful: 100 }, expect: { successful: '±3%' } }),
      step('nopub', { expect: { successful: '±3%' } }),
    ]), { 'steps/near-1': load(102), 'steps/far-1': load(110), 'steps/nopub-1': load(100) });
    const [near, far, nopub] = r.rows;
    assert.equal(near.verdict, 'pass');
    assert.equal(near.verdicts.successful.ok, true);
    assert.match(far.verdict, /^FAIL \(successful 110 vs published 100 \(\+10\.0%, allowed ±3%\)\)$/);
    assert.equal(nopub.verdict, 'FAIL (successful no published value)');
    assert.equal(r.ok, false);
  });

  test('>0, ==0, >=N, <=N, >N, <N compare the measured value', () => {
    const r = report(plan([
      step('a', { expect: { failed: '>0', errors: '==0', requests: '>=100', successful: '<=100', hits_per_sec: '>5', seconds: '<11' } }),
      step('b', { expect: { failed: '>0' } }),
      step('c', { expect: { failed: '==0' } }),
    ]), { 'steps/a-1': load(100, 1), 'steps/b-1': load(100, 0), 'steps/c-1': load(100, 3) });
    const [a, b, c] = r.rows;
    assert.equal(a.verdicts.errors.text, 'not measured'); // no stat file
    assert.deepEqual(Object.entries(a.verdicts).filter(([, v]) => !v.ok).map(([m]) => m), ['errors']);
    assert.equal(b.verdict, 'FAIL (failed 0, expected > 0)');
    assert.equal(c.verdict, 'FAIL (failed 3, expected == 0)');
  });

  test('>step:ID and <step:ID compare with another step (aggregated)', () => {
    const steps = [
      step('base', { run: 1 }), step('base', { run: 2 }),
      step('up', { expect: { hits_per_sec: '>step:base' } }),
      step('down', { expect: { hits_per_sec: '<step:base' } }),
      step('wrong', { expect: { hits_per_sec: '>step:up' } }),
    ];
    const r = report(plan(steps), {
      'steps/base-1': load(100), 'steps/base-2': load(200), 'steps/up-1': load(160),
      'steps/down-1': load(140), 'steps/wrong-1': load(150),
    });
    const v = Object.fromEntries(r.rows.map((row) => [row.id, row.verdict]));
    assert.equal(v.up, 'pass'); // 16 > mean(10, 20) = 15
    assert.equal(v.down, 'pass');
    assert.equal(v.wrong, 'FAIL (hits_per_sec 15.0, expected > up (16.0))');
  });

  test('~ makes a verdict informational: as article / unlike article, never a failure', () => {
    const r = report(plan([
      step('base'),
      step('as', { expect: { hits_per_sec: '~>step:base' } }),
      step('unlike', { expect: { hits_per_sec: '~<step:base', failed: '==0' } }),
      step('tol', { published: { successful: 50 }, expect: { successful: '~±3%' } }),
    ]), { 'steps/base-1': load(100), 'steps/as-1': load(200), 'steps/unlike-1': load(200), 'steps/tol-1': load(100) });
    const v = Object.fromEntries(r.rows.map((row) => [row.id, row.verdict]));
    assert.equal(v.base, 'no checks');
    assert.equal(v.as, 'info: hits_per_sec as article');
    assert.equal(v.unlike, 'pass; info: hits_per_sec unlike article');
    assert.equal(v.tol, 'info: successful unlike article');
    assert.equal(r.rows[1].verdicts.hits_per_sec.info, true);
    assert.equal(r.ok, true);
  });

  test('an unknown expression throws, naming the step and the expression', () => {
    const run = readRun(makeRun(plan([step('a', { expect: { failed: 'lots' } })])));
    assert.throws(() => buildReport(run), /step "a".*"lots"/);
    const ref = readRun(makeRun(plan([step('a', { expect: { failed: '>step:nope' } })])));
    assert.throws(() => buildReport(ref), /no step "nope"/);
    const metric = readRun(makeRun(plan([step('a', { expect: { speed: '>0' } })])));
    assert.throws(() => buildReport(metric), /unknown metric/);
  });

  test('ratio_to: measured and published ratios to the reference step', () => {
    const p = plan([
      step('one', { published: { hits_per_sec: 1000 } }),
      step('two', { published: { hits_per_sec: 1800 }, expect: { ratio: '±10%' } }),
      step('three'),
    ], { ratio_to: 'one', columns: ['hits_per_sec', 'ratio'] });
    const r = report(p, { 'steps/one-1': load(10000), 'steps/two-1': load(19000) });
    const [one, two, three] = r.rows;
    assert.equal(one.measured.ratio, 1);
    assert.equal(two.measured.ratio, 1.9);
    assert.equal(two.published.ratio, 1.8);
    assert.equal(two.verdict, 'pass');
    assert.equal(three.measured, null);
    assert.equal(three.verdict, 'not run');
    const table = formatTable(r);
    assert.match(table, /ratio to one/);
    assert.match(table, /1\.80×\s+1\.90×/);
    assert.match(table, /1\.00×\s+1\.00×/);
  });

  test('comparisons: larger than noise, within noise, one run each', () => {
    const steps = [
      ...[1, 2, 3].map((run) => step('a', { run })),
      ...[1, 2, 3].map((run) => step('b', { run })),
      ...[1, 2].map((run) => step('c', { run })),
      step('d'), step('e'),
    ];
    const p = plan(steps, {
      comparisons: [
        { a: 'a', b: 'b', metric: 'hits_per_sec', article: 'b twice as fast' },
        { a: 'a', b: 'c', metric: 'hits_per_sec', article: 'no difference' },
        { a: 'd', b: 'e' },
      ],
    });
    const r = report(p, {
      'steps/a-1': load(100), 'steps/a-2': load(110), 'steps/a-3': load(120), // 11 ±1
      'steps/b-1': load(200), 'steps/b-2': load(220), 'steps/b-3': load(240), // 22 ±2
      'steps/c-1': load(105), 'steps/c-2': load(135), // 12 ±1.5
      'steps/d-1': load(100), 'steps/e-1': load(300),
    });
    const [ab, ac, de] = r.comparisons;
    assert.equal(ab.meanA, 11);
    assert.equal(ab.meanB, 22);
    assert.equal(ab.spreadA, 1);
    assert.equal(ab.spreadB, 2);
    assert.equal(ab.diffPct, 100);
    assert.equal(ab.larger_than_noise, true);
    assert.match(ab.text, /11\.0 ±1\.0 \(3 runs\) vs 22\.0 ±2\.0 \(3 runs\) → b \+100\.0%, larger than the noise; article: b twice as fast/);
    assert.equal(ac.larger_than_noise, false);
    assert.match(ac.text, /within the noise/);
    assert.equal(de.larger_than_noise, null);
    assert.equal(de.metric, 'hits_per_sec');
    assert.match(de.text, /one run each: cannot tell noise/);
    assert.ok(formatTable(r).includes(ab.text));
  });

  test('missing files, INCOMPLETE marker and steps not run', () => {
    const p = plan([
      step('ran', { published: { successful: 100 }, expect: { successful: '±3%' } }),
      step('half', { expect: { failed: '>0' } }), // directory with step.json only
      step('never', { expect: { failed: '>0' } }), // no directory at all
    ]);
    const dir = makeRun(p, {
      'steps/ran-1': load(100),
      'steps/half-1': { 'step.json': { started_at: 'x', completed: false } },
    }, { INCOMPLETE: 'interrupted by SIGINT at step 2\n' });
    const r = buildReport(readRun(dir));
    assert.equal(r.incomplete, 'interrupted by SIGINT at step 2');
    assert.deepEqual(r.rows.map((row) => row.verdict), ['pass', 'not run', 'not run']);
    assert.equal(r.ok, true); // not-run steps do not fail
    const table = formatTable(r);
    assert.match(table, /\(INCOMPLETE\)/);
    assert.match(table, /INCOMPLETE: interrupted by SIGINT at step 2$/);
    assert.match(table, /never\s+-\s+-\s+-\s+-\s+-\s+-\s+not run/);
    assert.match(toMarkdown(r).split('\n')[0], /^# test-scenario — a test \(INCOMPLETE\)$/);
  });
});

describe('formatting', () => {
  const sample = () => report(plan([
    step('m20', { label: 'maxconn 20', x: 20, published: { successful: 180, failed: 86, hits_per_sec: 6 }, expect: { successful: '±3%' } }),
    step('m100', { label: 'maxconn 100', x: 100, published: { hits_per_sec: 33 } }),
  ], { notes: ['Little\'s law: 100 clients × 3 s = 33 hits/sec'] }), {
    'steps/m20-1': { 'loadgen-1.json': k6({ count: 580, failed: 399, ms: 30000 }) },
    'steps/m100-1': { 'loadgen-1.json': k6({ count: 1000, failed: 0, ms: 30000 }) },
  });

  test('formatValue: counts, rates, ratios', () => {
    assert.equal(formatValue('successful', 180.4), '180');
    assert.equal(formatValue('hits_per_sec', 6), '6.0');
    assert.equal(formatValue('hits_per_sec', 0.524), '0.52');
    assert.equal(formatValue('hits_per_sec', 33.333), '33.3');
    assert.equal(formatValue('ratio', 1.5), '1.50×');
    assert.equal(formatValue('failed', null), '-');
  });

  test('formatTable shows published and measured, numbers right-aligned', () => {
    const table = formatTable(sample());
    const lines = table.split('\n');
    assert.match(lines[0], /^test-scenario — a test$/);
    assert.match(table, /published\s+measured/);
    const m20 = lines.find((l) => l.startsWith('maxconn 20'));
    assert.match(m20, /^maxconn 20\s+180\s+181\s+86\s+399\s+6\.0\s+6\.0\s+pass$/);
    const m100 = lines.find((l) => l.startsWith('maxconn 100'));
    assert.match(m100, /^maxconn 100\s+-\s+1000\s+-\s+0\s+33\.0\s+33\.3\s+no checks$/);
    // Right-aligned: the measured hits/sec of both rows end in the same column.
    assert.equal(m20.indexOf('6.0  pass') + 3, m100.indexOf('33.3  no') + 4);
    assert.match(table, /Little's law/);
    assert.match(table, /result: ok/);
  });

  test('toCSV: header, every metric once, quoted fields', () => {
    const r = sample();
    r.rows[0].label = 'maxconn 20, "small"';
    const csv = toCSV(r);
    const [header, first] = csv.split('\n');
    const cols = header.split(',');
    assert.deepEqual(cols.slice(0, 6), ['step', 'label', 'x', 'runs', 'successful_published', 'successful_measured']);
    assert.equal(cols.at(-1), 'verdict');
    assert.equal(new Set(cols).size, cols.length);
    for (const m of ['requests', 'p99_ms', 'max_sessions', 'listen_overflows']) assert.ok(cols.includes(`${m}_measured`), m);
    assert.ok(first.startsWith('m20,"maxconn 20, ""small""",20,1,180,181,86,399,'));
    const fail = buildReport(readRun(makeRun(plan([step('a', { expect: { failed: '>0' } })]), { 'steps/a-1': load(10) })));
    assert.match(toCSV(fail), /,"FAIL \(failed 0, expected > 0\)"\n$/);
  });

  test('toMarkdown: title, source, command, versions, table, notes, details and configs', () => {
    const cfg = 'global\n    maxconn 20\n';
    const steps = [1, 2].map((run) => step('m20', { run, label: 'maxconn 20', published: { successful: 180 } }));
    const r = report(plan(steps, { notes: ['a note'], comparisons: [] }), {
      'steps/m20-1': { 'loadgen-1.json': k6({ count: 580, failed: 400 }), 'cpu.txt': 'haproxy-lab-haproxy-1 95.3% 40MiB\n', 'haproxy-info.txt': 'MaxconnReached: 28\n' },
      'steps/m20-2': load(580, 400),
    });
    const md = toMarkdown(r, {
      configs: { 'steps/m20-1': cfg, 'steps/m20-2': cfg },
      versions: { haproxy: '3.2.4', k6: 'v1.2.0', node: 'v24.1.0', cpu: '2 x AMD EPYC' },
      command: 'scripts/scenario.sh run maxconn-sweep',
    });
    assert.match(md, /^# test-scenario — a test\n/);
    assert.match(md, /Source: An article — A\. Author, 2016 \(seed `seed\.txt`\)/);
    assert.match(md, /scripts\/scenario\.sh run maxconn-sweep/);
    assert.match(md, /Versions: HAProxy 3\.2\.4, k6 v1\.2\.0, Node\.js v24\.1\.0, CPUs 2 x AMD EPYC/);
    assert.match(md, /\| step \| successful published \| successful measured \|/);
    assert.match(md, /\| maxconn 20 \| 180 \| 180 \|/);
    assert.match(md, /- a note/);
    assert.match(md, /haproxy-lab-haproxy-1 95\.3%/); // mean over runs where sampled
    assert.match(md, /maxconn reached 28/);
    assert.match(md, /```haproxy\nglobal\n {4}maxconn 20\n```/);
    assert.equal(md.split('maxconn 20\n```').length, 2, 'identical configs of repeated runs shown once');
  });
});

describe('readings in report.md', () => {
  test('two readings: two headings, each reading\'s text under its own', () => {
    const p = plan([step('a'), step('b')], { littles_law: { service_seconds: 3, clients: 100 }, readings: [{ kind: 'syn_timing' }] });
    const r = report(p, { 'steps/a-1': load(100), 'steps/b-1': load(200) });
    const md = toMarkdown(r);
    assert.deepEqual(md.split('\n').filter((l) => l.startsWith('## ')), ['## Results', '## Charts', '## Little\'s law', '## SYN timing', '## Steps']);
    const section = (title) => md.split(`## ${title}\n\n`)[1].split('\n## ')[0];
    const little = section('Little\'s law').trimEnd().split('\n');
    assert.equal(little.length, 3);
    assert.equal(little[0], '- Little\'s law, a: L = X × W = 10.0/s × 3 s = 30 requests in service');
    assert.match(little[1], /^- Little's law, b: L = X × W = 20\.0\/s/);
    assert.match(little[2], /^- maxconn needed = clients × service time/);
    assert.equal(section('SYN timing'), '- SYN retries, connects by how long they took — no step counted its connects\n');
    // summary.json keeps one flat list of lines; read back, report.md has one heading for them.
    const saved = JSON.parse(JSON.stringify(r));
    assert.deepEqual(saved.readings, [...little, ...section('SYN timing').trimEnd().split('\n')].map((l) => l.slice(2)));
    assert.equal(saved.readingSections, undefined);
    assert.match(toMarkdown(saved), /\n## Readings\n\n- Little's law, a: .*\n- Little's law, b: .*\n- maxconn needed .*\n- SYN retries, /);
  });
});

describe('writeOutputs', () => {
  test('writes the four outputs, regenerates them, touches nothing else', () => {
    const p = plan([step('a', { published: { hits_per_sec: 10 } }), step('b')]);
    const dir = makeRun(p, { 'steps/a-1': load(100, 5) });
    fs.mkdirSync(path.join(dir, 'configs'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'configs/a-1.cfg'), 'global\n    maxconn 77\n');
    const planBefore = fs.readFileSync(path.join(dir, 'plan.json'), 'utf8');
    const r = buildReport(readRun(dir));
    assert.deepEqual(writeOutputs(dir, r), ['summary.json', 'summary.csv', 'report.md', 'chart.svg']);
    assert.deepEqual(writeOutputs(dir, r, { command: 'again' }), ['summary.json', 'summary.csv', 'report.md', 'chart.svg']);
    assert.deepEqual(fs.readdirSync(dir).sort(), ['chart.svg', 'configs', 'plan.json', 'report.md', 'steps', 'summary.csv', 'summary.json']);
    assert.equal(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'), planBefore);
    // A step that ran once has its figures once (no min, max or run copy).
    const once = JSON.parse(JSON.stringify(r));
    for (const row of once.rows) {
      delete row.min;
      delete row.max;
      for (const run of row.per_run) delete run.measured;
    }
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8')), once);
    assert.match(fs.readFileSync(path.join(dir, 'report.md'), 'utf8'), /maxconn 77/); // config read from the plan's path
    assert.match(fs.readFileSync(path.join(dir, 'summary.csv'), 'utf8'), /^step,label,x,runs,/);
    const svg = fs.readFileSync(path.join(dir, 'chart.svg'), 'utf8');
    assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  });

  test('a step that held connections: chart-time.svg too, linked from report.md; gone again when no step has a series', () => {
    const held = step('a', { load: { seconds: 10, env: { SLEEP_MS: '4000' } } });
    const samples = 't haproxy_conns backend_conns accept_queue cum_req at_ms\n1 50 49 0 10 1000\n2 100 98 0 20 2000\n';
    const dir = makeRun(plan([held]), { 'steps/a-1': { ...load(100), 'haproxy-samples.txt': samples } });
    const r = buildReport(readRun(dir));
    assert.deepEqual(r.rows[0].series, { haproxy: { t: [0, 1], conns: [50, 100], backend: [49, 98] } }, 'from the first sample (no step start)');
    assert.deepEqual(writeOutputs(dir, r), ['summary.json', 'summary.csv', 'report.md', 'chart.svg', 'chart-time.svg']);
    assert.deepEqual(checkTags(fs.readFileSync(path.join(dir, 'chart-time.svg'), 'utf8')), { root: 'svg', ok: true });
    const md = fs.readFileSync(path.join(dir, 'report.md'), 'utf8');
    assert.match(md, /\n## Charts\n\n!\[test-scenario: the steps against the x\]\(chart\.svg\)\n\n!\[[^\]]*over time[^\]]*\]\(chart-time\.svg\)\n/);
    const none = { ...r, rows: r.rows.map((row) => ({ ...row, series: null })) };
    assert.deepEqual(writeOutputs(dir, none), ['summary.json', 'summary.csv', 'report.md', 'chart.svg']);
    assert.equal(fs.existsSync(path.join(dir, 'chart-time.svg')), false, 'a stale chart-time.svg is removed');
    assert.doesNotMatch(fs.readFileSync(path.join(dir, 'report.md'), 'utf8'), /chart-time/);
  });
});


describe('listening sockets, judged from the ss view the runner saved', () => {
  const outcome = (somaxconn) => `started_at_ms=1\nended_at_ms=2\nexit_codes=0\nhaproxy_state=x\n${somaxconn ? `haproxy_somaxconn=${somaxconn}\n` : ''}`;
  // fe_main's port (topology.txt).
  const port = TOPOLOGY.frontends[0].port;
  const ss = (backlog) => `State Recv-Q Send-Q Local Address:Port Peer Address:Port\nLISTEN 0 ${backlog} 0.0.0.0:${port} 0.0.0.0:*\n`;
  const run = (backlog, somaxconn = 65535) => report(plan([step('a')]), {
    'steps/a-1': { ...load(100), 'outcome.env': outcome(somaxconn), 'haproxy-listen-sockets.txt': ss(backlog) },
  }, { 'configs/a-1.listeners': `fe_main ${port} 5000\n` });
  test('the backlog the config asks: no verdict of its own, nothing in the figures', () => {
    const r = run(5000);
    assert.equal(r.rows[0].verdicts.listeners, undefined);
    assert.equal(r.rows[0].measured.listeners_differ, undefined);
  });
  test('the previous step\'s backlog (a reload where a restart was needed): the step fails, saying which socket', () => {
    const r = run(128);
    const problem = `haproxy: fe_main :${port} has backlog 128, the config asks 5000`;
    assert.deepEqual(r.rows[0].measured.listeners_differ, [problem]);
    assert.equal(r.rows[0].verdict, `FAIL (listeners HAProxy's listening sockets are not its config's: ${problem})`);
  });
  test('a run that saved no somaxconn (recorded before it was saved): not judged', () => {
    assert.equal(run(128, null).rows[0].verdicts.listeners, undefined);
  });
});

describe('the preflight\'s limits in the report (connection scenarios)', () => {
  const caps = [
    { limit: 'HAProxy open files (nofile)', value: 2100, allows: 950 },
    { limit: 'conntrack table', value: 262144, allows: 130000 },
    { limit: 'free memory (33 KB per connection)', value: 21 * 1024 ** 3, allows: 546876 },
    { limit: 'kernel fs.nr_open', value: 1048576, allows: null }, // Infinity, as JSON keeps it
  ];
  const preflight = { target: 1100, largest: 950, fits: true, wall: 950, binding: caps[0], caps, limits: { processes: 1 } };

  test('each limit with what it allows, the one that binds, the next and the wall', () => {
    const r = report(plan([step('a')], { preflight }), { 'steps/a-1': load(100) });
    assert.deepEqual({ ...r.limits, caps: undefined }, {
      target: 1100, largest: 950, binding: 'HAProxy open files (nofile)', next: caps[1], wall: 950, processes: 1, caps: undefined,
    });
    const md = toMarkdown(r);
    assert.match(md, /\| HAProxy open files \(nofile\) \| 2100 \| 950 \| binds first \|/);
    assert.match(md, /\| conntrack table \| 262144 \| 130000 \| next \|/);
    assert.match(md, /\| free memory \(33 KB per connection\) \| 21\.0 GiB \| 546876 \| {2}\|/);
    assert.match(md, /\| kernel fs\.nr_open \| 1048576 \| no limit \| {2}\|/);
    assert.match(md, /next to run out: conntrack table, at 130000\./);
    assert.match(md, /Past the wall: 1 HAProxy process \(--processes\) plan for 950;/);
  });

  test('no preflight (other scenarios): no limits, no section', () => {
    const r = report(plan([step('a')]), { 'steps/a-1': load(100) });
    assert.equal(r.limits, null);
    assert.doesNotMatch(toMarkdown(r), /## Limits/);
  });
});
