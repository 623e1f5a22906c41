// report.mjs on long-lived and held-connection steps: samples on both sides
// of HAProxy, its log's termination states, memory per connection, the
// tipping point and the "±N%of:" / "A..B" expectations.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, readRun } from '../report/report.mjs';
import { parseActivity, parseMemory, parseSamples, parseTerminations } from '../evidence/parsers.mjs';
import { renderChart } from '../report/chart.mjs';
import { LOAD_TOOLS } from '../core/loadtools.mjs';
import { READERS } from '../evidence/readers.mjs';
import { METRICS } from '../core/metrics.mjs';

const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// floor: { count, avg, failed } of open.js's sleep-0 probes, which k6 counts
// in its totals too and reports apart under {scenario:floor}.
function k6({ count, failed = 0, ms = 10000, avg = 500, p99 = 900, dropped = 0, floor }) {
  const probes = floor ?? { count: 0, avg: 0, failed: 0 };
  const total = count + probes.count;
  return {
    metrics: {
      http_reqs: { values: { count: total } },
      http_req_failed: { values: { passes: failed + probes.failed } },
      http_req_duration: { values: { avg: (avg * count + probes.avg * probes.count) / total, med: avg, 'p(95)': p99, 'p(99)': p99 } },
      ...(floor === undefined ? {} : {
        'http_reqs{scenario:floor}': { values: { count: probes.count } },
        'http_req_failed{scenario:floor}': { values: { passes: probes.failed } },
        'http_req_duration{scenario:floor}': { values: { avg: probes.avg } },
      }),
      ...(dropped ? { dropped_iterations: { values: { count: dropped } } } : {}),
    },
    state: { testRunDurationMs: ms },
  };
}

function holder(index, { planned, ok, failed = 0, start = 1000, minOpen = planned, failures = {} }) {
  return {
    tool: 'holder', version: 1, index, replicas: 2, planned, opened: planned, connected: planned, ok, failed, failures,
    started_at_ms: start, ended_at_ms: start + 20000, ramp_up: 2, hold: 10, ramp_down: 2,
    peak_open: minOpen, hold_window: { from_t: 3, to_t: 11, min_open: minOpen, max_open: minOpen },
    memory: { rss_start: 50e6, rss_peak: 50e6 + minOpen * 2500, rss_at_peak_open: 50e6 + minOpen * 2500, heap_used_at_peak_open: 1 },
    bytes_per_connection: 2500,
    samples: Array.from({ length: 15 }, (_, t) => ({ t, open: t >= 2 && t <= 12 ? minOpen : 0, opened_total: planned, ok_total: 0, failed_total: 0, rss_bytes: 50e6 })),
  };
}

function run(steps, files, extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-long-'));
  tmpDirs.push(dir);
  const plan = {
    scenario: 's', description: 'd', x: { label: 'x' }, columns: ['plateau_conns'], options: {}, steps, ...extra,
  };
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify(plan));
  for (const [stepDir, content] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, stepDir), { recursive: true });
    for (const [name, text] of Object.entries(content)) {
      fs.writeFileSync(path.join(dir, stepDir, name), typeof text === 'string' ? text : JSON.stringify(text));
    }
  }
  return buildReport(readRun(dir));
}

const step = (id, extra = {}) => ({
  id, dir: `steps/${id}`, label: id, x: id, load: { seconds: 10, env: { RATE: '100' } }, model: {}, expect: {}, published: {}, ...extra,
});

const LOG = [
  '172.22.0.7:1 [22/Nov/2026:04:48:48.927] fe_main be_slow/slow1 0/0/0/0/2001 200 170 - - SD-- 93/93/92/92/0 0/0 "GET /ping HTTP/1.1"',
  '172.22.0.7:2 [22/Nov/2026:04:48:48.967] fe_main be_slow/slow1 0/0/0/-1/2002 -1 0 - - SD-- 92/92/91/91/0 0/0 "GET /ping HTTP/1.1"',
  '172.22.0.7:3 [22/Nov/2026:04:48:48.967] fe_main be_slow/slow1 0/0/0/0/90 200 170 - - CD-- 92/92/91/91/0 0/0 "GET /ping HTTP/1.1"',
  'some other line',
].join('\n');

describe('parsers', () => {
  test('termination states by who and when: the article\'s SD line counts', () => {
    assert.deepEqual(parseTerminations(LOG), { SD: 2, CD: 1 });
    assert.deepEqual(parseTerminations(''), {});
    assert.equal(parseTerminations(null), null);
  });

  test('docker stats memory in bytes, units of either kind', () => {
    assert.deepEqual(parseMemory('a-haproxy-1 2.08% 20.5MiB / 2GiB\nb 0.1% 1.5GiB / 4GiB\nc 1% 800kB / 1GB\nbad line\n'),
      { 'a-haproxy-1': 20.5 * 1024 ** 2, b: 1.5 * 1024 ** 3, c: 800e3 });
  });

  test('cgroup memory (container_memory): "name bytes" lines, the header skipped', () => {
    assert.deepEqual(parseMemory('# NAME BYTES: each container\'s memory\na-haproxy-1 21495808\nb 0\nbad line\n'),
      { 'a-haproxy-1': 21495808, b: 0 });
    assert.equal(parseMemory(null), null);
  });

  test('samples: "-" is no answer, the header is skipped', () => {
    assert.deepEqual(parseSamples('t haproxy_conns backend_conns accept_queue\n0 5 4 129\n2 - - -\n'),
      [{ t: 0, haproxy: 5, backend: 4, queue: 129, requests: null, at: null }, { t: 2, haproxy: null, backend: null, queue: null, requests: null, at: null }]);
  });

  test('show activity: each counter\'s total, the per-thread list left out', () => {
    const a = parseActivity('thread_id: 1 (1..2)\nloops: 1151 [ 630 521 ]\npoll_io: 315 [ 238 77 ]\navg_loop_us: 46 [ 64 28 ]\n');
    assert.deepEqual([a.loops, a.poll_io, a.avg_loop_us, a.thread_id], [1151, 315, 46, undefined]);
    assert.equal(parseActivity(null), null);
  });

  test('samples with the requests HAProxy received so far and the time in ms', () => {
    assert.deepEqual(parseSamples('t haproxy_conns backend_conns accept_queue cum_req at_ms\n1 5 4 0 1200 1700000000123\n2 - - - - 1700000001123\n'),
      [{ t: 1, haproxy: 5, backend: 4, queue: 0, requests: 1200, at: 1700000000123 }, { t: 2, haproxy: null, backend: null, queue: null, requests: null, at: 1700000001123 }]);
  });

  test('samples with the load frontends\' req_tot: requests counts them, not CumReq (which counts the probes\' runtime API sessions too)', () => {
    const header = 't haproxy_conns backend_conns accept_queue cum_req at_ms frontend_req\n';
    assert.deepEqual(parseSamples(`${header}1 5 4 0 1203 1700000000123 1200\n2 - - - - 1700000001123 -\n`).map((x) => x.requests), [1200, null]);
    // A TCP frontend has no req_tot: every sample falls back to CumReq, never a mix of the two.
    assert.deepEqual(parseSamples(`${header}1 5 4 0 1203 1700000000123 1200\n2 5 4 0 1300 1700000001123 -\n`).map((x) => x.requests), [1203, 1300]);
  });

  test('samples of runs before the accept queue was sampled: 3 columns, no queue', () => {
    assert.deepEqual(parseSamples('t haproxy_conns backend_conns\n0 5 4\n'), [{ t: 0, haproxy: 5, backend: 4, queue: null, requests: null, at: null }]);
  });
});

describe('long-lived steps', () => {
  const samples = 't haproxy_conns backend_conns\n0 10 9\n2 60 58\n5 98 97\n6 101 100\n8 103 99\n9 99 101\n10 100 100\n12 3 2\n';

  test('plateau = median of the second half; Little\'s law uses the offered RATE', () => {
    const r = run([step('a', { expect: { plateau_conns: '±5%of:littles_conns', mean_ms: '±10%of:half', failure_pct: '0..1' }, model: { half: 500 } })],
      { 'steps/a': { 'loadgen-1.json': k6({ count: 900, avg: 1010 }), 'samples.txt': samples, 'haproxy-log.txt': LOG } });
    const m = r.rows[0].measured;
    // Samples at 5, 6, 8, 9 s of 10 (the one at 10 s is the load's end).
    assert.equal(m.plateau_conns, 99);
    assert.equal(m.backend_plateau, 99);
    assert.equal(m.haproxy_conns_peak, 103);
    assert.equal(m.littles_conns, 101); // 100/s × 1.01 s, not 90/s completed
    assert.equal(m.sd_aborts, 2);
    assert.equal(m.cd_aborts, 1);
    assert.equal(r.rows[0].verdict.startsWith('FAIL'), true); // mean 1010 vs model 500
    assert.match(r.rows[0].verdicts.mean_ms.text, /vs half 500/);
    assert.equal(r.rows[0].verdicts.plateau_conns.ok, true);
    assert.equal(r.rows[0].verdicts.failure_pct.ok, true);
  });

  // A sampler that fell behind (a slow docker stats): two samples in the
  // second half, the one at the load's end reading the connections draining.
  test('plateau: a sample at the load\'s end is not the plateau', () => {
    const few = 't haproxy_conns backend_conns\n0 25 27\n1 106 107\n3 104 105\n5 93 94\n10 92 93\n12 36 36\n';
    const r = run([step('a', { load: { seconds: 12, env: { RATE: '200' } } })],
      { 'steps/a': { 'loadgen-1.json': k6({ count: 2400, avg: 500 }), 'samples.txt': few } });
    assert.deepEqual([r.rows[0].measured.plateau_conns, r.rows[0].measured.backend_plateau], [92, 93]);
  });

  // A busy machine: mean 566.8 ms against the 500 ms model, what the
  // machine adds included. The sleep-0 probes beside the load measure what the
  // machine adds; they are kept out of the load's own count and mean.
  test('the sleep/2 model is judged above the floor the probes measured in the same run', () => {
    const expect = { mean_above_floor_ms: '±10%of:half', mean_ms: '~±10%of:half', failed: '==0' };
    const busy = run([step('a', { expect, model: { half: 500 } })],
      { 'steps/a': { 'loadgen-1.json': k6({ count: 900, avg: 566.8, floor: { count: 60, avg: 63.7, failed: 0 } }) } });
    const m = busy.rows[0].measured;
    assert.equal(m.requests, 900);
    assert.ok(Math.abs(m.mean_ms - 566.8) < 1e-9, `mean ${m.mean_ms}`);
    assert.ok(Math.abs(m.floor_ms - 63.7) < 1e-9, `floor ${m.floor_ms}`);
    assert.ok(Math.abs(m.mean_above_floor_ms - 503.1) < 1e-9);
    assert.equal(busy.rows[0].verdicts.mean_above_floor_ms.ok, true);
    assert.equal(busy.rows[0].verdicts.mean_ms.ok, false); // the old check would have failed
    // A real departure from the model still fails: the backend sleeping too long.
    const wrong = run([step('a', { expect, model: { half: 500 } })],
      { 'steps/a': { 'loadgen-1.json': k6({ count: 900, avg: 700, floor: { count: 60, avg: 60, failed: 1 } }) } });
    assert.equal(wrong.rows[0].measured.failed, 0); // a failed probe is not a failed request of the load
    assert.equal(wrong.rows[0].verdicts.mean_above_floor_ms.ok, false);
    assert.match(wrong.rows[0].verdicts.mean_above_floor_ms.text, /640/);
  });

  test('no floor without probes (FLOOR_RATE unset)', () => {
    const r = run([step('a')], { 'steps/a': { 'loadgen-1.json': k6({ count: 10 }) } });
    assert.equal(r.rows[0].measured.floor_ms, null);
    assert.equal(r.rows[0].measured.mean_above_floor_ms, null);
  });

  test('a range verdict fails outside it, with the bounds in the text', () => {
    const r = run([step('a', { expect: { failure_pct: '35..65' } })], { 'steps/a': { 'loadgen-1.json': k6({ count: 100, failed: 20 }) } });
    assert.equal(r.rows[0].verdicts.failure_pct.ok, false);
    assert.match(r.rows[0].verdicts.failure_pct.text, /20\.0, expected 35 to 65/);
  });

  test('tipping point: first step past factor × the flat region, or with drops; chart of p99 against the rate', () => {
    const rates = [[100, 5], [200, 6], [400, 8], [800, 40], [1600, 400]];
    const steps = rates.map(([rate]) => step(`r${rate}`, { load: { seconds: 10, env: { RATE: String(rate) } } }));
    const files = Object.fromEntries(rates.map(([rate, p99]) => [`steps/r${rate}`, { 'loadgen-1.json': k6({ count: rate * 10, p99 }) }]));
    const readings = [{ kind: 'tipping_point', metric: 'p99_ms', factor: 5, article: '31.5k' }];
    const chart = { y: 'p99_ms', y_label: 'p99 latency ms', y2: 'dropped', y2_label: 'dropped requests' };
    const r = run(steps, files, { readings, chart });
    assert.equal(r.ok, true);
    assert.equal(r.tipping_point.below, 400);
    assert.equal(r.tipping_point.above, 800);
    assert.match(r.readings.join('\n'), /tipping point: between 400\.0 and 800\.0 requests\/sec .*article: 31\.5k/);
    const svg = renderChart(r);
    assert.match(svg, /<polyline class="p99" /);
    assert.match(svg, /<polyline class="p50" /);
    assert.match(svg, />s: x vs p50 and p99 latency and failures</);
    // Flat all the way: no tipping point is a failed run, saying what to do.
    const flat = run(steps.slice(0, 3), files, { readings });
    assert.equal(flat.ok, false);
    assert.match(flat.readings.join('\n'), /none up to 400\.0 requests\/sec.*step the rate higher/);
    // Drops mark it too, even with a flat latency.
    const dropFiles = { ...files, 'steps/r400': { 'loadgen-1.json': k6({ count: 4000, p99: 7, dropped: 400 }) } };
    assert.equal(run(steps.slice(0, 3), dropFiles, { readings }).tipping_point.above, 400);
    // A second step already past the tipping point is not the flat region:
    // the first step alone is (88 → 1,935 ms on a ceiling curve).
    const coarse = [[4000, 88], [8000, 1935], [12000, 2009]];
    const coarseSteps = coarse.map(([rate]) => step(`c${rate}`, { load: { seconds: 10, env: { RATE: String(rate) } } }));
    const coarseFiles = Object.fromEntries(coarse.map(([rate, p99]) => [`steps/c${rate}`, { 'loadgen-1.json': k6({ count: rate * 10, p99 }) }]));
    const tipped = run(coarseSteps, coarseFiles, { readings });
    assert.equal(tipped.tipping_point.flat, 88);
    assert.equal(tipped.tipping_point.above, 8000);
    assert.match(tipped.readings.join('\n'), /88\.0 → 1935\.0 ms \(flat region 88\.0 ms/);
  });
});

describe('held connections', () => {
  test('replicas merged; bytes per connection from container memory growth; OOM named', () => {
    const s = step('level', { connections: 1000, load: { tool: 'holder', seconds: 14, env: {} }, expect: { client_held: '±0%of:connections', failed: '==0' } });
    const r = run([s], {
      'steps/level': {
        'holder-1.json': holder(1, { planned: 500, ok: 500 }),
        'holder-2.json': holder(2, { planned: 500, ok: 500, start: 1400 }),
        'memory-before.txt': 'p-haproxy-1 1% 20MiB / 2GiB\np-backend-slow-1 1% 40MiB / 512MiB\n',
        'cpu.txt': 'p-haproxy-1 5% 30MiB / 2GiB\np-backend-slow-1 3% 48MiB / 512MiB\np-holder-1 1% 60MiB / 1GiB\n',
        'samples.txt': 't haproxy_conns backend_conns\n7 1000 1000\n',
        'step.json': { haproxy_state: 'oom_killed=true status=exited exit=137' },
      },
    }, { readings: [{ kind: 'memory' }] });
    const m = r.rows[0].measured;
    assert.equal(m.requests, 1000);
    assert.equal(m.client_held, 1000);
    assert.equal(m.connections, 1000);
    assert.equal(m.bytes_haproxy, (10 * 1024 ** 2) / 1000);
    assert.equal(m.bytes_backend, (8 * 1024 ** 2) / 1000);
    assert.equal(m.bytes_holder, 2500);
    assert.equal(m.oom_killed, 1);
    // Connections over time (chart-time.svg): the holders' per second from
    // the earliest start (no step start in step.json), HAProxy's on its own clock.
    const { clients, haproxy } = r.rows[0].series;
    assert.deepEqual([clients.t.length, clients.t[0], clients.open[1], clients.open[2]], [15, 0, 0, 1000]);
    assert.deepEqual(haproxy, { t: [7], conns: [1000], backend: [1000] });
    assert.equal(r.rows[0].verdict, 'pass');
    assert.match(r.readings.join('\n'), /1000 held, bytes per connection HAProxy 10\.5 KB, backend 8\.4 KB, client 2\.5 KB; HAProxy was OOM-killed/);
  });

  test('failures by reason reach the row', () => {
    const s = step('level', { connections: 10, load: { tool: 'holder', seconds: 10, env: {} }, expect: { failed: '==0' } });
    const r = run([s], { 'steps/level': { 'holder-1.json': holder(1, { planned: 10, ok: 7, failed: 3, minOpen: 7, failures: { ECONNRESET: 3 } }) } });
    assert.deepEqual(r.rows[0].failures, { ECONNRESET: 3 });
    assert.match(r.rows[0].verdict, /^FAIL \(failed 3, expected == 0\)/);
  });
});

describe('load tools: the report reads a step with its tool\'s reader', () => {
  const stepDir = (files) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-long-'));
    tmpDirs.push(dir);
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), typeof text === 'string' ? text : JSON.stringify(text));
    return dir;
  };
  const both = {
    'loadgen-1.json': k6({ count: 10 }),
    'loadgen-1-netstat-before.txt': 'TcpExt: TCPSynRetrans\nTcpExt: 1\n',
    'loadgen-1-netstat-after.txt': 'TcpExt: TCPSynRetrans\nTcpExt: 4\n',
    'holder-1.json': holder(1, { planned: 20, ok: 20 }),
    'vegeta-1.json': { tool: 'vegeta', version: '12.13.0', requests: 40, ok: 40, failed: 0, dropped: 0, cpu: { ns: 4e6, source: 'cgroup v1 cpuacct.usage' },
      report: { requests: 40, success: 1, rate: 10, duration: 4e9, latencies: { '50th': 1e6, '95th': 2e6, '99th': 3e6, mean: 1.5e6 } } },
    'h2load-1.json': { tool: 'h2load', version: '1.70.0', requests: 50, ok: 50, failed: 0, dropped: 0, seconds: 5, req_rate: 10,
      latency_ms: { min: 0.2, max: 4, median: 1, p95: 2, p99: 3, mean: 1.5 }, cpu: { ns: 3e6, source: 'cgroup v1 cpuacct.usage' } },
  };

  test('every load tool has a reader, and each reader measures exactly the metrics it lists', () => {
    assert.deepEqual(Object.keys(READERS).sort(), Object.keys(LOAD_TOOLS).sort(), 'readers (evidence/readers.mjs) vs load tools (core/loadtools.mjs)');
    for (const [name, reader] of Object.entries(READERS)) {
      assert.equal(typeof reader.read, 'function', name);
      for (const m of reader.MEASURES) assert.ok(METRICS.includes(m), `${name}: ${m} is not in metrics.mjs`);
      const out = reader.read(stepDir(both), step('a'));
      const produced = Object.keys({ ...out.measured, ...out.client }).filter((k) => METRICS.includes(k));
      assert.deepEqual(produced.sort(), [...reader.MEASURES].sort(), name);
      assert.deepEqual(out.unreadable, [], name);
    }
  });

  test('step.load.tool picks the summaries; no tool means k6; an unknown one is named', () => {
    const dir = stepDir(both);
    const k6Step = READERS.k6.read(dir, step('a'));
    assert.deepEqual([k6Step.files, k6Step.measured.requests, k6Step.client.syn_retrans, k6Step.merged], [['loadgen-1.json'], 10, 3, null]);
    const held = READERS.holder.read(dir, step('a', { connections: 20 }));
    assert.deepEqual([held.files, held.measured.client_held, held.client.bytes_holder, held.merged.inputs], [['holder-1.json'], 20, 2500, 1]);
    const attacked = READERS.vegeta.read(dir, step('a'));
    assert.deepEqual([attacked.files, attacked.measured.requests, attacked.measured.failed, attacked.client.cpu_ns], [['vegeta-1.json'], 40, 0, 4e6]);
    const r = run([step('h', { load: { tool: 'holder', seconds: 14, env: {} } }), step('k')], { 'steps/h': both, 'steps/k': both });
    assert.deepEqual(r.rows.map((row) => [row.measured.requests, row.measured.connections ?? null]), [[20, 20], [10, null]]);
    assert.throws(() => run([step('x', { load: { tool: 'nope' } })], {}), new RegExp(`load tool "nope" is not one of ${Object.keys(LOAD_TOOLS).join(', ')}$`));
  });
});

