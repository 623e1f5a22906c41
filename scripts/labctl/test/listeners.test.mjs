// Tests of listeners.mjs: the listening sockets a config asks for, and the
// comparison with `ss -ltn` that decides reload or restart and checks a step.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { expectedListeners, listenersText, parseListeners, sameListeners, switchPlan } from '../plan/listeners.mjs';
import { compareListeners, parseSs } from '../run/sockets.mjs';
import { renderConfig } from '../plan/render.mjs';
import { TOPOLOGY } from '../core/topology.mjs';

// fe_main's port (topology.txt), as haproxy.cfg binds it.
const PORT = TOPOLOGY.frontends[0].port;
const TLS_PORT = TOPOLOGY.frontends.find((f) => f.protocol === 'https').port;

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../..');
const baseline = fs.readFileSync(path.join(root, 'haproxy/haproxy.cfg'), 'utf8');

// Measured on HAProxy 3.2: this config, started, gave these Send-Q values in
// `ss -ltn` (1001 300, 1002 200, 1003 100, 1004 50, 1005 7, 1006 300).
const PRECEDENCE = `global
    maxconn 2000
defaults
    mode http
    maxconn 300
frontend a
    bind :1001
frontend b
    maxconn 200
    bind :1002
frontend c
    maxconn 200
    bind :1003 maxconn 100
frontend d
    backlog 50
    maxconn 200
    bind :1004 maxconn 100
frontend e
    backlog 50
    bind :1005 backlog 7
listen f
    bind :1006
    server s 127.0.0.1:1
`;

const SS = `State  Recv-Q Send-Q Local Address:Port  Peer Address:Port
LISTEN 0      2000         0.0.0.0:8405       0.0.0.0:*
LISTEN 0      2000         0.0.0.0:8404       0.0.0.0:*
LISTEN 0      10         127.0.0.1:9000       0.0.0.0:*
LISTEN 129    128          0.0.0.0:${PORT}       0.0.0.0:*
LISTEN 0      4096      127.0.0.11:43607      0.0.0.0:*
`;

describe('expected listening sockets', () => {
  test('backlog: bind backlog, proxy backlog, bind maxconn, proxy maxconn, defaults maxconn, global maxconn', () => {
    assert.deepEqual(expectedListeners(PRECEDENCE).map((l) => [l.proxy, l.port, l.backlog]), [
      ['a', 1001, 300], ['b', 1002, 200], ['c', 1003, 100], ['d', 1004, 50], ['e', 1005, 7], ['f', 1006, 300],
    ]);
  });

  test('the baseline: every frontend at the global maxconn; stats sockets are not binds', () => {
    assert.deepEqual(expectedListeners(baseline).map((l) => `${l.proxy} ${l.port} ${l.backlog}`),
      ['stats 8404 5000', 'metrics 8405 5000', `fe_main ${PORT} 5000`, `fe_tls ${TLS_PORT} 5000`]);
  });

  test('a tuning step: its bind backlog on fe_main, its maxconn everywhere else', () => {
    const cfg = renderConfig(baseline, { global: { maxconn: '2000' }, 'frontend fe_main': { bind: `:${PORT} backlog 128` } }, 't/x');
    assert.equal(listenersText(expectedListeners(cfg)), `stats 8404 2000\nmetrics 8405 2000\nfe_main ${PORT} 128\nfe_tls ${TLS_PORT} 2000\n`);
  });

  test('unix sockets are skipped, several addresses on one bind are several sockets', () => {
    const cfg = 'global\n    maxconn 10\nfrontend x\n    bind unix@/run/x.sock\n    bind /run/y.sock\n    bind ipv4@127.0.0.1:81,[::]:82 backlog 5\n';
    assert.deepEqual(expectedListeners(cfg).map((l) => [l.port, l.backlog]), [[81, 5], [82, 5]]);
  });

  test('comments do not count', () => {
    const cfg = 'global\n    maxconn 10\nfrontend x\n    # bind :99 backlog 1\n    bind :80 # backlog 1\n';
    assert.deepEqual(expectedListeners(cfg).map((l) => [l.port, l.backlog]), [[80, 10]]);
  });
});

describe('ss and the comparison', () => {
  test('ss -ltn: Recv-Q is the accept queue, Send-Q the backlog, with or without header and State', () => {
    const parsed = parseSs(SS);
    assert.deepEqual(parsed[PORT], { queue: 129, backlog: 128 });
    assert.deepEqual(parsed[8404], { queue: 0, backlog: 2000 });
    assert.deepEqual(parseSs('0 511 [::]:80 [::]:*\n'), { 80: { queue: 0, backlog: 511 } });
  });

  test('what runs as asked: no difference', () => {
    const asked = [{ proxy: 'fe_main', port: PORT, backlog: 128 }, { proxy: 'stats', port: 8404, backlog: 2000 }];
    assert.deepEqual(compareListeners(asked, parseSs(SS), 65535), []);
  });

  test('a reload that kept the old socket: named with both backlogs', () => {
    const asked = [{ proxy: 'fe_main', port: PORT, backlog: 5000 }];
    assert.deepEqual(compareListeners(asked, parseSs(SS), 65535), [`fe_main :${PORT} has backlog 128, the config asks 5000`]);
  });

  test('the kernel caps a backlog at somaxconn: asked 5000 with somaxconn 128 is 128', () => {
    assert.deepEqual(compareListeners([{ proxy: 'fe_main', port: PORT, backlog: 5000 }], parseSs(SS), 128), []);
  });

  test('a port that does not listen', () => {
    assert.deepEqual(compareListeners([{ proxy: 'fe_new', port: 8081, backlog: 10 }], parseSs(SS), 65535),
      ['fe_new :8081 is not listening']);
  });
});

describe('reload or restart, decided by the planner', () => {
  const at = (backlog, port = 80) => [{ proxy: 'fe_main', port, backlog }, { proxy: 'stats', port: 8404, backlog: 2000 }];
  test('the same ports and backlogs, in any order: a reload keeps them', () => {
    assert.equal(sameListeners(at(128), [...at(128)].reverse()), true);
  });
  test('a backlog that changes, a port that comes or goes, a backlog set where none was: a restart', () => {
    assert.equal(sameListeners(at(128), at(5000)), false);
    assert.equal(sameListeners(at(128), at(128, 81)), false);
    assert.equal(sameListeners(at(128), at(128).slice(1)), false);
    assert.equal(sameListeners(at(null), at(128)), false);
  });
  test('a run: each step from the one before, the first from the baseline; back to the baseline by a restart if any step changed its sockets', () => {
    const cfg = (maxconn) => `global\n    maxconn ${maxconn}\nfrontend fe_main\n    bind :80\n`;
    assert.deepEqual(switchPlan(cfg(100), [cfg(100), cfg(100)]), {
      baselineListeners: [{ proxy: 'fe_main', port: 80, backlog: 100 }],
      listeners: [[{ proxy: 'fe_main', port: 80, backlog: 100 }], [{ proxy: 'fe_main', port: 80, backlog: 100 }]],
      switches: ['reload', 'reload'], baseline: 'reload',
    });
    const p = switchPlan(cfg(100), [cfg(20), cfg(20), cfg(100)]);
    assert.deepEqual([p.switches, p.baseline], [['restart', 'reload', 'restart'], 'restart']);
  });
  test('a step whose services\' settings change (HAProxy may be recreated, listening as the baseline asks): a reload only if the baseline\'s sockets are its too', () => {
    const cfg = (maxconn) => `global\n    maxconn ${maxconn}\nfrontend fe_main\n    bind :80\n`;
    const cpus = (set) => ({ HAPROXY_CPUSET: set });
    assert.deepEqual(switchPlan(cfg(100), [cfg(20), cfg(20), cfg(20)], [cpus('1'), cpus('1'), cpus('0')]).switches, ['restart', 'reload', 'restart']);
    assert.deepEqual(switchPlan(cfg(100), [cfg(100), cfg(100)], [cpus('1'), cpus('0')]).switches, ['reload', 'reload']);
  });
  test('a .listeners file reads back as written', () => {
    const ls = [{ proxy: 'fe_main', port: 80, backlog: 128 }, { proxy: 'x', port: 81, backlog: null }];
    assert.deepEqual(parseListeners(listenersText(ls)), ls);
  });
});
