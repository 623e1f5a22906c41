// runHolder() end to end against real servers on 127.0.0.1 in this process:
// the lab backend, a closed port, and raw servers that misbehave. Plus
// holder.mjs as a process, stopped by SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { createBackend } from '../../../backend/app.mjs';
import { loadConfig, runHolder, writeSummary } from '../lib.mjs';

const HOLDER = fileURLToPath(new URL('../holder.mjs', import.meta.url));
const quiet = { log: () => {}, warn: () => {} };
const config = (port, env) => loadConfig({ TARGET: `http://127.0.0.1:${port}`, RAMP_UP: '0', HOLD: '0', RAMP_DOWN: '0', GRACE: '2', ...env });

async function backend(t) {
  const b = createBackend({ replica: 'test' });
  const { port } = await b.listen(0, '127.0.0.1');
  t.after(() => b.shutdown({ graceMs: 0 }));
  return { b, port };
}

// A raw TCP server calling reply(socket, request) on each connection's first bytes.
async function rawServer(t, reply) {
  const server = net.createServer((s) => {
    s.on('error', () => {});
    s.once('data', (d) => reply(s, d.toString('latin1')));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set();
  server.on('connection', (s) => sockets.add(s));
  t.after(() => { for (const s of sockets) s.destroy(); server.close(); });
  return server.address().port;
}

test('200 connections held through ramp-up, hold and ramp-down, all ok', async (t) => {
  const { b, port } = await backend(t);
  const started = Date.now();
  const s = await runHolder(config(port, { CONNECTIONS: '200', RAMP_UP: '1', HOLD: '2', RAMP_DOWN: '1' }), quiet);
  const took = Date.now() - started;
  assert.ok(took >= 3900 && took < 6000, `took ${took} ms`);
  assert.deepEqual([s.planned, s.opened, s.connected, s.ok, s.failed, s.failures, s.interrupted], [200, 200, 200, 200, 0, {}, false]);
  assert.deepEqual(s.hold_window, { from_t: 2, to_t: 2, min_open: 200, max_open: 200 });
  assert.equal(s.peak_open, 200);
  assert.equal(s.latency_ms.counts.reduce((a, c) => a + c, 0), 200);
  assert.equal(s.latency_ms.bounds.length, s.latency_ms.counts.length);
  // Every answer came, each counted by how late after its planned end; a
  // local backend answers within a second of it.
  assert.equal(s.late_ms.counts.reduce((a, c) => a + c, 0), 200);
  assert.equal(s.late_ms.counts.slice(11).reduce((a, c) => a + c, 0), 0, `answers later than 1 s: ${JSON.stringify(s.late_ms.counts)}`);
  assert.equal(s.bytes_received > 200 * 12, true);
  assert.ok(s.memory.rss_peak >= s.memory.rss_start && s.bytes_per_connection !== null);
  // One sample a second, ending with everything closed.
  assert.deepEqual(s.samples.map((x) => x.t), [...Array(s.samples.length).keys()]);
  assert.deepEqual(s.samples.at(-1), { ...s.samples.at(-1), open: 0, opened_total: 200, ok_total: 200, failed_total: 0 });
  assert.equal(b.stats().connectionsTotal, 200); // one connection per request, keep-alive not reused
  assert.deepEqual(Object.keys(s).slice(0, 7), ['tool', 'version', 'testid', 'index', 'replicas', 'target', 'path']);
});

// Pacing: the raw server plays HAProxy with a queue. It sends a connection's
// headers only once released; the holder may have MAX_UNCONFIRMED waiting,
// or as many as were released in its last second when that is more.
// queuedServer T PER_TICK TICK_MS: the raw server with its queue, releasing
// PER_TICK connections (their headers, then the body at their ?until=) every
// TICK_MS. → {port, seen: {most, firstSecond}}: the most ever waiting, and in the first second.
async function queuedServer(t, perTick, tickMs) {
  const waiting = [];
  const started = Date.now();
  const seen = { most: 0, firstSecond: 0 };
  const port = await rawServer(t, (sock, request) => {
    waiting.push({ sock, until: +/until=([0-9]+)/.exec(request)[1] });
    seen.most = Math.max(seen.most, waiting.length);
    if (Date.now() - started < 900) seen.firstSecond = Math.max(seen.firstSecond, waiting.length);
  });
  const releaser = setInterval(() => {
    for (const w of waiting.splice(0, perTick)) {
      w.sock.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n');
      setTimeout(() => w.sock.end('ok'), Math.max(0, w.until - Date.now()));
    }
  }, tickMs);
  t.after(() => clearInterval(releaser));
  return { port, seen };
}

test('paced: at most the window waits for its headers, ends move RAMP_SLACK later, the hold starts when all are in', async (t) => {
  // Release two a tick: 20 connections take about a second to get in.
  const { port, seen } = await queuedServer(t, 2, 100);
  const s = await runHolder(config(port, { CONNECTIONS: '20', HOLD: '2', RAMP_SLACK: '2', MAX_UNCONFIRMED: '3', HOLD_PATH: '/slow?early=1' }), quiet);
  assert.ok(seen.most <= s.window_peak, `at most the window (${s.window_peak} at its largest) waiting for their headers at once: found ${seen.most}`);
  assert.ok(s.window_peak >= 3 && s.window_peak <= 20, `window: expected from MAX_UNCONFIRMED 3 to the 20 connections, found ${s.window_peak}`);
  assert.deepEqual([s.planned, s.ok, s.failed, s.confirmed, s.max_unconfirmed, s.ramp_slack], [20, 20, 0, 20, 3, 2]);
  assert.ok(s.ramp_done_s >= 0.7 && s.ramp_done_s < 2.5, `ramp done: expected about 1 s (20 released 2 per 100 ms), found ${s.ramp_done_s} s`);
  // Planned ends: RAMP_UP 0 + RAMP_SLACK 2 + HOLD 2 = 4 s; the hold from the ramp's end to then.
  assert.deepEqual(s.hold_window, { from_t: Math.ceil(s.ramp_done_s + 1), to_t: 3, min_open: 20, max_open: 20 });
  assert.equal(s.samples.at(-1).confirmed_total, 20);
});

test('paced: the window grows to what the path answered in the last second, so the ramp keeps its pace', async (t) => {
  // Released 10 every 50 ms: the path takes 200 a second.
  const { port, seen } = await queuedServer(t, 10, 50);
  const s = await runHolder(config(port, { CONNECTIONS: '400', HOLD: '1', RAMP_SLACK: '4', MAX_UNCONFIRMED: '5', HOLD_PATH: '/slow?early=1' }), quiet);
  assert.deepEqual([s.ok, s.failed], [400, 0]);
  assert.ok(seen.firstSecond <= 5, `first second: at most MAX_UNCONFIRMED 5 waiting, found ${seen.firstSecond}`);
  assert.ok(s.window_peak >= 50, `window: expected to grow towards the ~100 a second let through, found ${s.window_peak}`);
  assert.ok(seen.most > 5 && seen.most <= s.window_peak, `waiting at once: expected above 5 and at most the window ${s.window_peak}, found ${seen.most}`);
});

test('paced, and HAProxy far too slow: a connection whose planned end came before it could open is not opened (ramp_behind)', async (t) => {
  let seen = 0;
  // Headers only after 1.5 s: with MAX_UNCONFIRMED 1 the second connection opens at 1.5 s, past every planned end (1 s).
  const port = await rawServer(t, (sock) => {
    seen++;
    setTimeout(() => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), 1500);
  });
  const warnings = [];
  const s = await runHolder(config(port, { CONNECTIONS: '5', HOLD: '1', MAX_UNCONFIRMED: '1', HOLD_PATH: '/slow?early=1' }), { ...quiet, warn: (l) => warnings.push(l) });
  assert.equal(seen, 1, `connections that reached the server: expected 1, found ${seen}`);
  assert.deepEqual([s.opened, s.ok, s.failed, s.failures], [1, 1, 4, { ramp_behind: 4 }]);
  assert.equal(warnings.filter((l) => /not opened: their planned ends came before the ramp/.test(l)).length, 1, `one warning: ${JSON.stringify(warnings)}`);
});

test('unpaced (MAX_UNCONFIRMED 0): all open on schedule whether or not headers came', async (t) => {
  let seen = 0;
  const port = await rawServer(t, (sock, request) => {
    seen++;
    setTimeout(() => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), Math.max(0, +/until=([0-9]+)/.exec(request)[1] - Date.now()));
  });
  const s = await runHolder(config(port, { CONNECTIONS: '20', HOLD: '1' }), quiet);
  assert.deepEqual([seen, s.ok, s.confirmed, s.ramp_done_s], [20, 20, 20, null]);
  assert.deepEqual([s.hold_window.from_t, s.hold_window.to_t], [1, 0]);
});

test('this replica opens only its share; requests are keep-alive GETs with ?until= the planned end', async (t) => {
  const requests = [];
  const port = await rawServer(t, (sock, request) => {
    requests.push(request);
    sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
  // 5 over 3 replicas: replica 2 has connections 1 and 4.
  const cfg = config(port, { CONNECTIONS: '5', HOLDER_REPLICAS: '3', HOLDER_INDEX: '2', HOLD: '1', RAMP_DOWN: '1', HOLD_PATH: '/slow?a=b' });
  const s = await runHolder(cfg, quiet);
  assert.deepEqual([s.planned, s.ok, s.index, s.replicas], [2, 2, 2, 3]);
  const ms = requests.map((r) => {
    assert.match(r, /^GET \/slow\?a=b&until=[0-9]+ HTTP\/1\.1\r\nHost: 127\.0\.0\.1:[0-9]+\r\n\r\n$/);
    const until = +/until=([0-9]+)/.exec(r)[1];
    assert.equal(until % 100, 0, `until=${until}: expected on a TICK_MS (100 ms) boundary of the clock`);
    return until - s.started_at_ms; // the planned end, after the start
  }).sort((a, b) => a - b);
  assert.equal(ms.length, 2);
  // Its two end at HOLD and HOLD + RAMP_DOWN * 1/2, whenever they connected, on the next tick boundary.
  assert.ok(ms[0] >= 1000 && ms[0] < 1100, `first: expected from 1000 to 1099 ms after the start, found ${ms[0]}`);
  assert.ok(ms[1] >= 1500 && ms[1] < 1600, `second: expected from 1500 to 1599 ms after the start, found ${ms[1]}`);
});

// The ramp-down goes at the ramp-up's pace: each answer is asked for
// heldSeconds (RAMP_UP + HOLD) after its connection opened, here later than
// RAMP_DOWN 0 would ask (all at once, at RAMP_UP + HOLD).
test('each connection is held as long: the ramp-down closes at the pace the ramp-up opened', async (t) => {
  const requests = [];
  const port = await rawServer(t, (sock, request) => {
    requests.push({ request, at: Date.now() });
    sock.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
  const s = await runHolder(config(port, { CONNECTIONS: '3', RAMP_UP: '1', HOLD: '1', RAMP_DOWN: '0' }), quiet);
  assert.deepEqual([s.ok, s.failed, s.held_s], [3, 0, 2]);
  const held = requests.map(({ request, at }) => +/until=([0-9]+)/.exec(request)[1] - at).sort((a, b) => a - b);
  const ends = requests.map(({ request }) => +/until=([0-9]+)/.exec(request)[1] - s.started_at_ms).sort((a, b) => a - b);
  // Asked at open + 2 s on the next 100 ms boundary (the request leaves a few ms after the open).
  for (const ms of held) assert.ok(ms > 1800 && ms <= 2100, `asked ${ms} ms after its request: expected 2,000 ms after its open, to the next 100 ms`);
  assert.ok(ends[2] - ends[0] >= 500, `ends ${ends.join(', ')} ms after the start: expected spread as the opens were (0, 333, 667 ms)`);
});

test('closed port: every connection fails with ECONNREFUSED', async () => {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  await once(probe, 'close');
  const s = await runHolder(config(port, { CONNECTIONS: '20', HOLD: '5' }), quiet);
  assert.deepEqual([s.ok, s.failed, s.connected, s.failures], [0, 20, 0, { ECONNREFUSED: 20 }]);
  assert.equal(s.bytes_per_connection, null);
});

test('a server that does not accept: connect_timeout after CONNECT_TIMEOUT', async (t) => {
  // A process listening with a backlog of 1 that then blocks: once its accept
  // queue is full, the kernel drops further SYNs and connect() just waits.
  const code = `const s = require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
    process.stdout.write(s.address().port + '\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 4000);
    process.exit(0);
  });`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const [line] = await once(child.stdout, 'data');
  const s = await runHolder(config(+line, { CONNECTIONS: '8', CONNECT_TIMEOUT: '0.5', HOLD: '0.5', GRACE: '0.5' }), quiet);
  assert.ok(s.failures.connect_timeout >= 4, JSON.stringify(s.failures));
  assert.equal(s.failed, 8);
  assert.equal(s.connected + s.failures.connect_timeout, 8);
});

test('unresolvable target: every connection fails with the lookup error, at once', async () => {
  const cfg = loadConfig({ TARGET: 'http://no-such-host.invalid:8080', CONNECTIONS: '7', RAMP_UP: '5' });
  const started = Date.now();
  const s = await runHolder(cfg, quiet);
  assert.ok(Date.now() - started < 3000);
  assert.deepEqual([s.opened, s.failed, Object.values(s.failures)], [0, 7, [7]]);
  assert.match(Object.keys(s.failures)[0], /^(ENOTFOUND|EAI_AGAIN)$/);
});

test('server closing before the full response: closed_early', async (t) => {
  const port = await rawServer(t, (sock) => sock.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort'));
  const s = await runHolder(config(port, { CONNECTIONS: '5', HOLD: '5' }), quiet);
  assert.deepEqual([s.ok, s.failed, s.failures], [0, 5, { closed_early: 5 }]);
});

test('chunked 200 is ok, other statuses fail as status_NNN, garbage as bad_response', async (t) => {
  const chunked = await rawServer(t, (sock) => {
    sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npo');
    setTimeout(() => sock.write('ng\r\n0\r\n\r\n'), 50); // complete: the client closes, not us
  });
  assert.deepEqual((await runHolder(config(chunked, { CONNECTIONS: '3' }), quiet)).failures, {});
  const { port } = await backend(t);
  const s = await runHolder(config(port, { CONNECTIONS: '3', HOLD_PATH: '/nope' }), quiet);
  assert.deepEqual([s.ok, s.failures], [0, { status_404: 3 }]);
  const junk = await rawServer(t, (sock) => sock.write('SSH-2.0-x\r\n\r\n'));
  assert.deepEqual((await runHolder(config(junk, { CONNECTIONS: '2' }), quiet)).failures, { bad_response: 2 });
});

test('no response by planned end + GRACE: timeout; abort: interrupted', async (t) => {
  const port = await rawServer(t, () => {}); // reads the request, never answers
  const started = Date.now();
  const s = await runHolder(config(port, { CONNECTIONS: '4', HOLD: '0.2', GRACE: '0.3' }), quiet);
  assert.ok(Date.now() - started < 1500);
  assert.deepEqual([s.connected, s.failures, s.interrupted], [4, { timeout: 4 }, false]);

  const stop = new AbortController();
  setTimeout(() => stop.abort(), 300);
  const i = await runHolder(config(port, { CONNECTIONS: '6', RAMP_UP: '1', HOLD: '30' }), { ...quiet, signal: stop.signal });
  assert.equal(i.interrupted, true);
  assert.equal(i.opened < 6, true); // some were not even opened yet, and count too
  assert.deepEqual([i.planned, i.failed, i.failures], [6, 6, { interrupted: 6 }]);
});

test('holder.mjs: SIGTERM stops it, writes the summary, exits 130', async (t) => {
  const { b, port } = await backend(t);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'holder-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const child = spawn(process.execPath, [HOLDER], {
    env: { PATH: process.env.PATH, TARGET: `http://127.0.0.1:${port}`, CONNECTIONS: '5', RAMP_UP: '0', HOLD: '30',
      LOADGEN_SUMMARY_DIR: 'run/step', RESULTS_ROOT: root, TESTID: 't1', HOLDER_REPLICAS: '2', HOLDER_INDEX: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  for (let i = 0; b.stats().inFlight < 3 && i < 100; i++) await delay(20);
  assert.equal(b.stats().inFlight, 3); // 5 over 2 replicas: this one holds 3
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 130);
  assert.match(out, /^holder 1\/2: testid t1, 5 connections in all to http:\/\/127\.0\.0\.1:[0-9]+\/slow/);
  const s = JSON.parse(fs.readFileSync(path.join(root, 'run/step/holder-1.json'), 'utf8'));
  assert.deepEqual([s.testid, s.index, s.replicas, s.planned, s.interrupted, s.failures], ['t1', 1, 2, 3, true, { interrupted: 3 }]);
});

test('writeSummary creates the folder; the file is named by the summary\'s tool and index', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'holder-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const file = writeSummary({ tool: 'holder', index: 3, ok: 1 }, { resultsRoot: root, summaryDir: 'a/b' });
  assert.equal(file, path.join(root, 'a/b/holder-3.json'));
  assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { tool: 'holder', index: 3, ok: 1 });
  assert.equal(writeSummary({ tool: 'vegeta', index: 2 }, { resultsRoot: root, summaryDir: 'a/b' }), path.join(root, 'a/b/vegeta-2.json'));
});

test('TARGET https://: each connection a TLS one, verified with the CA, held like a plain one', async (t) => {
  const { port } = await backend(t);
  const tls = await import('node:tls');
  const { ensureCertificates } = await import('../../../tls/make-certs.mjs');
  const certs = fs.mkdtempSync(path.join(os.tmpdir(), 'holder-tls-'));
  t.after(() => fs.rmSync(certs, { recursive: true, force: true }));
  ensureCertificates(certs);
  const pem = fs.readFileSync(path.join(certs, 'ecdsa.pem'), 'utf8');
  let handshakes = 0;
  // TLS ends here, as at HAProxy's fe_tls; the backend stays plain.
  const front = tls.createServer({ cert: pem, key: pem }, (s) => {
    handshakes += 1;
    const back = net.connect(port, '127.0.0.1');
    s.pipe(back).pipe(s);
    s.on('error', () => back.destroy());
    back.on('error', () => s.destroy());
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  t.after(() => front.close());
  const cfg = loadConfig({ TARGET: `https://localhost:${front.address().port}`, TLS_CA: path.join(certs, 'ca.crt'),
    CONNECTIONS: '20', RAMP_UP: '0', HOLD: '1', RAMP_DOWN: '0', GRACE: '2' });
  cfg.host = 'localhost';
  const s = await runHolder(cfg, quiet);
  assert.deepEqual([s.target, s.ok, s.failed, s.failures], [`https://localhost:${front.address().port}`, 20, 0, {}]);
  assert.equal(handshakes, 20, 'TLS handshakes the server saw');
});

// Every replica ticks on the clock's 100 ms boundaries, so replicas started
// apart still open their connections together. Started 50 ms past a
// boundary, a holder ticking on its own phase would open each connection
// about 50 ms past one.
test('connections open on the clock\'s 100 ms boundaries, whenever the holder starts', async (t) => {
  const phases = [];
  const port = await rawServer(t, (s) => {
    phases.push(Date.now() % 100);
    s.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
  await delay(150 - (Date.now() % 100)); // 50 ms past a boundary
  await runHolder(config(port, { CONNECTIONS: '20', RAMP_UP: '1', MAX_UNCONFIRMED: '0' }), quiet);
  assert.equal(phases.length, 20);
  // A request arrives within a few ms of its tick; 45 ms, and a quarter of
  // them later (the first tick is at the start), leave room for a busy machine.
  const late = phases.filter((p) => p >= 45);
  assert.ok(late.length <= 5, `expected most requests within 45 ms after a 100 ms boundary, found their phases ${JSON.stringify(phases)}`);
});
