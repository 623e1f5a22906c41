// HAProxy's own ceiling (scenarios/ceiling.json): the CPU allowance read
// back, the CPU rates while the load ran, what saturated, the ceiling against
// allowance ÷ cost, ratios of curves; and the scenario format's curves.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { haproxySaturated, parseAllowance, saturationOf } from '../evidence/saturation.mjs';
import { loadRates, parseCpuReadings, parseThrottleReadings, throttledShares } from '../evidence/cpu.mjs';
import { TOPOLOGY } from '../core/topology.mjs';
import { buildReport, readRun } from '../report/report.mjs';
import { CHECK_SECONDS, SWARM_CORES_NOTE, buildPlan, dedicatedCores, loadScenario } from '../plan/scenarios.mjs';

const ROOT = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '../../..');
const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tmp = (prefix) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
};

describe('the CPU allowance, read back', () => {
  test('the smallest of the cgroup quota, cpus, cpuset and the machine', () => {
    const a = parseAllowance([
      '# header',
      'lab-haproxy-1 nano_cpus=200000000 cpuset=- cfs_quota_us=20000 cfs_period_us=100000 machine_cores=2',
      'lab-vegeta-1 nano_cpus=0 cpuset=- cfs_quota_us=-1 cfs_period_us=100000 machine_cores=2',
      'lab-pinned-1 nano_cpus=0 cpuset=1 cfs_quota_us=-1 cfs_period_us=100000 machine_cores=2',
      'lab-desktop-1 nano_cpus=500000000 cpuset=- cfs_quota_us=- cfs_period_us=- machine_cores=4',
      'lab-quota-only-1 nano_cpus=0 cpuset=0-1 cfs_quota_us=30000 cfs_period_us=100000 machine_cores=4',
    ].join('\n'));
    assert.deepEqual(Object.fromEntries(Object.entries(a).map(([n, v]) => [n, v.cores])),
      { 'lab-haproxy-1': 0.2, 'lab-vegeta-1': 2, 'lab-pinned-1': 1, 'lab-desktop-1': 0.5, 'lab-quota-only-1': 0.3 });
  });
});

describe('CPU while the load ran', () => {
  // HAProxy idle for the first 2 s, then 0.2 core; vegeta starts at 1000 ms.
  const samples = [];
  for (let s = 0; s <= 10; s += 1) {
    const at = 1000 + s * 1000;
    samples.push({ at, name: 'lab-vegeta-1', ns: s * 0.5e9 });
    samples.push({ at, name: 'lab-haproxy-1', ns: Math.max(0, s - 2) * 0.2e9 });
  }
  test('from a quarter into the load to its end, not the idle start', () => {
    const rates = loadRates(samples, (n) => n.includes('vegeta'), 8);
    assert.ok(Math.abs(rates['lab-haproxy-1'] - 0.2) < 1e-9, `expected 0.2 cores, found ${rates['lab-haproxy-1']}`);
    assert.ok(Math.abs(rates['lab-vegeta-1'] - 0.5) < 1e-9);
  });
  test('over a window given (a holder\'s ramp): the rates inside it', () => {
    const rates = loadRates(samples, () => false, 8, [1000, 3000]);
    assert.ok(Math.abs(rates['lab-haproxy-1'] - 0) < 1e-9, `idle in the first 2 s: expected 0 cores, found ${rates['lab-haproxy-1']}`);
    assert.equal(loadRates(null, () => false, 8, [1000, 3000]), null, 'no samples: no rates');
  });
  test('no load tool sample: no rates (the whole step stands)', () => {
    assert.equal(loadRates(samples, () => false, 8), null);
  });
  test('the CFS periods in which the quota ran out, over the same window, from the same file', () => {
    // HAProxy throttled in 9 of every 10 periods from 3 s on; idle before.
    const text = [];
    for (let s = 0; s <= 10; s += 1) {
      const at = 1000 + s * 1000;
      text.push(`${at} lab-vegeta-1 ${s * 0.5e9} ns`, `${at} lab-haproxy-1 ${Math.max(0, s - 2) * 0.2e9} ns`,
        `${at} lab-haproxy-1 ${Math.max(0, s - 2) * 10} periods`, `${at} lab-haproxy-1 ${Math.max(0, s - 2) * 9} throttled`);
    }
    const joined = text.join('\n');
    assert.equal(parseCpuReadings(joined).length, 22, 'the throttling lines are not CPU readings');
    const throttle = parseThrottleReadings(joined);
    assert.deepEqual(throttle[3], { at: 4000, name: 'lab-haproxy-1', periods: 10, throttled: 9 });
    const shares = throttledShares(throttle, parseCpuReadings(joined), (n) => n.includes('vegeta'), 8);
    assert.deepEqual(Object.keys(shares), ['lab-haproxy-1'], 'vegeta has no quota: no periods, left out');
    assert.equal(shares['lab-haproxy-1'].periods, 60);
    assert.ok(Math.abs(shares['lab-haproxy-1'].pct - 90) < 1e-9, `expected 90%, found ${shares['lab-haproxy-1'].pct}`);
    assert.equal(throttledShares(null, parseCpuReadings(joined), (n) => n.includes('vegeta'), 8), null);
  });
});

describe('what saturated', () => {
  const allowance = parseAllowance([
    'haproxy-lab-haproxy-1 nano_cpus=200000000 cpuset=- cfs_quota_us=20000 cfs_period_us=100000 machine_cores=2',
    'haproxy-lab-vegeta-1 nano_cpus=0 cpuset=- cfs_quota_us=-1 cfs_period_us=100000 machine_cores=2',
    'haproxy-lab-backend-fast-1 nano_cpus=0 cpuset=- cfs_quota_us=-1 cfs_period_us=100000 machine_cores=2',
  ].join('\n'));
  const of = (cores, load = { req_rate: 1000, requests: 8000, dropped: 0 }, offered = 1000) => saturationOf({
    cores, allowance, topology: TOPOLOGY, toolService: 'vegeta', offered, load, haproxy: { max_queue: 0, errors: 0 },
  });
  test('HAProxy at its allowance, the load tool keeping its rate: HAProxy\'s ceiling', () => {
    const s = of({ 'haproxy-lab-haproxy-1': 0.199, 'haproxy-lab-vegeta-1': 0.6, 'haproxy-lab-backend-fast-1': 0.05 });
    assert.deepEqual(s.saturation.saturated, ['haproxy-lab-haproxy-1']);
    assert.equal(s.saturation.haproxy, true);
    assert.ok(Math.abs(s.haproxy_busy_pct - 99.5) < 1e-9);
    assert.equal(s.haproxy_allowance, 0.2);
  });
  test('nothing near its allowance: nothing saturated', () => {
    const s = of({ 'haproxy-lab-haproxy-1': 0.1, 'haproxy-lab-vegeta-1': 0.3 });
    assert.deepEqual(s.saturation.saturated, []);
    assert.equal(s.saturation.haproxy, false);
  });
  test('the load tool late with HAProxy idle: the load tool\'s limit, named', () => {
    const s = of({ 'haproxy-lab-haproxy-1': 0.05, 'haproxy-lab-vegeta-1': 0.5 }, { req_rate: 700, requests: 5600, dropped: 2400 });
    assert.deepEqual(s.saturation.saturated, ['vegeta could not keep the rate']);
    assert.equal(s.saturation.haproxy, false);
  });
  test('HAProxy saturated but the machine too: not HAProxy\'s ceiling alone', () => {
    const s = of({ 'haproxy-lab-haproxy-1': 0.2, 'haproxy-lab-vegeta-1': 1.7 });
    assert.ok(s.saturation.saturated.includes('the machine\'s cores'), s.saturation.saturated.join());
    assert.equal(s.saturation.haproxy, false);
  });
  test('containers idle but the whole machine busy (/proc/stat): the machine\'s cores, named, and in the text', () => {
    const cores = { 'haproxy-lab-haproxy-1': 0.1, 'haproxy-lab-vegeta-1': 0.5 };
    const s = saturationOf({ cores, hostCores: 1.95, allowance, topology: TOPOLOGY, toolService: 'vegeta', offered: 1000,
      load: { req_rate: 1000, requests: 8000, dropped: 0 }, haproxy: { max_queue: 0, errors: 0 } });
    assert.deepEqual(s.saturation.saturated, ['the machine\'s cores']);
    assert.equal(s.saturation.haproxy, false);
    assert.match(s.saturation.text, /all containers 0\.6 of 2 cores; the whole machine 1\.95 of 2 cores \(\/proc\/stat\)/);
    assert.equal(of(cores).saturation.saturated.length, 0, 'without the machine\'s reading: nothing saturated');
  });
  test('HAProxy\'s CPU time under 85% but its quota out in most periods: saturated, by its throttling (84%)', () => {
    const cores = { 'haproxy-lab-haproxy-1': 0.168, 'haproxy-lab-vegeta-1': 0.59 };
    const throttled = (pct) => ({ 'haproxy-lab-haproxy-1': { periods: 40, throttled: (pct * 40) / 100, pct } });
    const run = (pct) => saturationOf({ cores, throttled: throttled(pct), allowance, topology: TOPOLOGY, toolService: 'vegeta',
      offered: 1000, load: { req_rate: 1000, requests: 8000, dropped: 0 }, haproxy: { max_queue: 0, errors: 0 } });
    const hot = run(80);
    assert.deepEqual(hot.saturation.saturated, ['haproxy-lab-haproxy-1']);
    assert.equal(hot.saturation.haproxy, true);
    assert.equal(hot.haproxy_throttled_pct, 80);
    assert.match(hot.saturation.text, /haproxy-1 0\.17 of 0\.2 cores \(84%, quota used up in 80% of 40 periods\)/);
    assert.ok(haproxySaturated(hot), 'the step\'s numbers say so too');
    const cool = run(12);
    assert.deepEqual(cool.saturation.saturated, [], 'throttled in 12% of its periods (a step below the ceiling): not saturated');
    assert.ok(!haproxySaturated(cool));
    assert.equal(of(cores).haproxy_throttled_pct, null, 'no throttling read (older runs): null, its busy % alone decides');
  });
  test('no allowance read (older runs): no verdict', () => {
    assert.equal(saturationOf({ cores: { a: 1 }, allowance: null, topology: TOPOLOGY, toolService: 'vegeta', offered: 1, load: {} }).saturation, null);
  });
});

// A run folder of two curves, each step's evidence written as the runner does.
function ceilingRun(curves) {
  const dir = tmp('lab-ceiling-');
  const steps = [];
  for (const [curve, points] of Object.entries(curves)) {
    for (const [rate, received, busyCores, usPerReq] of points) {
      const id = `${curve}-${rate}`;
      const stepDir = path.join(dir, 'steps', id);
      fs.mkdirSync(stepDir, { recursive: true });
      steps.push({ id, dir: `steps/${id}`, label: `${curve} ${rate}/s`, x: rate, curve, model: {}, expect: {}, published: {},
        load: { tool: 'vegeta', seconds: 8, env: { RATE: String(rate) } } });
      const requests = Math.round(received * 8);
      const files = {
        'vegeta-1.json': JSON.stringify({ tool: 'vegeta', ok: requests, failed: 0, dropped: 0, planned: rate * 8, version: 'v12.13.0',
          report: { requests, rate: received, duration: 8e9, latencies: { '50th': 1e6, '95th': 2e6, '99th': (received < rate ? 900 : 3) * 1e6, mean: 1e6 } },
          cpu: { ns: 1e9, source: 'cgroup v1 cpuacct.usage' } }),
        'cpu-before.txt': '1000 haproxy-lab-haproxy-1 0 ns\n',
        'cpu-after.txt': `9000 haproxy-lab-haproxy-1 ${(usPerReq * requests * 1000).toFixed(0)} ns\n`,
        'cpu-samples.txt': [0, 2, 4, 6, 8].flatMap((s) => [`${1000 + s * 1000} haproxy-lab-vegeta-1 ${s * 0.3e9} ns`,
          `${1000 + s * 1000} haproxy-lab-haproxy-1 ${(s * busyCores * 1e9).toFixed(0)} ns`]).join('\n'),
        'cpu-allowance.txt': ['haproxy-lab-haproxy-1 nano_cpus=200000000 cpuset=- cfs_quota_us=20000 cfs_period_us=100000 machine_cores=2',
          'haproxy-lab-vegeta-1 nano_cpus=0 cpuset=- cfs_quota_us=-1 cfs_period_us=100000 machine_cores=2'].join('\n'),
        'haproxy-samples.txt': ['t haproxy_conns backend_conns accept_queue cum_req at_ms',
          ...[0, 2, 4, 6, 8].map((s) => `${s} 10 0 0 ${Math.round(s * received)} ${1000 + s * 1000}`)].join('\n'),
        'haproxy-stat.csv': `# pxname,svname,req_tot,ssl_sess,ssl_reused_sess,smax,ereq,status\nfe_main,FRONTEND,${requests},0,0,10,0,OPEN\n`,
      };
      for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(stepDir, name), text);
    }
  }
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify({
    scenario: 'ceiling', description: 'd', x: { label: 'rate' }, columns: ['haproxy_req_rate'], options: {}, steps,
    curves: { plain: 'plain keep-alive', tls: 'TLS keep-alive' },
    readings: [{ kind: 'tipping_point', metric: 'p99_ms', factor: 5, curve: 'plain' }, { kind: 'capacity', curve: 'plain' },
      { kind: 'capacity', curve: 'tls' }, { kind: 'curve_ratio', a: 'plain', b: 'tls', article: '0.51' },
      { kind: 'capacity', curve: 'gone' }],
  }));
  return buildReport(readRun(dir));
}

describe('HAProxy\'s ceiling per curve', () => {
  // [offered rate, received/s, HAProxy cores while loaded, µs per request]
  const report = ceilingRun({
    plain: [[2000, 2000, 0.06, 30], [4000, 4000, 0.12, 30], [8000, 6400, 0.2, 31]],
    // Saturated from the first step, latency never turning: nothing to predict from.
    tls: [[1000, 1000, 0.18, 100], [2000, 2000, 0.2, 100], [4000, 4000, 0.2, 50]],
  });
  const line = (start) => report.readings.find((l) => l.startsWith(start));
  test('measured at most 6,400/s against 0.2 core ÷ 30 µs = 6,667/s: within ±25%, HAProxy\'s', () => {
    const l = line('plain keep-alive: HAProxy took in at most');
    assert.match(l, /at most 6,400 requests\/s/);
    assert.match(l, /predicted 0\.2 cores ÷ 30\.0 µs per request \(at plain 4000\/s, the busiest step below the ceiling with HAProxy 60% busy or more, not saturated\) = 6,667\/s: -4\.0%, within ±25%/);
    assert.match(l, /the ceiling is HAProxy's/);
  });
  test('a curve whose every step is saturated has no prediction: the reading fails', () => {
    assert.match(line('TLS keep-alive: HAProxy took in at most'), /at most 4,000 requests\/s \(tls 4000\/s\); no prediction/);
    assert.equal(report.ok, false);
  });
  test('the ratio of two curves\' ceilings beside the article\'s', () => {
    assert.match(line('TLS keep-alive ÷ plain keep-alive'), /4000 ÷ 6400 requests\/s = 0\.63 \(article: 0\.51\)/);
  });
  test('the tipping point of one curve only', () => {
    assert.match(line('plain keep-alive: tipping point'), /between 4000\.0 and 6400\.0 requests\/sec/);
  });
  test('a curve not in the run (--quick) is said so, not failed', () => {
    assert.ok(report.readings.includes('gone: not in this run'), report.readings.join('\n'));
  });
  test('each step names what saturated', () => {
    const row = report.rows.find((r) => r.id === 'plain-8000');
    assert.deepEqual(row.measured.saturation.saturated, ['haproxy-lab-haproxy-1']);
    assert.ok(Math.abs(row.measured.haproxy_req_rate - 6400) < 1e-6);
  });
});

describe('the scenario format\'s curves', () => {
  test('ceiling: every step gets its curve\'s settings, --quick runs the named steps', () => {
    const s = loadScenario(ROOT, 'ceiling');
    const step = s.steps.find((t) => t.id === 'tls-full-rsa-300');
    assert.equal(step.cores, 1);
    assert.equal(step.haproxy.global['tune.ssl.cachesize'], '0');
    assert.equal(step.load.env.KEEPALIVE, 'false');
    assert.equal(step.load.env.RATE, 300);
    assert.equal(s.steps.find((t) => t.id === 'plain-keepalive-quota-2000').compose_env.HAPROXY_CPUS, '0.2');
    const quick = buildPlan(s, 'ceiling', { quick: true, machineCores: 2 });
    assert.deepEqual(quick.steps.map((t) => t.id), s.quick.steps);
    assert.equal(quick.steps[0].curve, 'plain-keepalive');
    assert.ok(buildPlan(s, 'ceiling', { quick: false, machineCores: 2 }).steps.length > quick.steps.length);
  });
  test('"cores": HAProxy on the machine\'s last cores with no quota and as many threads, the rest on the others', () => {
    const s = loadScenario(ROOT, 'ceiling');
    const plan = (machineCores) => buildPlan(s, 'ceiling', { quick: true, machineCores });
    const [first] = plan(2).steps;
    assert.deepEqual(
      { cpus: first.compose_env.HAPROXY_CPUS, haproxy: first.compose_env.HAPROXY_CPUSET, rest: first.compose_env.LAB_CPUSET, threads: first.haproxy.global.nbthread },
      { cpus: '0', haproxy: '1', rest: '0', threads: '1' });
    assert.deepEqual([plan(8).steps[0].compose_env.HAPROXY_CPUSET, plan(8).steps[0].compose_env.LAB_CPUSET], ['7', '0-6']);
    assert.deepEqual(dedicatedCores(3, 8), { HAPROXY_CPUS: '0', HAPROXY_CPUSET: '5-7', LAB_CPUSET: '0-4' });
    assert.throws(() => plan(1), /gives HAProxy 1 core of its own and the load tools at least one more: this machine has 1/);
    // The quota curve keeps its own settings and pins nothing.
    const quota = buildPlan(s, 'ceiling', { quick: false, machineCores: 2 }).steps.find((t) => t.curve === 'plain-keepalive-quota');
    assert.equal(quota.compose_env.HAPROXY_CPUSET, undefined);
    assert.equal(quota.cores, null);
  });
  test('the last step of each dedicated curve, and only it, is followed by the second method', () => {
    const s = loadScenario(ROOT, 'ceiling');
    const steps = buildPlan(s, 'ceiling', { quick: true, machineCores: 2, repeat: 2 }).steps;
    const checked = steps.filter((t) => t.check).map((t) => `${t.id} run${t.run}`);
    assert.deepEqual(checked, ['plain-keepalive-80000 run1', 'tls-keepalive-50000 run1', 'tls-full-rsa-1000 run1',
      'plain-keepalive-80000 run2', 'tls-keepalive-50000 run2', 'tls-full-rsa-1000 run2']);
    const top = steps.find((t) => t.id === 'tls-full-rsa-1000');
    assert.match(top.load.env.TARGET, /^https:\/\/rsa\.haproxy:\d+$/);
    assert.deepEqual(top.check, { tool: 'wrk', url: `${top.load.env.TARGET}/self`, connections: 20, seconds: CHECK_SECONDS, close: true });
    assert.equal(buildPlan(s, 'ceiling', { quick: false, machineCores: 2 }).steps.filter((t) => t.curve === 'plain-keepalive-quota' && t.check).length, 0);
  });
  test('"cores" beside the settings it stands for, or out of range, is refused naming both', () => {
    const root = tmp('lab-cores-');
    fs.mkdirSync(path.join(root, 'scenarios'));
    fs.copyFileSync(path.join(ROOT, 'compose.yaml'), path.join(root, 'compose.yaml'));
    const write = (edit) => {
      const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios/ceiling.json'), 'utf8'));
      edit(s);
      fs.writeFileSync(path.join(root, 'scenarios/bad.json'), JSON.stringify(s));
    };
    write((s) => { s.curves['plain-keepalive'].compose_env = { HAPROXY_CPUSET: '1' }; });
    assert.throws(() => loadScenario(root, 'bad'), /curve plain-keepalive: "cores" sets HAPROXY_CPUS, HAPROXY_CPUSET, LAB_CPUSET itself: leave HAPROXY_CPUSET out of its compose_env/);
    write((s) => { s.curves['plain-keepalive'].cores = 0; });
    assert.throws(() => loadScenario(root, 'bad'), /curve plain-keepalive: "cores" must be a whole number from 1 to 64 .*found 0/);
  });
  test('a step naming an unknown curve is one clear error', () => {
    const root = tmp('lab-curves-');
    fs.mkdirSync(path.join(root, 'scenarios'));
    fs.copyFileSync(path.join(ROOT, 'compose.yaml'), path.join(root, 'compose.yaml'));
    const s = JSON.parse(fs.readFileSync(path.join(ROOT, 'scenarios/ceiling.json'), 'utf8'));
    s.steps[0].curve = 'nope';
    fs.writeFileSync(path.join(root, 'scenarios/bad.json'), JSON.stringify(s));
    assert.throws(() => loadScenario(root, 'bad'), new RegExp(`scenarios/bad\\.json: step ${s.steps[0].id}: curve "nope" is not in "curves"`));
  });
});

describe('dedicated cores on a Swarm', () => {
  test('a CPU limit of as many cores instead of a cpuset, no second method, and the plan says so', () => {
    const s = loadScenario(ROOT, 'ceiling');
    const plan = buildPlan(s, 'ceiling', { quick: true, machineCores: 2, swarm: true });
    assert.deepEqual([plan.steps[0].compose_env.HAPROXY_CPUS, plan.steps[0].compose_env.HAPROXY_CPUSET, plan.steps[0].compose_env.LAB_CPUSET], ['1', '', '']);
    assert.equal(plan.steps.filter((t) => t.check).length, 0);
    assert.ok(plan.notes.includes(SWARM_CORES_NOTE), plan.notes.join('\n'));
  });
});
