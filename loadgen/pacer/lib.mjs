// Testable parts of the pacer: an open-model client that starts RATE
// requests per second for DURATION, plain or TLS, one connection per request
// or kept-alive ones, TLS sessions resumed or not, and counts what it did
// and what it cost (its own cgroup's CPU time). The lab's tls-cost scenario
// runs it: k6 never resumes a TLS session (one full handshake per new
// connection), so it cannot measure resumption.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

// Readers of one setting (also the vegeta wrapper's): a RangeError saying
// "NAME must be ... (got "x")" for a bad value.
export const bad = (name, what, raw) => new RangeError(`${name} must be ${what} (got ${JSON.stringify(String(raw))})`);
export const flag = (env, name, def) => {
  const raw = env[name] ?? '';
  if (raw === '') return def;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw bad(name, 'true or false', raw);
};
export const number = (env, name, def, min, max) => {
  const raw = String(env[name] ?? '').replace(/s$/, '');
  const n = raw === '' ? def : /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : NaN;
  if (n >= min && n <= max) return n;
  throw bad(name, `a number from ${min} to ${max}`, env[name]);
};

// The settings every open-model tool reads the same way: TARGET, LOAD_PATH,
// LOADGEN_SUMMARY_DIR (also the vegeta wrapper's).
export function requestSettings(env) {
  const target = env.TARGET || 'http://haproxy:8080';
  const m = /^(https?):\/\/([A-Za-z0-9._-]+):([0-9]{1,5})\/?$/.exec(target);
  if (!m) throw bad('TARGET', 'an http(s)://host:port URL', target);
  const loadPath = env.LOAD_PATH || '/fast';
  if (!/^\/[\x21-\x7e]*$/.test(loadPath)) throw bad('LOAD_PATH', 'a path starting with /', loadPath);
  const summaryDir = env.LOADGEN_SUMMARY_DIR || '';
  if (summaryDir.startsWith('/') || /(^|\/)\.\.(\/|$)/.test(summaryDir)) throw bad('LOADGEN_SUMMARY_DIR', 'a relative folder without ..', summaryDir);
  return { scheme: m[1], tls: m[1] === 'https', host: m[2], port: Number(m[3]), path: loadPath, target, summaryDir };
}

// Settings from the environment (empty = the default); a RangeError saying
// "NAME must be ... (got "x")" for a bad one.
export function loadConfig(env = process.env) {
  const { tls, host, port, path: loadPath, target, summaryDir } = requestSettings(env);
  const replicas = number(env, 'PACER_REPLICAS', 1, 1, 10000);
  return {
    tls, host, port, path: loadPath, target,
    rate: number(env, 'RATE', 200, 0.1, 1e6) / replicas,
    duration: number(env, 'DURATION', 10, 0.1, 86400),
    keepalive: flag(env, 'KEEPALIVE', false),
    connections: number(env, 'CONNECTIONS', 10, 1, 100000),
    resume: flag(env, 'TLS_RESUME', true),
    ca: env.TLS_CA || '/certs/ca.crt',
    timeout: number(env, 'TIMEOUT', 10, 0.1, 3600),
    maxInflight: number(env, 'MAX_INFLIGHT', 1000, 1, 1e6),
    replicas,
    index: env.PACER_INDEX ? number(env, 'PACER_INDEX', 1, 1, replicas) : 1,
    testid: env.TESTID || 'adhoc',
    summaryDir,
    resultsRoot: env.RESULTS_ROOT || '/results',
  };
}

// The agent: kept-alive connections (at most CONNECTIONS) or a new one per
// request. It caches no TLS session: the pacer holds the one it offers
// (tlsSessions), so it knows which handshakes had one to offer.
export function makeAgent(cfg, ca) {
  const common = { keepAlive: cfg.keepalive, maxSockets: cfg.keepalive ? cfg.connections : Infinity };
  if (!cfg.tls) return new http.Agent(common);
  return new https.Agent({
    ...common,
    maxCachedSessions: 0,
    ca: ca ?? undefined,
    rejectUnauthorized: ca !== null,
    minVersion: 'TLSv1.2',
  });
}

// The TLS session every new connection offers when RESUME is on: the latest
// one the server sent, dropped when a connection closes on an error (as
// Node's own agent cache does). Off: none is ever offered.
export function tlsSessions(resume) {
  const state = { session: null, waiting: [] };
  // A kept-alive socket serves many requests: watched once, not per request.
  const watched = new WeakSet();
  return {
    offer: () => (resume ? state.session : null),
    // watch SOCK → true when SOCK is a new connection (its first request).
    watch(sock) {
      if (watched.has(sock)) return false;
      watched.add(sock);
      if (resume) {
        sock.on('session', (session) => {
          state.session = session;
          for (const wake of state.waiting.splice(0)) wake();
        });
        sock.once('close', (hadError) => { if (hadError) state.session = null; });
      }
      return true;
    },
    held: () => state.session !== null,
    // arrival MS → resolves once a session is held, or after MS.
    arrival(ms) {
      if (state.session !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        state.waiting.push(() => { clearTimeout(timer); resolve(); });
      });
    },
  };
}

// Nearest-rank percentile of sorted VALUES.
export const percentile = (values, p) => (values.length ? values[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)] : null);

// This container's CPU time so far, from its own cgroup (v1 cpuacct.usage,
// v2 cpu.stat usage_usec), else this process's (process.cpuUsage).
export function ownCpu(root = '/sys/fs/cgroup') {
  const read = (f) => { try { return fs.readFileSync(path.join(root, f), 'utf8'); } catch { return null; } };
  const v1 = read('cpuacct/cpuacct.usage') ?? read('cpu,cpuacct/cpuacct.usage');
  if (v1 !== null && /^\d+/.test(v1)) return { ns: Number(v1.trim()), source: 'cgroup v1 cpuacct.usage' };
  const v2 = /^usage_usec (\d+)/m.exec(read('cpu.stat') ?? '');
  if (v2) return { ns: Number(v2[1]) * 1000, source: 'cgroup v2 cpu.stat' };
  const u = process.cpuUsage();
  return { ns: (u.user + u.system) * 1000, source: 'process' };
}

// superviseChild CHILD [EVENT]: a load tool's process watched to its end
// (EVENT: 'exit', or 'close' to have its output read too). SIGTERM or
// SIGINT to this wrapper is passed on as SIGINT, the tool's own stop; a
// second one ends the wrapper (130). → {exit: Promise of {code, signal} or
// {error}, interrupted(): whether a signal came}.
export function superviseChild(child, event = 'exit') {
  let interrupted = false;
  for (const sig of ['SIGTERM', 'SIGINT']) {
    process.on(sig, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      child.kill('SIGINT');
    });
  }
  const exit = new Promise((resolve) => {
    child.on('error', (error) => resolve({ error }));
    child.on(event, (code, signal) => resolve({ code, signal }));
  });
  return { exit, interrupted: () => interrupted };
}

// One request; resolves with {ok, ms, error} and, over TLS, {connected,
// offered, reused, protocol, keyType}: connected when it opened the connection
// (its first request; a kept-alive one's later requests did no handshake),
// offered when that connection offered a TLS session, the key type of the
// certificate a full handshake was shown (a resumed one is shown none).
function request(cfg, agent, sessions) {
  const t0 = performance.now();
  const lib = cfg.tls ? https : http;
  const session = cfg.tls ? sessions.offer() : null;
  let newConnection = false;
  return new Promise((resolve) => {
    const req = lib.get({ host: cfg.host, port: cfg.port, path: cfg.path, agent, servername: cfg.tls ? cfg.host : undefined,
      session: session ?? undefined, timeout: cfg.timeout * 1000 }, (res) => {
      const sock = res.socket;
      const tls = cfg.tls ? { connected: newConnection, offered: newConnection && session !== null, reused: sock.isSessionReused(), protocol: sock.getProtocol(), keyType: keyTypeOf(sock) } : {};
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode < 500, ms: performance.now() - t0, error: res.statusCode >= 500 ? `http_${res.statusCode}` : null, ...tls }));
      res.on('error', (err) => resolve({ ok: false, ms: performance.now() - t0, error: err.code ?? 'error' }));
    });
    if (cfg.tls) req.on('socket', (sock) => { newConnection = sessions.watch(sock); });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })));
    req.on('error', (err) => resolve({ ok: false, ms: performance.now() - t0, error: err.code ?? 'error' }));
  });
}

// Before the clock starts, one request that brings back a TLS session, so
// every paced connection has one to offer: without it, the connections
// started before the first session arrived do full handshakes (at 200/s a
// first handshake of 500 ms on a busy machine made 100 of them, 8% of a
// 6 s step). HAProxy counts this request and its full handshake; the
// summary reports it apart ("primer").
async function prime(cfg, agent, sessions) {
  const r = await request(cfg, agent, sessions);
  // TLS 1.3 sends its ticket after the handshake: it may come after the answer.
  if (r.ok) await sessions.arrival(cfg.timeout * 1000);
  return { ok: r.ok, ms: r.ms, error: r.error, session: sessions.held(), key_type: r.keyType ?? null };
}

// The server certificate's key type: "rsa 2048", "ec prime256v1".
function keyTypeOf(sock) {
  const c = sock.getPeerX509Certificate?.();
  if (!c) return null;
  const k = c.publicKey;
  return `${k.asymmetricKeyType} ${k.asymmetricKeyDetails?.modulusLength ?? k.asymmetricKeyDetails?.namedCurve ?? ''}`.trim();
}

const tally = (obj, key) => { if (key !== null && key !== undefined) obj[key] = (obj[key] ?? 0) + 1; };

// runPacer CFG: this replica's share of the load, paced from its start
// (request k at k ÷ rate seconds); resolves with its summary.
export async function runPacer(cfg, { signal, ca = null, log = console.log } = {}) {
  const agent = makeAgent(cfg, ca);
  const sessions = tlsSessions(cfg.tls && cfg.resume);
  const primer = cfg.tls && cfg.resume ? await prime(cfg, agent, sessions) : null;
  if (primer) log(`pacer ${cfg.index}/${cfg.replicas}: primed a TLS session before the clock (one request, ${primer.session ? 'session held' : `no session: ${primer.error ?? 'none sent'}`})`);
  const planned = Math.floor(cfg.duration * cfg.rate);
  const run = { started: 0, inflight: 0, ok: 0, failed: 0, dropped: 0, errors: {}, ms: [], full: 0, resumed: 0, fullOffered: 0, protocols: {}, keyTypes: {} };
  const cpuStart = ownCpu();
  const t0 = performance.now();
  const startedAt = Date.now();
  let lastLog = 0;
  const pending = new Set();
  await new Promise((resolve) => {
    const tick = () => {
      const elapsed = (performance.now() - t0) / 1000;
      const due = Math.min(planned, Math.floor(elapsed * cfg.rate) + 1);
      while (run.started < due && !signal?.aborted) {
        run.started += 1;
        if (run.inflight >= cfg.maxInflight) { run.dropped += 1; continue; }
        run.inflight += 1;
        const p = request(cfg, agent, sessions).then((r) => record(run, r));
        pending.add(p);
        p.finally(() => pending.delete(p));
      }
      if (elapsed - lastLog >= 5) { lastLog = elapsed; log(`pacer ${cfg.index}/${cfg.replicas}: ${run.started} started, ${run.ok} ok, ${run.failed} failed, t=${Math.floor(elapsed)}s`); }
      if (run.started >= planned || signal?.aborted) { clearInterval(timer); resolve(); }
    };
    const timer = setInterval(tick, 2);
    tick();
  });
  await Promise.all(pending);
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  const cpuEnd = ownCpu();
  return summaryOf(cfg, run, { planned, seconds, startedAt, primer, cpu: { ns: cpuEnd.ns - cpuStart.ns, source: cpuEnd.source }, interrupted: !!signal?.aborted });
}

function record(run, r) {
  run.inflight -= 1;
  if (r.ok) run.ok += 1; else { run.failed += 1; tally(run.errors, r.error); }
  run.ms.push(r.ms);
  // Handshakes: one per connection, counted on its first request.
  if (r.protocol && r.connected) {
    if (r.reused) run.resumed += 1; else run.full += 1;
    if (r.offered && !r.reused) run.fullOffered += 1;
    tally(run.protocols, r.protocol);
    tally(run.keyTypes, r.keyType);
  }
}

function summaryOf(cfg, run, { planned, seconds, startedAt, primer, cpu, interrupted }) {
  const ms = run.ms.sort((a, b) => a - b);
  return {
    tool: 'pacer', version: 1, node: process.versions.node, openssl: process.versions.openssl,
    testid: cfg.testid, index: cfg.index, replicas: cfg.replicas, target: cfg.target, path: cfg.path,
    rate: cfg.rate, duration: cfg.duration, keepalive: cfg.keepalive, resume: cfg.resume,
    started_at_ms: startedAt, seconds, planned, started: run.started, dropped: run.dropped,
    requests: run.ok + run.failed, ok: run.ok, failed: run.failed, errors: run.errors, interrupted,
    latency_ms: { p50: percentile(ms, 50), p95: percentile(ms, 95), p99: percentile(ms, 99),
      mean: ms.length ? ms.reduce((t, v) => t + v, 0) / ms.length : null },
    // The handshakes of the connections the paced requests opened (one per
    // connection, so kept alive fewer than requests): full or resumed;
    // full_offered: full although a session was offered (the server refused
    // it); key_types: the certificates full handshakes were shown. The
    // primer's connection (its request, its key type) is reported apart:
    // kept alive, paced requests may reuse it with no handshake of their own.
    tls: cfg.tls ? { full: run.full, resumed: run.resumed, full_offered: run.fullOffered, primer, protocols: run.protocols, key_types: run.keyTypes } : null,
    cpu,
  };
}

// Writes RESULTS_ROOT/LOADGEN_SUMMARY_DIR/pacer-<index>.json, as the holder does.
export { writeSummary } from '../holder/lib.mjs';
