// HAProxy's cost per core (scenarios/ceiling.json): its cost while the load
// ran, over the very window its cores were read in; the second method's
// readings (wrk, scripts/lib/second-method.sh second_method); the per-core line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOPOLOGY } from '../core/topology.mjs';
import { counterAt, loadCost, parseWrk, secondMethod } from '../evidence/run.mjs';
import { readingsOf } from '../report/readings.mjs';

const HAPROXY = `haproxy-lab-${TOPOLOGY.instances[0].service}-1`;
const TOOL = 'haproxy-lab-h2load-1';

describe('HAProxy\'s cost while the load ran', () => {
  test('the requests received between two samples are read on the line between them; outside them, not at all', () => {
    const samples = [{ at: 1000, requests: 100 }, { at: 2000, requests: 1100 }, { at: 3000, requests: 1100 }];
    assert.equal(counterAt(samples, 1500), 600);
    assert.equal(counterAt(samples, 2500), 1100);
    assert.equal(counterAt(samples, 999), null);
    assert.equal(counterAt(samples, 3001), null);
  });

  // 10 s of load from t = 0: HAProxy at 0.5 core and 10,000 requests/s
  // throughout, its CumReq sampled every second 300 ms off its CPU readings.
  const evidence = () => {
    const samples = [];
    for (let t = 0; t <= 10; t += 1) {
      samples.push({ at: t * 1000, name: HAPROXY, ns: t * 0.5e9 });
      samples.push({ at: t * 1000 + 10, name: TOOL, ns: t * 0.4e9 });
    }
    const cum = Array.from({ length: 12 }, (_, t) => ({ t, at: t * 1000 + 300, requests: 5000 + (t * 1000 + 300) * 10 }));
    return { topology: TOPOLOGY, samples, instances: [{ name: TOPOLOGY.instances[0].name, samples: cum }] };
  };
  test('the rate and the cost come from one window: the rate × the window is the count in it, within 2%', () => {
    const c = loadCost(evidence(), (n) => n === TOOL, 10);
    assert.ok(Math.abs(c.haproxy_req_rate - 10000) / 10000 < 0.02, `expected 10,000/s, found ${c.haproxy_req_rate}`);
    assert.ok(Math.abs(c.haproxy_us_per_req_load - 50) < 0.5, `expected 50 µs (0.5 core ÷ 10,000/s), found ${c.haproxy_us_per_req_load}`);
  });
  test('without CumReq samples around the window, neither figure', () => {
    const e = evidence();
    e.instances[0].samples = e.instances[0].samples.slice(0, 2);
    assert.deepEqual(loadCost(e, (n) => n === TOOL, 10), { haproxy_req_rate: null, haproxy_us_per_req_load: null });
  });
});

const WRK = `Running 4s test @ https://ecdsa.haproxy/self
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.04ms  212.11us   5.79ms   89.44%
    Req/Sec    48.10k     1.82k   51.02k    66.67%
  191436 requests in 4.00s, 12.05MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 3
Requests/sec:  47859.00
Transfer/sec:      3.01MB
`;

describe('the second method', () => {
  test('wrk\'s own summary: its requests, seconds and every error it counted', () => {
    assert.deepEqual(parseWrk(WRK), { requests: 191436, seconds: 4, errors: 6 });
    assert.equal(parseWrk('wrk: cannot connect'), null);
  });
  test('HAProxy\'s cost over wrk\'s run, its busy share, wrk\'s own cost and the loopback\'s', () => {
    const check = {
      bridge: { haproxy_ns: 3.8e9, haproxy_requests: 190000, client_ns: 3.6e9, wrk: { requests: 191436, seconds: 4, errors: 0 } },
      loopback: { haproxy_ns: 3.9e9, haproxy_requests: 260000, client_ns: 3.7e9, wrk: { requests: 260000, seconds: 4, errors: 0 } },
    };
    const m = secondMethod(check, 1, 22);
    assert.equal(m.check_us_per_req, 20);
    assert.equal(m.check_ratio, 1.1);
    assert.equal(m.check_busy_pct, 95);
    assert.ok(Math.abs(m.check_client_us_per_req - 18.805) < 0.01);
    assert.equal(m.check_loopback_us_per_req, 15);
    assert.deepEqual(secondMethod({ bridge: { haproxy_ns: null, haproxy_requests: 0, client_ns: null, wrk: null } }, 1, 22),
      { check_us_per_req: null, check_ratio: null, check_busy_pct: null, check_client_us_per_req: null, check_loopback_us_per_req: null });
  });
});

describe('per core, beside the reference', () => {
  const row = (id, curve, x, m) => ({ id, label: id, curve, cores: 1, x, measured: { hits_per_sec: m.haproxy_req_rate, ...m } });
  const rows = [
    row('plain-10000', 'plain', 10000, { haproxy_req_rate: 10000, haproxy_us_per_req_load: 16, haproxy_busy_pct: 16, loadgen_us_per_req: 15 }),
    row('plain-80000', 'plain', 80000, { haproxy_req_rate: 60000, haproxy_us_per_req_load: 16, haproxy_busy_pct: 96, loadgen_us_per_req: 15,
      check_us_per_req: 20, check_ratio: 0.8, check_busy_pct: 97, check_client_us_per_req: 14, check_loopback_us_per_req: 15 }),
    row('rsa-1000', 'rsa', 1000, { haproxy_req_rate: 600, haproxy_us_per_req_load: 1600, haproxy_busy_pct: 96, loadgen_us_per_req: 1000 }),
  ];
  const plan = { curves: { plain: 'plain kept-alive', rsa: 'full RSA' },
    readings: [{ kind: 'per_core', reference: 'plain', published: { rsa: 1300 } }] };
  const [reading] = readingsOf(plan, rows);
  test('the reference: the reference curve\'s second method over loopback, measured in the run', () => {
    assert.match(reading.lines[0], /^reference: 15\.0 µs of HAProxy's CPU per plain kept-alive request/);
  });
  test('a curve: its cost and rate per core at the top, the client\'s, the second method\'s, the bridge\'s share, the ratio to the reference', () => {
    assert.match(reading.lines[1], /^plain kept-alive: HAProxy 16\.0 µs per request while the load ran at plain-80000 \(62,500\/s per core\), 96% busy, 1\.07× the reference; the client 15\.0 µs per request; second method \(wrk, same path\) 20\.0 µs at 97% busy: 0\.80×, loopback 15\.0 µs \(the bridge adds 33%\); wrk itself 14\.0 µs$/);
    assert.match(reading.lines[2], /^full RSA: HAProxy 1600\.0 µs .*106\.67× the reference; the client 1000\.0 µs per request; no second method; doc\/intro\.txt: 1,300\/s per core/);
  });
});

describe('the dashboard', () => {
  test('its client CPU per request reads every load tool\'s service, as core/loadtools.mjs names them', async () => {
    const fs = await import('node:fs');
    const { LOAD_TOOLS } = await import('../core/loadtools.mjs');
    const dashboard = JSON.parse(fs.readFileSync(new URL('../../../grafana/dashboards/haproxy-lab.json', import.meta.url), 'utf8'));
    const panel = dashboard.panels.find((p) => p.title === 'HAProxy CPU per request, beside the client\'s');
    const client = panel.targets.find((t) => t.legendFormat.startsWith('client'));
    const services = /service=~"([^"]+)"/.exec(client.expr)[1].split('|').sort();
    assert.deepEqual(services, Object.values(LOAD_TOOLS).map((t) => t.service).sort());
  });
});

describe('the ceiling on a core of HAProxy\'s own', () => {
  const step = (id, rate, busy, core, rest, saturation) => ({ id, label: id, curve: 'c', cores: 1, x: rate,
    measured: { haproxy_req_rate: rate, hits_per_sec: rate, haproxy_us_per_req_load: (busy * 1e4) / rate, haproxy_busy_pct: busy,
      haproxy_core_busy_pct: core, rest_core_busy_pct: rest, haproxy_allowance: 1, loadgen_us_per_req: 20,
      saturation: { haproxy: false, saturated: [], text: 'while the load ran', ...saturation } } });
  const plan = { curves: { c: 'plain' }, readings: [{ kind: 'capacity', curve: 'c', tolerance_pct: 15 }] };
  test('predicted from the busiest step below it, its client side full or not, HAProxy not saturated: its rate ÷ its core\'s busy share', () => {
    const rows = [step('a', 10000, 50, 60, 70), step('b', 15000, 70, 80, 95), step('c2', 14000, 65, 75, 85),
      step('d', 16000, 80, 92, 80, { haproxy: true, saturated: ['HAProxy\'s core (its kernel work included)'] }),
      step('top', 18000, 90, 96, 80, { haproxy: true, saturated: ['haproxy-lab-haproxy-1'] })];
    const [r] = readingsOf(plan, rows);
    assert.equal(r.ok, true);
    assert.match(r.lines[0], /predicted 15,000\/s ÷ 80% of HAProxy's own core busy \(its kernel work included\) \(at b, the busiest step below the ceiling with HAProxy 60% busy or more, not saturated\) = 18,750\/s: -4\.0%, within ±15%/);
  });
  const clientFull = { client: true, saturated: ['h2load could not keep the rate', 'the other services\' cores'] };
  test('a curve where the client\'s core ran out first with HAProxy\'s core under 75% busy says so, neither passes nor fails', () => {
    const rows = [step('a', 10000, 50, 60, 70), step('top', 12000, 60, 70, 97, clientFull)];
    const [r] = readingsOf(plan, rows);
    assert.equal(r.ok, undefined);
    assert.match(r.lines[0], /^plain: one core of client cannot outrun one core of HAProxy here: the client side \(the load tool 20\.0 µs per request, with the kernel's and Docker's work on its cores\) ran out first at top, HAProxy 60% busy/);
    assert.match(r.lines[0], /HAProxy's core was under 75% busy at the top: too far from its ceiling to scale/);
  });
  test('the client first, HAProxy\'s core 75% busy or more: the top\'s rate ÷ that share beside the prediction, not judged', () => {
    const [r] = readingsOf(plan, [step('a', 16000, 62, 75, 80), step('top', 20000, 70, 80, 97, clientFull)]);
    assert.equal(r.ok, undefined, r.lines[0]);
    assert.match(r.lines[0], /there its core was 80% busy, so at that cost a whole core would take 25,000\/s, against predicted 16,000\/s ÷ 75% of HAProxy's own core busy \(its kernel work included\) \(at a, [^)]*\) = 21,333\/s: \+17\.2%, not judged \(HAProxy did not saturate\); the ceiling is NOT HAProxy's/);
  });
});
