// The topology table (topology.txt): its format, the lab's own rows, and a
// fixture with a second HAProxy instance and a second frontend, which every
// reader of a run folder and the preflight follow without a line of code.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOPOLOGY, containersOf, expandProcesses, frontendsOf, parseTopology } from '../core/topology.mjs';
import { readRun } from '../evidence/run.mjs';
import { buildReport } from '../report/report.mjs';
import { toMarkdown } from '../report/format.mjs';
import { capsOf, preflight, readLimits, sizeLevels } from '../plan/preflight.mjs';

const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tmp = () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lab-topology-')); tmpDirs.push(d); return d; };

const port = TOPOLOGY.frontends[0].port;
// Two HAProxy processes running one config (fe_main on each), the first
// with a second frontend of its own.
const TWO = `${fs.readFileSync(new URL('../../../topology.txt', import.meta.url), 'utf8')}
instance haproxy-2 service=haproxy index=2 runtime_api=${TOPOLOGY.instances[0].runtime_api} master_cli=${TOPOLOGY.instances[0].master_cli}
frontend fe_main instance=haproxy-2 protocol=http port=${port}
frontend fe_alt instance=haproxy protocol=http port=${port + 1}
`;

describe('the table', () => {
  test('the lab\'s own: one instance, its frontend, two backends, the replica cap', () => {
    assert.deepEqual(TOPOLOGY.instances.map((i) => i.name), ['haproxy']);
    assert.deepEqual(TOPOLOGY.frontends.map((f) => [f.name, f.instance, f.protocol, typeof f.port]), [['fe_main', 'haproxy', 'http', 'number'], ['fe_tls', 'haproxy', 'https', 'number']]);
    assert.deepEqual(TOPOLOGY.backends.map((b) => b.name), ['backend-slow', 'backend-fast']);
    assert.deepEqual(TOPOLOGY.services.map((s) => s.name), ['prometheus', 'haproxy-exporter', 'container-exporter', 'docker-api-gate']);
    assert.equal(typeof TOPOLOGY.limits.replicas, 'number');
  });

  test('a wrong row is named with its line', () => {
    const bad = [
      ['listener x port=1', /t:1: unknown kind "listener"/],
      ['instance h service=h runtime_api=a:1', /t:1: instance h needs master_cli/],
      ['frontend f instance=nowhere protocol=http port=80\ninstance h service=h runtime_api=a:1 master_cli=a:2', /frontend f is on instance nowhere, which has no row/],
      ['instance h service=h runtime_api=a:1 master_cli=a:2\nfrontend f instance=h protocol=http port=eighty', /t:2: port must be a whole number, found "eighty"/],
      ['instance h service=h runtime_api=a:1 master_cli=a:2\ninstance h service=h runtime_api=a:1 master_cli=a:2', /instance h is listed twice/],
      ['backend b proxy=be template=b slots=10 port=80', /no instance row/],
      ['instance h service=h runtime_api=a:1 master_cli=a:2 oops', /t:1: "oops" is not KEY=VALUE/],
      ['instance h service=h runtime_api=a:1 master_cli=a:2\nfrontend f instance=h protocol=quic port=80', /t:2: protocol must be http or https, found "quic"/],
    ];
    for (const [text, error] of bad) assert.throws(() => parseTopology(text, 't'), error, text);
  });

  test('one frontend name on two instances is two rows (N processes, one config)', () => {
    const t = parseTopology(TWO);
    assert.deepEqual(t.frontends.map((f) => `${f.name}@${f.instance}`), ['fe_main@haproxy', 'fe_tls@haproxy', 'fe_main@haproxy-2', 'fe_alt@haproxy']);
  });
});

// A run folder of one step whose HAProxy side came from two instances.
function twoInstanceRun() {
  const dir = tmp();
  const stat = (fe, alt, qmax) => [
    '# pxname,svname,qmax,smax,ereq,econ,eresp,status',
    `fe_main,FRONTEND,,${fe},1,,,OPEN`,
    ...(alt === null ? [] : [`fe_alt,FRONTEND,,${alt},2,,,OPEN`]),
    `be_slow,BACKEND,${qmax},5,,1,1,UP`,
    'stats,FRONTEND,,99,50,,,OPEN',
  ].join('\n');
  const net = (n) => `TcpExt: ListenOverflows ListenDrops SyncookiesSent\nTcpExt: ${n} ${n} 0\n`;
  const samples = (a, b) => `t haproxy_conns backend_conns accept_queue\n0 ${a} ${a} 1\n1 ${b} ${b} 2\n`;
  const sd = (n) => Array.from({ length: n }, () => '1.2.3.4:5 [x] fe_main be_slow/slow1 0/0/0/-1/10 -1 0 - - SD-- 1/1/0/0/0 0/0 "GET /slow HTTP/1.1"').join('\n');
  const files = {
    'haproxy-info.txt': 'MaxconnReached: 3\n',
    'haproxy-2-info.txt': 'MaxconnReached: 4\n',
    'haproxy-stat.csv': stat(10, 7, 2),
    'haproxy-2-stat.csv': stat(20, null, 3),
    'haproxy-netstat-before.txt': net(1), 'haproxy-netstat-after.txt': net(6),
    'haproxy-2-netstat-before.txt': net(0), 'haproxy-2-netstat-after.txt': net(10),
    'haproxy-samples.txt': samples(100, 300),
    'haproxy-2-samples.txt': samples(50, 200),
    'haproxy-listen-sockets.txt': `LISTEN 1 128 0.0.0.0:${port} 0.0.0.0:*\nLISTEN 0 64 0.0.0.0:${port + 1} 0.0.0.0:*\n`,
    'haproxy-2-listen-sockets.txt': `LISTEN 0 128 0.0.0.0:${port} 0.0.0.0:*\n`,
    'haproxy-log.txt': `${sd(2)}\n[ALERT] (1) : Current worker (9) exited with code 137 (Killed)\n`,
    'haproxy-2-log.txt': sd(3),
    'loadgen-1.json': JSON.stringify({
      metrics: { http_reqs: { values: { count: 10 } }, http_req_failed: { values: { passes: 0, fails: 10 } }, http_req_duration: { values: { med: 1, 'p(95)': 2, 'p(99)': 3 } } },
      state: { testRunDurationMs: 2000 },
    }),
  };
  const stepDir = path.join(dir, 'steps', 'a-1');
  fs.mkdirSync(stepDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(stepDir, name), text);
  const step = { index: 1, dir: 'steps/a-1', id: 'a', run: 1, label: 'a', x: 'a', config: 'configs/a.cfg', haproxy: {}, backends: {}, load: { seconds: 2 } };
  fs.writeFileSync(path.join(dir, 'plan.json'), JSON.stringify({
    scenario: 't', description: 't', source: { title: 't' }, notes: [], x: { name: 'n', label: 'n' }, columns: ['successful'],
    ratio_to: null, comparisons: [], options: { repeat: 1 }, steps: [step],
  }));
  fs.writeFileSync(path.join(dir, 'topology.txt'), TWO);
  return dir;
}

describe('a second instance and frontend in the run\'s table: the readers follow', () => {
  test('counters add up over both instances and both frontends; samples add up second by second', () => {
    const run = readRun(twoInstanceRun());
    assert.deepEqual(run.topology.instances.map((i) => i.name), ['haproxy', 'haproxy-2']);
    const m = run.steps[0].measured;
    assert.equal(m.maxconn_reached, 3 + 4);
    assert.equal(m.max_sessions, 10 + 7 + 20, 'fe_main and fe_alt of haproxy, fe_main of haproxy-2 (not stats)');
    assert.equal(m.errors, (1 + 2 + 1 + 1) + (1 + 1 + 1));
    assert.equal(m.max_queue, 2 + 3);
    assert.equal(m.listen_overflows, 5 + 10);
    assert.equal(m.haproxy_conns_peak, 300 + 200);
    assert.equal(m.accept_queue_max, 2 + 2);
    assert.equal(m.backlog, 128, 'the first frontend\'s socket, on its instance');
    assert.equal(m.sd_aborts, 2 + 3);
    assert.deepEqual(m.haproxy_alerts, ['haproxy: [ALERT] (1) : Current worker (9) exited with code 137 (Killed)']);
    assert.deepEqual(m.instances, {
      haproxy: { max_sessions: 17, maxconn_reached: 3, errors: 5, haproxy_conns_peak: 300 },
      'haproxy-2': { max_sessions: 20, maxconn_reached: 4, errors: 3, haproxy_conns_peak: 200 },
    });
    assert.deepEqual(run.steps[0].files.info, true);
  });

  test('report.md shows each instance', () => {
    const md = toMarkdown(buildReport(readRun(twoInstanceRun())));
    assert.match(md, /- HAProxy by instance: haproxy: maxconn reached 3, max sessions 17, errors 5, connections peak 300; haproxy-2: maxconn reached 4, max sessions 20, errors 3, connections peak 200/);
  });

  test('a missing instance file is named as missing, not read as zero', () => {
    const dir = twoInstanceRun();
    fs.rmSync(path.join(dir, 'steps/a-1/haproxy-2-info.txt'));
    const run = readRun(dir);
    assert.equal(run.steps[0].files.info, false);
    assert.equal(run.steps[0].measured.maxconn_reached, 3, 'the instance that answered');
  });
});

describe('a second instance in the table: the preflight follows', () => {
  const limits = {
    haproxy_nofile: 20000, 'haproxy-2_nofile': 20000, backend_nofile: 1048576, holder_nofile: 1048576, port_range: [1024, 65535],
    nr_open: 1048576, conntrack_max: 262144, conntrack_count: 0, bridge_tracked: false, mem_available_bytes: 24e9,
    haproxy_memory_bytes: 2 * 1024 ** 3, 'haproxy-2_memory_bytes': 2 * 1024 ** 3, backend_memory_bytes: 0, holder_memory_bytes: 0,
  };
  const two = parseTopology(TWO);

  test('HAProxy\'s caps add up: two processes of nofile 20000 hold twice 9900', () => {
    assert.equal(preflight('max', limits).largest, 9900);
    const p = preflight('max', limits, two);
    assert.equal(p.largest, 2 * 9900);
    assert.equal(p.binding.limit, 'HAProxy open files (nofile) × 2 processes');
    assert.equal(capsOf(limits, two).find((c) => c.limit.startsWith('HAProxy memory')).allows, 2 * Math.floor((2 * 1024 ** 3 * 0.8) / 12000));
  });

  test('each instance\'s maxconn is its share', () => {
    const [one] = sizeLevels(9000, [1], limits, 60);
    const [shared] = sizeLevels(9000, [1], limits, 60, two);
    assert.equal(one.haproxy.global.maxconn, String(9000 + 50));
    assert.equal(shared.haproxy.global.maxconn, String(4500 + 50));
    // Past what one instance's files allow, each stops at 9950 (past the wall).
    const [past] = sizeLevels(19800, [1], limits, 60);
    assert.deepEqual([past.haproxy.global.maxconn, past.wall], [String(9900 + 50), 9900 + 50]);
    assert.equal(sizeLevels(19800, [1], limits, 60, two)[0].wall, undefined);
  });

  test('readLimits wants every instance\'s own limits', () => {
    const dir = tmp();
    const file = path.join(dir, 'limits.env');
    const lines = ['haproxy_nofile=20000', 'haproxy_memory_bytes=1', 'backend_nofile=1', 'holder_nofile=1', 'nr_open=1', 'conntrack_max=1',
      'conntrack_count=0', 'mem_available_bytes=1', 'backend_memory_bytes=0', 'holder_memory_bytes=0', 'port_range=1 2', 'bridge_tracked=false'];
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    assert.equal(readLimits(file).haproxy_nofile, 20000);
    assert.throws(() => readLimits(file, two), /haproxy-2_nofile should be a whole number, found ""/);
    fs.appendFileSync(file, 'haproxy-2_nofile=30000\nhaproxy-2_memory_bytes=5\n');
    assert.equal(readLimits(file, two)['haproxy-2_nofile'], 30000);
  });
});

describe('HAProxy as N processes: the instance row written out per process', () => {
  const text = fs.readFileSync(new URL('../../../topology.txt', import.meta.url), 'utf8');
  const three = parseTopology(expandProcesses(text, { HAPROXY_PROCESSES: '3' }));

  test('one instance per process, its runtime API and master CLI port_step ports on per process', () => {
    const [row] = TOPOLOGY.instances;
    const port = (address, k) => `127.0.0.1:${Number(address.split(':')[1]) + row.port_step * (k - 1)}`;
    assert.deepEqual(three.instances.map((i) => [i.name, i.process, i.container, i.runtime_api, i.master_cli]),
      [['haproxy', 1], ['haproxy-p2', 2], ['haproxy-p3', 3]].map(([name, k]) => [name, k, 'haproxy', port(row.runtime_api, k), port(row.master_cli, k)]));
    assert.deepEqual(containersOf(three).map((i) => i.name), ['haproxy'], 'the container is counted once');
    assert.deepEqual(frontendsOf(three, 'haproxy-p3').map((f) => f.name), frontendsOf(TOPOLOGY, 'haproxy').map((f) => f.name), 'one config: every frontend on every process');
  });

  test('one process (or no count): the lab\'s own table; a bad count is refused', () => {
    for (const counts of [{}, { HAPROXY_PROCESSES: '1' }]) {
      const one = parseTopology(expandProcesses(text, counts));
      assert.deepEqual(one.instances.map((i) => [i.name, i.runtime_api]), TOPOLOGY.instances.map((i) => [i.name, i.runtime_api]));
    }
    assert.throws(() => expandProcesses(text, { HAPROXY_PROCESSES: 'two' }), /HAPROXY_PROCESSES must be a whole number from 1, found "two"/);
    // Written out once, a run folder's copy reads the same again.
    assert.equal(expandProcesses(expandProcesses(text, { HAPROXY_PROCESSES: '3' }), { HAPROXY_PROCESSES: '5' }), expandProcesses(text, { HAPROXY_PROCESSES: '3' }));
  });
});
