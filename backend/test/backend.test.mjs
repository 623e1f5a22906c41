// HTTP behaviour of createBackend(), with servers on port 0 in this process.
// Delays are small (SLOW_MS=200) and timing asserts have generous margins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createBackend, MAX_BODY_BYTES } from '../app.mjs';

const REPLICA = 'test-replica';
const MARGIN_MS = 800; // scheduling slack on a busy CI machine
const TIMER_EARLY_MS = 50; // how early a timer may fire against performance.now() on a busy machine

async function start(t, options = {}) {
  const backend = createBackend({ replica: REPLICA, slowMs: 200, ...options });
  const { port } = await backend.listen(0, '127.0.0.1');
  t.after(() => backend.shutdown({ graceMs: 0, drainMs: 0 }));
  return { backend, port, base: `http://127.0.0.1:${port}` };
}

// One request on its own connection (agent: false unless given); resolves with
// status, headers, body and elapsed ms, rejects on a socket error.
function request(base, path, { method = 'GET', headers = {}, body, agent = false, onResponse } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(new URL(path, base), { method, headers, agent }, (res) => {
      onResponse?.(res, req, performance.now() - started);
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Waits until check() returns truthy (polling), or fails after timeoutMs.
async function until(check, what, timeoutMs = 3000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await delay(10);
  }
}

// Parses the Prometheus text format strictly: every line is a HELP, a TYPE or
// a sample of a metric whose TYPE came first. Returns 'name{labels}' -> value.
function parseMetrics(text) {
  const samples = new Map();
  const types = new Map();
  const helps = new Set();
  const label = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*"';
  const sample = new RegExp(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{${label}(?:,${label})*\\})? (-?[0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?)$`);
  assert.ok(text.endsWith('\n'), 'exposition ends with a newline');
  for (const line of text.slice(0, -1).split('\n')) {
    let m;
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*$/.exec(line))) helps.add(m[1]);
    else if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge)$/.exec(line))) types.set(m[1], m[2]);
    else if ((m = sample.exec(line))) {
      assert.ok(types.has(m[1]) && helps.has(m[1]), `HELP and TYPE come before ${line}`);
      samples.set(m[1] + (m[2] ?? ''), Number(m[3]));
    } else assert.fail(`not a Prometheus text line: ${JSON.stringify(line)}`);
  }
  return { samples, types };
}

async function scrape(base) {
  const res = await request(base, '/metrics');
  assert.equal(res.status, 200);
  return parseMetrics(res.body).samples;
}

test('GET /fast answers at once with the replica name', async (t) => {
  const { base } = await start(t);
  const res = await request(base, '/fast');
  assert.equal(res.status, 200);
  assert.equal(res.body, "I'm FAST!!!!");
  assert.equal(res.headers['x-replica'], REPLICA);
  assert.match(res.headers['content-type'], /^text\/plain/);
  assert.ok(res.ms < MARGIN_MS, `took ${res.ms} ms`);
});

test('GET /slow takes at least SLOW_MS, ?ms= overrides it', async (t) => {
  const { base } = await start(t, { slowMs: 200 });
  const res = await request(base, '/slow');
  assert.equal(res.status, 200);
  assert.equal(res.body, "I'm slooooow");
  assert.equal(res.headers['x-replica'], REPLICA);
  assert.ok(res.ms >= 195, `took only ${res.ms} ms`); // timers may round 1 ms early
  assert.ok(res.ms < 200 + MARGIN_MS, `took ${res.ms} ms`);

  const quick = await request(base, '/slow?ms=0');
  assert.equal(quick.body, "I'm slooooow");
  assert.ok(quick.ms < MARGIN_MS, `took ${quick.ms} ms`);
  const bad = await request(base, '/slow?ms=soon');
  assert.equal(bad.status, 400);
  assert.equal(bad.body, 'bad "ms" query parameter "soon": want an integer number of milliseconds between 0 and 3600000\n');
});

test('GET /slow?until=T answers at T (ms since the epoch), at once when T has passed', async (t) => {
  const { base } = await start(t, { slowMs: 5000, maxSleepMs: 60000 });
  const due = Date.now() + 300;
  const res = await request(base, `/slow?until=${due}`);
  assert.equal(res.status, 200);
  const late = Date.now() - due;
  assert.ok(late >= -5 && late < MARGIN_MS, `answered ${late} ms after T`);

  const past = await request(base, `/slow?until=${Date.now() - 10000}`);
  assert.equal(past.status, 200);
  assert.ok(past.ms < MARGIN_MS, `a past T took ${past.ms} ms`);
  const far = await request(base, `/slow?until=${Date.now() + 120000}`);
  assert.equal(far.status, 400, 'T beyond MAX_SLEEP_MS from now');
  assert.match(far.body, /^bad "until" query parameter "[0-9]+": want a time in ms since the epoch, at most 60000 ms from now\n$/);
  const bad = await request(base, '/slow?until=soon');
  assert.equal(bad.body, 'bad "until" query parameter "soon": want a time in ms since the epoch, at most 60000 ms from now\n');
});

test('GET /slow?early=1 sends the headers at once and the body at the end', async (t) => {
  const { backend, base } = await start(t, { slowMs: 5000, maxSleepMs: 60000 });
  const due = Date.now() + 600;
  let headersAfter;
  const res = await request(base, `/slow?until=${due}&early=1`, { onResponse: (r, req, ms) => (headersAfter = ms) });
  assert.ok(headersAfter < 400, `headers came ${headersAfter} ms after the request, expected at once (the body is due at 600 ms)`);
  assert.equal(res.status, 200);
  assert.equal(res.body, "I'm slooooow");
  assert.equal(res.headers['content-length'], '12');
  const late = Date.now() - due;
  assert.ok(late >= -5 && late < MARGIN_MS, `body ended ${late} ms after T`);
  assert.match(backend.renderMetrics(), /^backend_requests_total\{route="slow",code="200"\} 1$/m, 'the early answer counted once, complete');

  const bad = await request(base, '/slow?ms=10&early=yes');
  assert.equal(bad.status, 400);
  assert.equal(bad.body, 'bad "early" query parameter "yes": want 1 (headers at once)\n');
});

// The held path (GET /slow?early=1, read without Node's HTTP server) on a raw
// socket: the same head the HTTP server gives /slow, the body at the time
// asked, counted in /metrics; the next request on the connection is the HTTP
// server's.
test('GET /slow?early=1 as a raw HTTP/1.1 request: the HTTP server\'s own head, then a kept-alive next request', async (t) => {
  const { backend, port, base } = await start(t);
  const agent = new http.Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  const viaHttp = await request(base, '/slow?ms=0', { agent });
  const socket = net.connect(port, '127.0.0.1');
  t.after(() => socket.destroy());
  let text = '';
  const arrived = [];
  socket.on('data', (d) => {
    text += d;
    arrived.push([performance.now(), text.length]);
  });
  const started = performance.now();
  socket.write('GET /slow?early=1&ms=300 HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => text.includes('\r\n\r\n'), 'the head');
  const headAt = performance.now() - started;
  assert.ok(headAt < 200, `head at once: found after ${headAt.toFixed(0)} ms`);
  const head = text.slice(0, text.indexOf('\r\n\r\n'));
  const names = head.split('\r\n').slice(1).map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
  assert.equal(head.split('\r\n')[0], 'HTTP/1.1 200 OK');
  assert.deepEqual(names.sort(), Object.keys(viaHttp.headers).sort(), 'the same header names as the HTTP server gives /slow');
  assert.match(head, new RegExp(`\r\nX-Replica: ${REPLICA}\r\n`));
  assert.equal(backend.stats().pendingTimers, 1);
  await until(() => text.endsWith("I'm slooooow"), 'the body', 2000);
  assert.ok(performance.now() - started >= 300 - TIMER_EARLY_MS, 'the body at the time asked');
  // Kept alive: the next request on the same connection, any route.
  text = '';
  socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
  await until(() => text.endsWith("I'm FAST!!!!"), 'the next answer on the same connection');
  const metrics = (await request(base, '/metrics')).body;
  assert.match(metrics, /^backend_requests_total\{route="slow",code="200"\} 2$/m, 'both /slow answers counted');
  assert.match(metrics, /^backend_requests_total\{route="fast",code="200"\} 1$/m);
  assert.equal(backend.stats().openConnections >= 1, true);
});

test('the held path: a client gone before the body leaves no timer and counts an aborted /slow; bad parameters get the HTTP server\'s 400', async (t) => {
  const { backend, port, base } = await start(t);
  const socket = net.connect(port, '127.0.0.1');
  socket.write(`GET /slow?early=1&until=${Date.now() + 60000} HTTP/1.1\r\nHost: x\r\n\r\n`);
  await until(() => backend.stats().pendingTimers === 1, 'the held request');
  socket.destroy();
  await until(() => backend.stats().pendingTimers === 0 && backend.stats().inFlight === 0, 'the timer and the request gone');
  assert.match((await request(base, '/metrics')).body, /^backend_requests_aborted_total\{route="slow"\} 1$/m);
  const bad = await request(base, '/slow?early=1&until=soon');
  assert.equal(bad.status, 400);
  assert.match(bad.body, /^bad "until" query parameter "soon"/);
});

test('/ping without headers answers one pong at once', async (t) => {
  const { base } = await start(t);
  const res = await request(base, '/ping');
  assert.equal(res.status, 200);
  assert.equal(res.body, 'pong');
  assert.equal(res.headers['x-replica'], REPLICA);
  assert.ok(res.ms < MARGIN_MS, `took ${res.ms} ms`);
});

test('/ping waits at most "sleep" ms per pong and sends times+1 pongs', async (t) => {
  const { base } = await start(t);
  const one = await request(base, '/ping', { headers: { sleep: '200' } });
  assert.equal(one.status, 200);
  assert.equal(one.body, 'pong');
  assert.ok(one.ms <= 200 + MARGIN_MS, `took ${one.ms} ms`);

  const many = await request(base, '/ping', { headers: { sleep: '50', times: '3' } });
  assert.equal(many.body, 'pong'.repeat(4));
  assert.ok(many.ms <= 4 * 50 + MARGIN_MS, `took ${many.ms} ms`);

  const instant = await request(base, '/ping', { headers: { sleep: '0', times: '20' } });
  assert.equal(instant.body, 'pong'.repeat(21));
});

test('/ping sends its headers before the first pong', async (t) => {
  const { base } = await start(t);
  let headersAfter;
  const res = await request(base, '/ping', {
    headers: { sleep: '300', times: '1' },
    onResponse: (r, req, ms) => (headersAfter = ms),
  });
  assert.equal(res.body, 'pongpong');
  assert.ok(headersAfter < 250, `headers came after ${headersAfter} ms`); // not after the waits
});

test('/ping delays are random: 10 requests with sleep 200 do not all take the same time', async (t) => {
  const { base } = await start(t);
  const results = await Promise.all(Array.from({ length: 10 }, () => request(base, '/ping', { headers: { sleep: '200' } })));
  const ms = results.map((r) => r.ms);
  for (const r of results) assert.equal(r.body, 'pong');
  assert.ok(Math.max(...ms) <= 200 + MARGIN_MS, `durations ${ms}`);
  // Ten uniform draws in 0..200 all landing within 20 ms of each other: ~1e-8.
  assert.ok(Math.max(...ms) - Math.min(...ms) > 20, `durations barely vary: ${ms.map(Math.round)}`);
});

test('/ping rejects bad headers with 400 and a one-line explanation', async (t) => {
  const { base } = await start(t);
  const want = (name, value, allowed) => `bad "${name}" header "${value}": want ${allowed}\n`;
  const ms = 'an integer number of milliseconds between 0 and 3600000';
  const cases = [
    [{ sleep: 'abc' }, want('sleep', 'abc', ms)],
    [{ sleep: '-5' }, want('sleep', '-5', ms)],
    [{ sleep: '1.5' }, want('sleep', '1.5', ms)],
    [{ sleep: '1e3' }, want('sleep', '1e3', ms)],
    [{ sleep: '3600001' }, want('sleep', '3600001', ms)],
    [{ sleep: '99999999999999999999' }, want('sleep', '99999999999999999999', ms)],
    [{ times: 'x' }, want('times', 'x', 'an integer between 0 and 1000')],
    [{ times: '1001' }, want('times', '1001', 'an integer between 0 and 1000')],
    [{ sleep: '10', times: '-1' }, want('times', '-1', 'an integer between 0 and 1000')],
  ];
  for (const [headers, body] of cases) {
    const res = await request(base, '/ping', { headers });
    assert.equal(res.status, 400, JSON.stringify(headers));
    assert.equal(res.body, body);
    assert.equal(res.headers['x-replica'], REPLICA);
  }
  // The server is still fine afterwards.
  assert.equal((await request(base, '/ping', { headers: { sleep: '3600000', times: '0' }, method: 'HEAD' })).status, 200);
});

test('MAX_SLEEP_MS caps the sleep header', async (t) => {
  const { base } = await start(t, { maxSleepMs: 1000 });
  const res = await request(base, '/ping', { headers: { sleep: '1001' } });
  assert.equal(res.status, 400);
  assert.equal(res.body, 'bad "sleep" header "1001": want an integer number of milliseconds between 0 and 1000\n');
  assert.equal((await request(base, '/ping', { headers: { sleep: '10' } })).body, 'pong');
});

test('POST /ping with a JSON body (small and 1 MiB) answers pong', async (t) => {
  const { base } = await start(t);
  const json = JSON.stringify({ hello: 'world' });
  const res = await request(base, '/ping', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json), sleep: '20', times: '1' },
    body: json,
  });
  assert.equal(res.status, 200);
  assert.equal(res.body, 'pongpong');
  const big = JSON.stringify({ pad: 'x'.repeat(1 << 20) });
  const bigRes = await request(base, '/ping', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
  assert.equal(bigRes.body, 'pong');
});

test('a body over MAX_BODY_BYTES gets 413 (declared) or its connection closed (chunked); the server still answers', async (t) => {
  const { base, port } = await start(t);
  const declared = await request(base, '/ping', {
    method: 'POST', headers: { 'content-length': String(MAX_BODY_BYTES + 1) }, body: 'x'.repeat(MAX_BODY_BYTES + 1),
  }).catch((err) => ({ error: err.code }));
  assert.equal(declared.status, 413, `declared length: expected 413, found ${JSON.stringify(declared)}`);
  // Chunked, no length, endless: /ping answers before the body ends, and the
  // server closes the connection once the bytes pass the cap.
  const total = MAX_BODY_BYTES * 4;
  const sentAtClose = await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.on('close', () => resolve(sent));
    socket.write('POST /ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
    const more = () => {
      while (sent < total && !socket.destroyed) {
        sent += chunk.length;
        if (!socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) return socket.once('drain', more);
      }
      if (sent >= total) setTimeout(() => socket.destroy(), 2000); // the server kept reading: the client gives up
      return undefined;
    };
    more();
  });
  assert.ok(sentAtClose < total, `chunked body over the cap: the server should close the connection before ${total} bytes, it read all ${sentAtClose}`);
  assert.equal((await request(base, '/fast')).status, 200);
});

test('/ping refuses a whole answer longer than MAX_SLEEP_MS: sleep x (times + 1)', async (t) => {
  const { base } = await start(t, { maxSleepMs: 1000 });
  const res = await request(base, '/ping', { headers: { sleep: '500', times: '2' } });
  assert.equal(res.status, 400);
  assert.equal(res.body, '"sleep" x ("times" + 1) is 1500 ms: want at most 1000 (MAX_SLEEP_MS)\n');
  assert.equal((await request(base, '/ping', { headers: { sleep: '10', times: '1' } })).body, 'pongpong');
});

test('GET /healthz answers ok', async (t) => {
  const { base } = await start(t);
  const res = await request(base, '/healthz');
  assert.equal(res.status, 200);
  assert.equal(res.body, 'ok');
  assert.equal(res.headers['x-replica'], REPLICA);
});

test('unknown paths get 404, known paths with a wrong method 405', async (t) => {
  const { base } = await start(t);
  for (const path of ['/', '/nope', '/fast/extra', '/FAST']) {
    const res = await request(base, path);
    assert.equal(res.status, 404, path);
    assert.equal(res.headers['x-replica'], REPLICA);
  }
  const res = await request(base, '/fast', { method: 'POST', body: 'x' });
  assert.equal(res.status, 405);
  assert.equal(res.headers.allow, 'GET, HEAD');
});

test('/metrics is Prometheus text with counters and gauges that move', async (t) => {
  const { base } = await start(t);
  const first = await request(base, '/metrics');
  assert.equal(first.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  assert.equal(first.headers['x-replica'], REPLICA);
  const { samples, types } = parseMetrics(first.body);
  assert.equal(types.get('backend_requests_total'), 'counter');
  assert.equal(types.get('backend_connections_total'), 'counter');
  assert.equal(types.get('backend_requests_in_flight'), 'gauge');
  assert.equal(types.get('backend_open_connections'), 'gauge');
  assert.equal(samples.get(`backend_info{replica="${REPLICA}"}`), 1);
  assert.equal(samples.get('backend_requests_in_flight'), 0); // the scrape itself is left out

  await request(base, '/fast');
  await request(base, '/fast');
  await request(base, '/nope');
  await request(base, '/ping', { headers: { sleep: 'abc' } });
  const slow = request(base, '/slow?ms=400');
  await delay(150);
  const during = await scrape(base);
  assert.equal(during.get('backend_requests_in_flight'), 1);
  assert.ok(during.get('backend_open_connections') >= 2, 'the slow request and the scrape');
  assert.equal(during.get('backend_requests_total{route="fast",code="200"}'), 2);
  assert.equal(during.get('backend_requests_total{route="other",code="404"}'), 1);
  assert.equal(during.get('backend_requests_total{route="ping",code="400"}'), 1);
  assert.equal(during.get('backend_requests_total{route="metrics",code="200"}'), 1);
  assert.equal(during.get('backend_requests_total{route="slow",code="200"}'), undefined);

  assert.equal((await slow).status, 200);
  const after = await scrape(base);
  assert.equal(after.get('backend_requests_in_flight'), 0);
  assert.equal(after.get('backend_requests_total{route="slow",code="200"}'), 1);
  assert.equal(after.get('backend_requests_total{route="metrics",code="200"}'), 2);
  assert.ok(after.get('backend_connections_total') >= 8, `${after.get('backend_connections_total')} connections`);
});

test('replica names are escaped in metric labels', async (t) => {
  const { base } = await start(t, { replica: 'a "quoted" \\ name' });
  const samples = await scrape(base);
  assert.equal(samples.get('backend_info{replica="a \\"quoted\\" \\\\ name"}'), 1);
});

test('a client that disconnects mid-response leaves no timers and no in-flight request', async (t) => {
  const { backend, base } = await start(t);
  const aborted = (path, headers) =>
    request(base, path, { headers, onResponse: (res, req) => req.destroy() }).then(
      () => assert.fail(`${path} should not complete`),
      () => {},
    );
  const slow = http.get(new URL('/slow?ms=5000', base), { agent: false }).on('error', () => {});
  await until(() => backend.stats().pendingTimers === 1, 'the slow timer to be pending');
  await aborted('/ping', { sleep: '5000', times: '5' }); // hangs up once the headers arrive
  slow.destroy();
  await until(() => backend.stats().inFlight === 0 && backend.stats().pendingTimers === 0, 'in-flight and timers to drop to 0');
  const samples = await scrape(base);
  assert.equal(samples.get('backend_requests_aborted_total{route="slow"}'), 1);
  assert.equal(samples.get('backend_requests_aborted_total{route="ping"}'), 1);
  assert.equal((await request(base, '/fast')).status, 200);
});

test('default timeouts: requestTimeout off, headers 60 s, keep-alive 65 s, no socket timeout', async (t) => {
  const { backend } = await start(t);
  assert.equal(backend.server.requestTimeout, 0);
  assert.equal(backend.server.headersTimeout, 60000);
  assert.equal(backend.server.keepAliveTimeout, 65000);
  assert.equal(backend.server.timeout, 0);
});

test('SERVER_TIMEOUT_MS destroys a connection that stays silent longer than it', async (t) => {
  const { backend, base } = await start(t, { serverTimeoutMs: 200 });
  assert.equal(backend.server.timeout, 200);
  const started = performance.now();
  await assert.rejects(request(base, '/slow?ms=1000'), (err) => {
    assert.equal(err.code, 'ECONNRESET'); // "socket hang up"
    return true;
  });
  const ms = performance.now() - started;
  assert.ok(ms >= 150 && ms < 1000, `cut after ${ms} ms`);
  await until(() => backend.stats().pendingTimers === 0 && backend.stats().inFlight === 0, 'the slow timer to be cleared');
});

test('SERVER_TIMEOUT_MS counts inactivity: pongs every <= 50 ms keep a 300 ms timeout away', async (t) => {
  const { base } = await start(t, { serverTimeoutMs: 300 });
  const res = await request(base, '/ping', { headers: { sleep: '50', times: '10' } });
  assert.equal(res.body, 'pong'.repeat(11));
});

test('graceful shutdown: in-flight requests finish, new connections are refused', async (t) => {
  const { backend, port, base } = await start(t);
  const slow = request(base, '/slow?ms=400');
  // A second connection in the middle of a request (headers half sent) stays
  // open through shutdown and then sees the 503 health check.
  const raw = net.connect(port, '127.0.0.1');
  let rawReply = '';
  raw.setEncoding('utf8').on('data', (d) => (rawReply += d));
  const rawClosed = new Promise((resolve) => raw.on('close', resolve));
  raw.write('GET /healthz HTTP/1.1\r\nHost: lab\r\n');
  await until(() => backend.stats().inFlight === 1 && backend.stats().openConnections === 2, 'both connections');

  let done = false;
  const stopped = backend.shutdown({ graceMs: 5000, drainMs: 0 }).then((r) => ((done = true), r));
  await assert.rejects(request(base, '/fast'), { code: 'ECONNREFUSED' });
  raw.write('\r\n');
  await rawClosed;
  assert.match(rawReply, /^HTTP\/1\.1 503 /);
  assert.match(rawReply, /\r\nconnection: close\r\n/i);
  assert.match(rawReply, /shutting down$/);

  assert.equal(done, false, 'shutdown waits for the slow request');
  const res = await slow;
  assert.equal(res.status, 200);
  assert.equal(res.body, "I'm slooooow");
  assert.equal(res.headers.connection, 'close');
  assert.deepEqual(await stopped, { forced: false });
  assert.equal(backend.stats().openConnections, 0);
});

test('graceful shutdown closes a keep-alive connection once its /ping finishes', async (t) => {
  const { backend, base } = await start(t);
  const agent = new http.Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  let answered = false;
  const ping = request(base, '/ping', { agent, headers: { sleep: '300', times: '1' } });
  ping.then(() => { answered = true; }, () => {});
  // Both random waits can be under the 10 ms poll: then the ping is already
  // answered and its connection idle, which the shutdown must close at once too.
  await until(() => answered || backend.stats().pendingTimers === 1, 'the ping to start');
  const started = performance.now();
  const result = await backend.shutdown({ graceMs: 5000, drainMs: 0 });
  assert.deepEqual(result, { forced: false });
  assert.ok(performance.now() - started < 600 + MARGIN_MS, 'did not wait for the keep-alive timeout');
  assert.equal((await ping).body, 'pongpong');
});

test('graceful shutdown cuts what is left after the grace period', async (t) => {
  const { backend, base } = await start(t);
  const slow = request(base, '/slow?ms=5000').then(() => assert.fail('should be cut'), (err) => err);
  await until(() => backend.stats().pendingTimers === 1, 'the slow request to start');
  const started = performance.now();
  assert.deepEqual(await backend.shutdown({ graceMs: 200, drainMs: 0 }), { forced: true });
  assert.ok(performance.now() - started < 200 + MARGIN_MS);
  assert.equal((await slow).code, 'ECONNRESET');
  assert.deepEqual(backend.stats(), { ...backend.stats(), inFlight: 0, openConnections: 0, pendingTimers: 0 });
});

test('graceful shutdown drains first: new requests are still served, with a failing health check', async (t) => {
  const { backend, base } = await start(t);
  const started = performance.now();
  const stopped = backend.shutdown({ graceMs: 1000, drainMs: 400 });
  // A load balancer that has not yet seen the failing check still gets answers.
  const fast = await request(base, '/fast');
  assert.equal(fast.status, 200);
  assert.equal(fast.headers.connection, 'close');
  const health = await request(base, '/healthz');
  assert.equal(health.status, 503);
  assert.equal(health.body, 'shutting down');
  assert.deepEqual(await stopped, { forced: false });
  // Node's timer counts from the event loop's clock, read at the start of the turn, so it may fire a few ms
  // before 400 ms have passed on performance.now(); closing at once (no drain) would take ~0 ms.
  const closedAfterMs = performance.now() - started;
  assert.ok(closedAfterMs >= 400 - TIMER_EARLY_MS, `closed ${closedAfterMs.toFixed(1)} ms after the shutdown began, expected at least the 400 ms drain`);
  await assert.rejects(request(base, '/fast'), { code: 'ECONNREFUSED' });
});
