// Backend of the HAProxy capacity lab: /fast, /slow, /ping (the contract of the
// "2 million connections" article), /healthz and /metrics. Only node: built-ins,
// so the container runs it straight from the mounted folder with no install step.
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { randomInt } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';

// setTimeout and socket timeouts turn anything above 2^31-1 ms into 1 ms.
export const MAX_TIMER_MS = 2 ** 31 - 1;
// Upper bound of the /ping "times" header.
export const MAX_TIMES = 1000;
// Largest request body (POST /ping's JSON is a few bytes; the tests send
// 1 MiB): a client sending more gets 413 and its connection closed, instead
// of a replica draining an endless body.
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export const DEFAULTS = Object.freeze({
  port: 8080,
  host: '0.0.0.0',
  slowMs: 3000,
  serverTimeoutMs: 0, // 0 = no socket inactivity timeout (120000 = Node's old default)
  requestTimeoutMs: 0, // 0 = off, else Node >= 18 cuts /ping requests after 300 s
  headersTimeoutMs: 60000,
  keepAliveTimeoutMs: 65000, // longer than HAProxy's "timeout http-keep-alive"
  maxSleepMs: 3600000,
  shutdownGraceMs: 10000,
  // On SIGTERM, keep serving (health check failing, Connection: close) this
  // long before closing the listener: longer than HAProxy needs to mark the
  // server DOWN (check inter 1 s x fall 2), so it stops sending new requests
  // while the replica still answers them.
  shutdownDrainMs: 3000,
  replica: undefined, // undefined = os.hostname()
});

// Environment variable -> option name and largest accepted value.
export const ENV_VARS = Object.freeze([
  ['PORT', 'port', 65535],
  ['SLOW_MS', 'slowMs', MAX_TIMER_MS],
  ['SERVER_TIMEOUT_MS', 'serverTimeoutMs', MAX_TIMER_MS],
  ['REQUEST_TIMEOUT_MS', 'requestTimeoutMs', MAX_TIMER_MS],
  ['HEADERS_TIMEOUT_MS', 'headersTimeoutMs', MAX_TIMER_MS],
  ['KEEPALIVE_TIMEOUT_MS', 'keepAliveTimeoutMs', MAX_TIMER_MS],
  ['MAX_SLEEP_MS', 'maxSleepMs', MAX_TIMER_MS],
  ['SHUTDOWN_GRACE_MS', 'shutdownGraceMs', MAX_TIMER_MS],
  ['SHUTDOWN_DRAIN_MS', 'shutdownDrainMs', MAX_TIMER_MS],
]);

// Strict: digits only, so "-5", "1.5", "1e3", " 7" and "" are all rejected
// instead of being half-parsed the way parseInt() would.
export function parseNonNegativeInt(name, value, max = Number.MAX_SAFE_INTEGER) {
  const n = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`${name} must be a non-negative integer (got ${JSON.stringify(String(value))})`);
  }
  if (n > max) {
    throw new RangeError(`${name} must be a non-negative integer <= ${max} (got ${JSON.stringify(String(value))})`);
  }
  return n;
}

// The replica name goes into a response header, where control or non-ASCII
// characters would make every response throw.
export function checkReplica(replica) {
  if (typeof replica !== 'string' || replica === '' || /[^\x20-\x7e]/.test(replica)) {
    throw new RangeError(`REPLICA must be printable ASCII (got ${JSON.stringify(String(replica))})`);
  }
  return replica;
}

// Options for createBackend() from environment variables; unset or empty means
// the default. Throws a RangeError whose message names the variable.
export function loadConfig(env = process.env) {
  const config = { ...DEFAULTS };
  for (const [name, key, max] of ENV_VARS) {
    if (env[name] !== undefined && env[name] !== '') config[key] = parseNonNegativeInt(name, env[name], max);
  }
  config.host = env.HOST || DEFAULTS.host;
  config.replica = checkReplica(env.REPLICA || os.hostname());
  return config;
}

// An integer request parameter (header or query), or a one-line 400 message.
// A client's value as an error shows it: quoted, cut at 100 characters.
const shown = (raw) => JSON.stringify(raw.length > 100 ? `${raw.slice(0, 100)}...` : raw);

function intParam(kind, name, raw, max, unit) {
  if (raw === undefined) return { value: 0 };
  try {
    return { value: parseNonNegativeInt(name, raw, max) };
  } catch {
    return { error: `bad "${name}" ${kind} ${shown(raw)}: want ${unit} between 0 and ${max}` };
  }
}

const MS = 'an integer number of milliseconds';

// Prometheus label values: escape backslash, double quote and newline.
const labelValue = (v) => String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

// The options over DEFAULTS, held to the same bounds as the environment variables.
function backendConfig(options) {
  const cfg = { ...DEFAULTS, ...options };
  cfg.replica = checkReplica(cfg.replica ?? os.hostname());
  for (const [name, key, max] of ENV_VARS) parseNonNegativeInt(name, String(cfg[key]), max);
  // Node refuses headersTimeout > requestTimeout when the latter is on.
  if (cfg.requestTimeoutMs > 0) cfg.headersTimeoutMs = Math.min(cfg.headersTimeoutMs, cfg.requestTimeoutMs);
  return cfg;
}

function createHttpServer(cfg) {
  const server = http.createServer({
    requestTimeout: cfg.requestTimeoutMs,
    headersTimeout: cfg.headersTimeoutMs,
    keepAliveTimeout: cfg.keepAliveTimeoutMs,
  });
  // Socket inactivity timeout: with no 'timeout' listener Node destroys the socket.
  server.timeout = cfg.serverTimeoutMs;
  return server;
}

// The listener: every connection counted, its first request read here
// (firstRequest). The HTTP server listens on nothing of its own.
function createFront(state) {
  return net.createServer((socket) => {
    state.openConnections++;
    state.connectionsTotal++;
    state.sockets.add(socket);
    socket.once('close', () => {
      state.openConnections--;
      state.sockets.delete(socket);
      state.onSocketClose();
    });
    socket.on('error', () => {});
    socket.setNoDelay(true);
    socket.once('data', (chunk) => firstRequest(state, socket, chunk));
  });
}

function responseHeaders(state, extra = {}) {
  const h = { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'X-Replica': state.cfg.replica, ...extra };
  // While draining, make clients (HAProxy) open new connections elsewhere.
  if (state.shuttingDown) h.Connection = 'close';
  return h;
}

function send(state, res, status, body, extra = {}) {
  if (res.destroyed || res.headersSent) return; // client gone, or already answering
  res.writeHead(status, responseHeaders(state, { ...extra, 'Content-Length': Buffer.byteLength(body) }));
  res.end(body);
}

// One pending timer per response at a time, cleared if the client goes away,
// so nothing is written after close and nothing keeps running for nobody.
function timerFor(pendingTimers, res) {
  let timer;
  res.once('close', () => {
    clearTimeout(timer);
    pendingTimers.delete(timer);
  });
  return (ms, fn) => {
    timer = setTimeout(() => {
      pendingTimers.delete(timer);
      if (!res.destroyed) fn();
    }, ms);
    pendingTimers.add(timer);
  };
}

// ?until=T answers at T (ms since the epoch; at once if T has passed), however
// long the request took to arrive: the connection holder's planned ends stay
// its own when a connection waited in HAProxy's accept queue (?ms= would start
// its wait only when the request arrived).
function slowWait(cfg, query) {
  if (query.has('until')) {
    const now = Date.now(), raw = query.get('until');
    const until = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : NaN;
    if (!(until <= now + cfg.maxSleepMs)) {
      return { error: `bad "until" query parameter ${shown(raw)}: want a time in ms since the epoch, at most ${cfg.maxSleepMs} ms from now` };
    }
    return { value: Math.max(0, until - now) };
  }
  return query.has('ms') ? intParam('query parameter', 'ms', query.get('ms'), cfg.maxSleepMs, MS) : { value: cfg.slowMs };
}

const SLOW_BODY = "I'm slooooow";

// ?early=1 sends the status line and headers at once and the body when the
// wait is over: a client then knows its request got through HAProxy to a
// backend (the connection holder paces its ramp on that), long before the end.
function slow(state, req, res, query) {
  const ms = slowWait(state.cfg, query);
  if (ms.error) return send(state, res, 400, `${ms.error}\n`);
  const early = query.get('early');
  if (early !== null && early !== '1') return send(state, res, 400, `bad "early" query parameter ${shown(early)}: want 1 (headers at once)\n`);
  if (early === '1') {
    res.writeHead(200, responseHeaders(state, { 'Content-Length': Buffer.byteLength(SLOW_BODY) }));
    res.flushHeaders();
  }
  timerFor(state.pendingTimers, res)(ms.value, () => (early === '1' ? res.end(SLOW_BODY) : send(state, res, 200, SLOW_BODY)));
}

// The held request's path without Node's HTTP machinery. A connection's
// request that is GET /slow?early=1 (until= or ms=, no body, keep-alive) gets
// the same answer as slow() gives it (its headers at once, the body at the
// time asked), from the head read here; everything else goes, unread, to the
// HTTP server. Its per-request objects and bookkeeping cost the backends
// more CPU per held connection than HAProxy spends, and 9 times a bare Node
// server's (the connections scenario's breakdown, at 40,000).
const FAST_HEAD = /^GET (\/slow\?[\x21-\x7e]*) HTTP\/1\.1\r\n/;
const SLOW_LENGTH = Buffer.byteLength(SLOW_BODY);

// fastSlow STATE SOCKET CHUNK → true when it answers CHUNK's request itself.
function fastSlow(state, socket, chunk) {
  if (state.shuttingDown) return false;
  const head = chunk.latin1Slice(0, chunk.length);
  const end = head.indexOf('\r\n\r\n');
  const m = FAST_HEAD.exec(head);
  // One whole head, nothing after it; no body, no close, no upgrade.
  if (!m || end !== head.length - 4 || /\r\n(content-length|transfer-encoding|connection|upgrade|expect):/i.test(head)) return false;
  const query = new URLSearchParams(m[1].slice(6));
  if (query.get('early') !== '1') return false;
  const ms = slowWait(state.cfg, query);
  if (ms.error) return false;
  state.inFlight++;
  let timer, done = false;
  const finish = (completed) => {
    if (done) return;
    done = true;
    state.inFlight--;
    clearTimeout(timer);
    state.pendingTimers.delete(timer);
    if (completed) {
      const key = 'route="slow",code="200"';
      state.requestCounts.set(key, (state.requestCounts.get(key) ?? 0) + 1);
    } else state.abortedCounts.set('slow', (state.abortedCounts.get('slow') ?? 0) + 1);
  };
  const gone = () => finish(false);
  socket.once('close', gone);
  // The lab's headers (responseHeaders), then what Node's HTTP server adds to a kept-alive answer.
  const fields = Object.entries(responseHeaders(state, { 'Content-Length': SLOW_LENGTH })).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.write(`HTTP/1.1 200 OK\r\n${fields}Date: ${new Date().toUTCString()}\r\nConnection: keep-alive\r\n` +
    `Keep-Alive: timeout=${Math.floor(state.cfg.keepAliveTimeoutMs / 1000)}\r\n\r\n`);
  timer = setTimeout(() => {
    if (socket.destroyed) return;
    socket.write(SLOW_BODY);
    socket.off('close', gone);
    finish(true);
    // Kept alive: the next request on it is read as the first one was.
    state.idleFast.add(socket);
    socket.once('close', () => state.idleFast.delete(socket));
    socket.once('data', (next) => {
      state.idleFast.delete(socket);
      firstRequest(state, socket, next);
    });
  }, ms.value);
  state.pendingTimers.add(timer);
  return true;
}

// firstRequest STATE SOCKET CHUNK: CHUNK's request answered by fastSlow, or
// CHUNK put back and the socket given to the HTTP server.
function firstRequest(state, socket, chunk) {
  if (fastSlow(state, socket, chunk)) return;
  socket.pause();
  socket.unshift(chunk);
  state.server.emit('connection', socket);
  socket.resume();
}

// The article's contract: headers at once, then "pong" after a random
// 0..sleep ms, and "times" more pongs, each after another random wait.
function ping(state, req, res) {
  const sleep = intParam('header', 'sleep', req.headers.sleep, state.cfg.maxSleepMs, MS);
  const times = intParam('header', 'times', req.headers.times, MAX_TIMES, 'an integer');
  const bad = sleep.error ?? times.error;
  if (bad) return send(state, res, 400, `${bad}\n`);
  // Each pong waits up to "sleep": the whole answer is bounded as one sleep is.
  const longest = sleep.value * (times.value + 1);
  if (longest > state.cfg.maxSleepMs) {
    return send(state, res, 400, `"sleep" x ("times" + 1) is ${longest} ms: want at most ${state.cfg.maxSleepMs} (MAX_SLEEP_MS)\n`);
  }
  res.writeHead(200, responseHeaders(state));
  res.flushHeaders();
  const later = timerFor(state.pendingTimers, res);
  let left = times.value + 1;
  const pong = () => {
    res.write('pong');
    if (--left > 0) later(randomInt(sleep.value + 1), pong);
    else res.end();
  };
  later(randomInt(sleep.value + 1), pong);
}

function renderMetrics(state, { excludeScrapes = 0 } = {}) {
  const out = [];
  const metric = (name, type, help, samples) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) out.push(`${name}${labels ? `{${labels}}` : ''} ${value}`);
  };
  metric('backend_requests_total', 'counter', 'HTTP responses completed, by route and status code.', state.requestCounts);
  metric('backend_requests_aborted_total', 'counter', 'Responses cut short by a client disconnect or a timeout, by route.',
    [...state.abortedCounts].map(([route, n]) => [`route="${route}"`, n]));
  metric('backend_requests_in_flight', 'gauge', 'Requests whose response has not finished (not counting this scrape).',
    [['', state.inFlight - excludeScrapes]]);
  metric('backend_open_connections', 'gauge', 'Open TCP connections to this server.', [['', state.openConnections]]);
  metric('backend_connections_total', 'counter', 'TCP connections accepted.', [['', state.connectionsTotal]]);
  metric('backend_info', 'gauge', 'Constant 1, labelled with the replica name.', [[`replica="${labelValue(state.cfg.replica)}"`, 1]]);
  metric('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', [['', process.memoryUsage.rss()]]);
  metric('process_start_time_seconds', 'gauge', 'Start time of the backend since the Unix epoch in seconds.', [['', state.startedAt]]);
  return `${out.join('\n')}\n`;
}

// path -> [route label, allowed methods, handler(state, req, res, query)]
const ROUTES = {
  '/fast': ['fast', ['GET', 'HEAD'], (state, req, res) => send(state, res, 200, "I'm FAST!!!!")],
  '/slow': ['slow', ['GET', 'HEAD'], slow],
  '/ping': ['ping', ['GET', 'HEAD', 'POST'], ping],
  '/healthz': ['healthz', ['GET', 'HEAD'],
    (state, req, res) => (state.shuttingDown ? send(state, res, 503, 'shutting down') : send(state, res, 200, 'ok'))],
  '/metrics': ['metrics', ['GET', 'HEAD'], (state, req, res) => send(state, res, 200, renderMetrics(state, { excludeScrapes: 1 }),
    { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })],
};

// capBody REQ RES → true when the body is too large: 413 at once for a
// declared length, else (chunked) when the bytes pass the cap; either way the
// connection closes, as the rest of the body is not read.
function capBody(state, req, res) {
  const tooLarge = () => {
    if (!res.headersSent) send(state, res, 413, `request body over ${MAX_BODY_BYTES} bytes\n`, { Connection: 'close' });
    req.socket.destroySoon();
  };
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    tooLarge();
    return true;
  }
  let received = 0;
  req.on('data', (chunk) => {
    received += chunk.length;
    if (received > MAX_BODY_BYTES) {
      req.pause();
      tooLarge();
    }
  });
  return false;
}

function handleRequest(state, req, res) {
  req.on('error', () => {}); // a client resetting mid-body is not our error
  req.resume(); // drain any request body (POST /ping with JSON) without reading it
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  const [route, methods, handler] = ROUTES[path] ?? ['other'];

  state.inFlight++;
  res.once('close', () => {
    state.inFlight--;
    if (res.writableFinished) {
      const key = `route="${route}",code="${res.statusCode}"`;
      state.requestCounts.set(key, (state.requestCounts.get(key) ?? 0) + 1);
    } else {
      state.abortedCounts.set(route, (state.abortedCounts.get(route) ?? 0) + 1);
    }
  });

  if (capBody(state, req, res)) return;
  try {
    if (!handler) send(state, res, 404, `not found: ${path.slice(0, 100)}\n`);
    else if (!methods.includes(req.method)) {
      send(state, res, 405, `method ${req.method} not allowed on ${path} (use ${methods.join(', ')})\n`, { Allow: methods.join(', ') });
    } else handler(state, req, res, new URLSearchParams(q === -1 ? '' : req.url.slice(q + 1)));
  } catch (err) {
    // Never let one request take the process down.
    if (!res.headersSent) send(state, res, 500, `internal error: ${err.message}\n`);
    else res.destroy();
  }
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address());
    });
  });
}

// Graceful stop: fail health checks and answer with Connection: close at
// once, still accepting for drainMs (the load balancer takes the server out
// meanwhile); then refuse new connections, close idle keep-alive sockets,
// let in-flight responses finish, and after graceMs cut what is left.
// Resolves { forced } once every connection is gone.
function shutdown(state, { graceMs = state.cfg.shutdownGraceMs, drainMs = state.cfg.shutdownDrainMs } = {}) {
  state.shuttingDown = true;
  state.shutdownPromise ??= drainMs > 0 ? delay(drainMs).then(() => closeServer(state, graceMs)) : closeServer(state, graceMs);
  return state.shutdownPromise;
}

function closeServer(state, graceMs) {
  const { server, front } = state;
  // Idle: the HTTP server's between requests, and the held path's once answered.
  const closeIdle = () => {
    server.closeIdleConnections();
    for (const socket of state.idleFast) socket.destroy();
  };
  return new Promise((resolve) => {
    let forced = false;
    let listening = true;
    // Sockets whose response finishes (e.g. a /ping that had already sent
    // its keep-alive headers) become idle later: sweep them as they do.
    const sweep = setInterval(closeIdle, 100);
    const force = setTimeout(() => {
      forced = true;
      for (const socket of state.sockets) socket.destroy();
    }, graceMs);
    // Done when the server has closed and every socket has emitted 'close'
    // (the server's callback can come before the sockets' own events).
    state.onSocketClose = () => {
      if (listening || state.openConnections > 0) return;
      clearInterval(sweep);
      clearTimeout(force);
      // Its own timers stopped (it was never listening: the callback's error says so).
      server.close(() => {});
      resolve({ forced });
    };
    front.close(() => {
      listening = false;
      state.onSocketClose();
    });
    closeIdle();
  });
}

export function createBackend(options = {}) {
  const cfg = backendConfig(options);
  // What the request handlers, /metrics, stats() and shutdown() share.
  const state = {
    cfg,
    startedAt: Date.now() / 1000,
    requestCounts: new Map(), // 'route="x",code="200"' -> completed responses
    abortedCounts: new Map(), // route -> responses cut by a disconnect or timeout
    pendingTimers: new Set(), // lets tests prove that disconnects leak no timers
    inFlight: 0,
    openConnections: 0,
    connectionsTotal: 0,
    shuttingDown: false,
    shutdownPromise: undefined,
    server: createHttpServer(cfg),
    sockets: new Set(), // every open connection (the force at the end of a shutdown)
    idleFast: new Set(), // the held path's, answered, waiting for a next request
    onSocketClose: () => {}, // set by closeServer() to notice the last socket going
  };
  state.front = createFront(state);
  const { server } = state;
  server.on('request', (req, res) => handleRequest(state, req, res));
  // It listens on nothing: the front hands it its connections. "listening"
  // starts what it does for them (its header timeouts, the idle ones closed
  // at shutdown), which net's listen would have started.
  server.emit('listening');

  return {
    server,
    config: cfg,
    listen: (port = cfg.port, host = cfg.host) => listen(state.front, port, host),
    shutdown: (options = {}) => shutdown(state, options),
    renderMetrics: (options = {}) => renderMetrics(state, options),
    stats: () => ({
      inFlight: state.inFlight,
      openConnections: state.openConnections,
      connectionsTotal: state.connectionsTotal,
      pendingTimers: state.pendingTimers.size,
      shuttingDown: state.shuttingDown,
    }),
  };
}
