// The tls-cost scenario's figures as the report computes them from a step
// folder: HAProxy's µs per request from its cgroup (idle rate out) over the
// requests its frontends counted, the handshake mix, the client's own CPU;
// the sign floor reading; connections --tls's twin steps side by side.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildReport, readRun } from '../report/report.mjs';
import { buildPlan, loadScenario, parseOptions } from '../plan/scenarios.mjs';
import { BYTES_PER_CONNECTION, BYTES_PER_TLS_CONNECTION, bytesPer, sizeLevels } from '../plan/preflight.mjs';

const ROOT = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../../..');
const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// show stat with the frontends' req_tot and TLS counters.
const stat = (rows) => ['# pxname,svname,req_tot,ssl_sess,ssl_reused_sess,smax,ereq,status',
  ...rows.map(([px, req, full, reused]) => `${px},FRONTEND,${req},${full},${reused},1,0,OPEN`)].join('\n');
const vegeta = (requests, cpuNs) => ({ tool: 'vegeta', version: '12.13.0', requests, ok: requests, failed: 0, dropped: 0,
  cpu: { ns: cpuNs, source: 'cgroup v1 cpuacct.usage' },
  report: { requests, success: 1, rate: requests / 10, duration: 10e9, latencies: { '50th': 1e6, '95th': 2e6, '99th': 3e6, mean: 1e6 } } });

function report(steps, files, extra = {}, floor = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-tls-'));
  tmpDirs.push(dir);
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify({ scenario: 's', description: 'd', x: { label: 'x' }, columns: ['haproxy_us_per_req'], options: {}, steps, ...extra }));
  if (floor) fs.writeFileSync(path.join(dir, 'tls-floor.env'), floor);
  for (const [stepDir, content] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, stepDir), { recursive: true });
    for (const [name, text] of Object.entries(content)) fs.writeFileSync(path.join(dir, stepDir, name), typeof text === 'string' ? text : JSON.stringify(text));
  }
  return buildReport(readRun(dir));
}
const step = (id, extra = {}) => ({ id, dir: `steps/${id}`, label: id, x: id, load: { tool: 'vegeta', seconds: 10, env: {} }, model: {}, expect: {}, published: {}, ...extra });
// HAProxy used USED ms in 10 s of load, after 5 s idle at IDLE ms/s.
const cpuFiles = (used, idle) => ({
  'cpu-idle.txt': '0 haproxy-lab-haproxy-1 0 ns\n0 haproxy-lab-backend-fast-1 0 ns\n',
  'cpu-before.txt': `5000 haproxy-lab-haproxy-1 ${idle * 5 * 1e6} ns\n5000 haproxy-lab-backend-fast-1 0 ns\n`,
  'cpu-after.txt': `15000 haproxy-lab-haproxy-1 ${(idle * 5 + used) * 1e6} ns\n15000 haproxy-lab-backend-fast-1 ${50e6} ns\n`,
  'outcome.env': 'started_at_ms=5000\nended_at_ms=15000\nexit_codes=0\nhaproxy_state=oom_killed=false\n',
});

describe('CPU per request and the handshake mix', () => {
  test('HAProxy µs per request: its cgroup CPU less the idle rate, over the requests its frontends counted', () => {
    // 400 ms used, 10 ms/s idle → 300 ms for 1000 requests = 300 µs.
    const r = report([step('resumed')], { 'steps/resumed': { ...cpuFiles(400, 10), 'haproxy-stat.csv': stat([['fe_main', 0, 0, 0], ['fe_tls', 1000, 40, 960], ['stats', 5, 0, 0]]), 'vegeta-1.json': vegeta(1000, 2e8) } });
    const m = r.rows[0].measured;
    assert.equal(m.haproxy_us_per_req, 300, 'µs per request');
    assert.equal(m.per_core_rate, 1e6 / 300, 'requests/s per core');
    assert.deepEqual([m.haproxy_requests, m.handshakes_full, m.handshakes_resumed, m.resumed_pct], [1000, 40, 960, 96], 'requests, full, resumed, resumed %');
    assert.equal(m.loadgen_us_per_req, 200, 'vegeta\'s own CPU per request');
    assert.equal(m.backend_us_per_req, 50, 'the backends\' CPU per request HAProxy counted, over the same seconds');
    assert.equal(m.haproxy_over_client_backends, 1.2, 'HAProxy µs per request ÷ (the client\'s + the backends\'): 300 ÷ (200 + 50)');
    assert.equal(Math.round(m.cpu['haproxy-lab-haproxy-1']), 4, 'HAProxy CPU % of one core over the step (raw, idle included)');
  });

  // The machine ran faster during the second step: HAProxy's µs fell below
  // the first step's although its work grew; the client's and the backends'
  // fell more, and HAProxy ÷ (client + backends) keeps the order.
  test('HAProxy ÷ (client + backends) judges an order the machine\'s speed turned over in µs', () => {
    const files = (haproxyMs, backendMs, clientMs) => {
      const f = cpuFiles(haproxyMs, 0);
      f['cpu-after.txt'] = `15000 haproxy-lab-haproxy-1 ${haproxyMs * 1e6} ns\n15000 haproxy-lab-backend-fast-1 ${backendMs * 1e6} ns\n`;
      return { ...f, 'haproxy-stat.csv': stat([['fe_tls', 1000, 1000, 0]]), 'vegeta-1.json': vegeta(1000, clientMs * 1e6) };
    };
    const r = report([step('ecdsa'), step('rsa', { expect: { haproxy_us_per_req: '~>step:ecdsa', haproxy_over_client_backends: '>step:ecdsa' } })],
      { 'steps/ecdsa': files(1150, 680, 2000), 'steps/rsa': files(1080, 450, 1500) });
    const ratio = (id) => r.rows.find((row) => row.id === id).measured.haproxy_over_client_backends.toFixed(3);
    assert.deepEqual([ratio('ecdsa'), ratio('rsa')], ['0.429', '0.554'], 'ECDSA 1150 ÷ (2000 + 680), RSA 1080 ÷ (1500 + 450)');
    const rsa = r.rows.find((row) => row.id === 'rsa');
    assert.equal(r.ok, true, `verdict: ${rsa.verdict}`);
    assert.match(rsa.verdict, /^pass; info: haproxy_us_per_req unlike article$/);
  });

  test('no idle reading: the raw CPU stands', () => {
    const files = cpuFiles(400, 10);
    delete files['cpu-idle.txt'];
    const r = report([step('a')], { 'steps/a': { ...files, 'haproxy-stat.csv': stat([['fe_main', 1000, 0, 0]]), 'vegeta-1.json': vegeta(1000, 1e8) } });
    assert.equal(r.rows[0].measured.haproxy_us_per_req, 400, 'µs per request, idle included');
  });
});

describe('the sign floor reading', () => {
  const floorRun = (us) => report([step('full', { label: 'full RSA' })],
    { 'steps/full': { ...cpuFiles(us, 0), 'haproxy-stat.csv': stat([['fe_tls', 1000, 1000, 0]]), 'vegeta-1.json': vegeta(1000, 1e8) } },
    { readings: [{ kind: 'sign_floor', step: 'full', floor: 'rsa2048_sign_us', label: 'RSA-2048 sign' }] },
    'rsa2048_sign_us=250.0\necdsap256_sign_us=18.0\nfloor_tool=openssl speed\nfloor_library=OpenSSL 3.6.5\nhaproxy_library=OpenSSL 3.6.5\n');

  test('at or above one signature: pass, with the library named', () => {
    const r = floorRun(900);
    assert.equal(r.ok, true);
    assert.match(r.readings[0], /^RSA-2048 sign floor: full RSA cost HAProxy 900 µs per request, ≥ one RSA-2048 sign of 250\.0 µs \(3\.6×; openssl speed on OpenSSL 3\.6\.5, HAProxy runs OpenSSL 3\.6\.5\)$/);
  });

  test('below the floor fails the report', () => {
    const r = floorRun(100);
    assert.equal(r.ok, false);
    assert.match(r.readings[0], /BELOW one RSA-2048 sign/);
  });

  test('no floor measured: says so and fails', () => {
    const r = report([step('full')], { 'steps/full': { ...cpuFiles(500, 0), 'haproxy-stat.csv': stat([['fe_tls', 1000, 1000, 0]]), 'vegeta-1.json': vegeta(1000, 1e8) } },
      { readings: [{ kind: 'sign_floor', step: 'full', floor: 'rsa2048_sign_us', label: 'RSA-2048 sign' }] });
    assert.equal(r.ok, false);
    assert.match(r.readings[0], /not measured .*missing: tls-floor\.env/);
  });
});

describe('connections --tls', () => {
  const s = loadScenario(ROOT, 'connections');
  const sizes = [0.1, 0.5, 1].map((f) => ({ connections: 600 * f, replicas: 1, env: { CONNECTIONS: String(600 * f) }, haproxy: {}, backends: {} }));

  test('--tls only where the scenario offers it', () => {
    assert.equal(parseOptions(['--tls'], s).tls, true);
    assert.throws(() => parseOptions(['--tls'], loadScenario(ROOT, 'tipping-point')), /unknown option "--tls"/);
  });

  test('each level, then its twin over TLS right after it, same size', () => {
    const plan = buildPlan(s, 'connections', { ...parseOptions(['--quick', '--tls'], s), sizes });
    const tls = s.tls.env.TARGET;
    assert.match(tls, /^https:\/\/ecdsa\.haproxy:\d+$/);
    assert.deepEqual(plan.steps.map((p) => `${p.id} ${p.load.env.TARGET ?? 'http'} ${p.connections}`), [
      'level-10pct http 60', `level-10pct-tls ${tls} 60`, 'level-50pct http 300',
      `level-50pct-tls ${tls} 300`, 'level-100pct http 600', `level-100pct-tls ${tls} 600`,
    ]);
    assert.equal(plan.options.tls, true);
    assert.deepEqual(plan.steps.map((p) => p.x), [60, '60 TLS', 300, '300 TLS', 600, '600 TLS']);
  });

  test('a TLS twin opens at the scenario\'s TLS ramp: its own RAMP_UP and HAProxy timeouts', () => {
    assert.equal(s.tls.ramp_per_second, 150);
    const limits = { holder_nofile: 20000, backend_nofile: 20000, haproxy_nofile: 20000, port_range: [32768, 60999] };
    const ramp = { seconds: 2, down: 2, perSecond: 5000, downPerSecond: 1000 };
    const plain = sizeLevels(60000, [1], limits, 120, undefined, ramp);
    const tls = sizeLevels(60000, [1], limits, 120, undefined, { ...ramp, perSecond: s.tls.ramp_per_second });
    const plan = buildPlan(s, 'connections', { ...parseOptions(['--tls'], s), sizes: [plain[0], plain[0], plain[0]], tlsSizes: [tls[0], tls[0], tls[0]] });
    const [p, t] = plan.steps.slice(4);
    assert.deepEqual([p.id, p.load.env.RAMP_UP, t.id, t.load.env.RAMP_UP], ['level-100pct', '12', 'level-100pct-tls', '400']);
    assert.equal(t.load.env.CONNECTIONS, p.load.env.CONNECTIONS);
    const client = (step) => parseInt(step.haproxy.defaults['timeout client'], 10);
    assert.equal(client(t) - client(p), 388, 'the TLS twin\'s timeouts cover its 388 s longer ramp');
    const untouched = buildPlan(s, 'connections', { ...parseOptions(['--tls'], s), sizes: [plain[0], plain[0], plain[0]] });
    assert.equal(untouched.steps[5].load.env.RAMP_UP, '12', 'without tlsSizes the twin keeps the level\'s sizing');
  });

  test('the preflight sizes TLS levels with TLS\'s bytes per connection', () => {
    assert.equal(bytesPer({ tls: true }, 'haproxy'), BYTES_PER_TLS_CONNECTION.haproxy);
    assert.equal(bytesPer({}, 'haproxy'), BYTES_PER_CONNECTION.haproxy);
  });

  test('the memory reading puts each TLS level beside its plain one', () => {
    const held = (id, bytes) => ({ [`steps/${id}`]: { 'memory-before.txt': '# NAME BYTES\np-haproxy-1 10485760\n', 'memory-peak.txt': `p-haproxy-1 ${10485760 + bytes * 100}\n`,
      'holder-1.json': { tool: 'holder', version: 1, index: 1, replicas: 1, planned: 100, opened: 100, connected: 100, ok: 100, failed: 0, failures: {},
        started_at_ms: 0, ended_at_ms: 14000, ramp_up: 2, hold: 10, ramp_down: 2, peak_open: 100,
        hold_window: { from_t: 3, to_t: 11, min_open: 100, max_open: 100 },
        memory: { rss_start: 50e6, rss_peak: 50e6 + 300000, rss_at_peak_open: 50e6 + 300000, heap_used_at_peak_open: 1 }, bytes_per_connection: 3000,
        samples: Array.from({ length: 15 }, (_, t) => ({ t, open: t >= 2 && t <= 12 ? 100 : 0, opened_total: 100, ok_total: 0, failed_total: 0, rss_bytes: 50e6 })) } } });
    const hstep = (id) => step(id, { load: { tool: 'holder', seconds: 10, env: {} }, connections: 100 });
    const r = report([hstep('l'), hstep('l-tls')], { ...held('l', 12000), ...held('l-tls', 30000) }, { readings: [{ kind: 'memory' }] });
    assert.match(r.readings[1], /^with and without TLS — l-tls: HAProxy 30\.0 KB per TLS connection against 12\.0 KB plain \(TLS adds 18\.0 KB\)/);
  });
});
