// Testable parts of the connection holder: env parsing, share and schedule
// math, a minimal HTTP/1.1 response parser, and runHolder(), which opens this
// replica's share of long-lived requests and returns the summary object.
import net from 'node:net';
import tls from 'node:tls';
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { promises as dnsPromises } from 'node:dns';
import { bad, duration } from '../lib/values.mjs';

const MAX_SECONDS = 86400;
export const MAX_CONNECTIONS = 10_000_000;
// Connect-time histogram: upper bounds in ms, non-cumulative counts. The
// same bounds count how late each answer came after its planned end
// (late_ms): a timeout is an answer later than GRACE, and these show whether
// the ones in time crept towards it.
export const LATENCY_BOUNDS = [...Array.from({ length: 17 }, (_, i) => 2 ** i), '+Inf'];
const bucketOf = (ms) => (ms <= 1 ? 0 : Math.min(LATENCY_BOUNDS.length - 1, Math.ceil(Math.log2(ms))));

// Strict: plain digits, so "1e3", "-1" and " 7" are rejected rather than
// half-parsed.
function int(env, name, def, min, max) {
  const raw = env[name] ?? '';
  if (raw === '' && def !== undefined) return def;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (n >= min && n <= max) return n;
  throw bad(name, `an integer from ${min} to ${max}`, raw);
}
// A duration (loadgen/lib/values.mjs: 30s, 1m30s, or bare seconds) up to
// MAX_SECONDS; POSITIVE: at least a millisecond.
const seconds = (env, name, def, positive = false) => duration(env, name, def, positive ? 0.001 : 0, MAX_SECONDS);

// Settings from the environment; empty means unset. Throws a RangeError whose
// message is "NAME must be ... (got "x")". index stays undefined when it has to
// come from DNS (several replicas, no HOLDER_INDEX).
export function loadConfig(env = process.env) {
  const rawTarget = env.TARGET || 'http://haproxy:8080';
  const m = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})\/?$/.exec(rawTarget);
  if (!m || +m[3] < 1 || +m[3] > 65535) throw bad('TARGET', 'an http://host:port or https://host:port URL', rawTarget);
  const holdPath = env.HOLD_PATH || '/slow';
  if (!/^\/[\x21-\x22\x24-\x7e]*$/.test(holdPath)) throw bad('HOLD_PATH', 'a path starting with / (printable ASCII, no spaces or #)', holdPath);
  const replicas = int(env, 'HOLDER_REPLICAS', 1, 1, 10000);
  const summaryDir = env.LOADGEN_SUMMARY_DIR || '';
  if (summaryDir && (!/^[\x21-\x7e]+$/.test(summaryDir) || summaryDir.startsWith('/') || /\\|(^|\/)\.\.(\/|$)/.test(summaryDir))) {
    throw bad('LOADGEN_SUMMARY_DIR', 'a relative folder under RESULTS_ROOT without ..', summaryDir);
  }
  const testid = env.TESTID || 'adhoc';
  if (!/^[\x20-\x7e]+$/.test(testid)) throw bad('TESTID', 'printable ASCII', testid);
  return {
    target: `${m[1]}://${m[2]}:${+m[3]}`, host: m[2].replace(/^\[|\]$/g, ''), port: +m[3], hostHeader: `${m[2]}:${+m[3]}`,
    // https: each connection a TLS one (a full handshake), its certificate
    // checked against TLS_CA (the lab's CA) when that file is there.
    tls: m[1] === 'https', ca: env.TLS_CA || '/certs/ca.crt',
    path: holdPath,
    connections: int(env, 'CONNECTIONS', 1000, 1, MAX_CONNECTIONS),
    replicas,
    index: env.HOLDER_INDEX ? int(env, 'HOLDER_INDEX', undefined, 1, replicas) : replicas === 1 ? 1 : undefined,
    rampUp: seconds(env, 'RAMP_UP', 10), hold: seconds(env, 'HOLD', 60), rampDown: seconds(env, 'RAMP_DOWN', 10),
    // Pacing on the path through HAProxy: connections opened whose response
    // headers have not come back yet are at most MAX_UNCONFIRMED, or as many
    // as came back in the last second when that is more (0: off, the
    // schedule alone). A connection the kernel completed may still wait in
    // HAProxy's accept queue; its headers (HOLD_PATH with early=1 sends them
    // at once) prove it went through. The window grows with the pace the
    // path keeps, so the ramp goes as fast as its slowest part, with about a
    // second's worth waiting; every planned end moves RAMP_SLACK seconds
    // later, so a ramp that took that much longer still has its hold.
    maxUnconfirmed: int(env, 'MAX_UNCONFIRMED', 0, 0, MAX_CONNECTIONS), rampSlack: seconds(env, 'RAMP_SLACK', 0),
    connectTimeout: seconds(env, 'CONNECT_TIMEOUT', 10, true), grace: seconds(env, 'GRACE', 15),
    // How often the schedule is read (scheduleTick).
    tickMs: int(env, 'TICK_MS', 100, 10, 1000),
    testid, summaryDir, resultsRoot: env.RESULTS_ROOT || '/results',
  };
}

// Names for an address: dns.reverse() can stop at /etc/hosts (Docker lists only
// the container id there), so also ask Docker's DNS server for the PTR record.
async function reverseNames(ip) {
  const arpa = `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  return [...await dnsPromises.reverse(ip).catch(() => []), ...await dnsPromises.resolvePtr(arpa).catch(() => [])];
}

// The replica number from the container's name (haproxy-lab-holder-3), which
// Docker's DNS gives back for the container's own address, as run.sh does.
// SERVICE: the compose service whose replica this is (vegeta's and h2load's too).
export async function resolveIndex({ reverse = reverseNames, interfaces = os.networkInterfaces(), service = 'holder' } = {}) {
  const ips = Object.values(interfaces).flat()
    .filter((a) => a && (a.family === 'IPv4' || a.family === 4) && !a.internal).map((a) => a.address);
  for (const ip of ips) {
    const names = await reverse(ip).catch(() => []);
    for (const name of names) {
      const found = new RegExp(`-${service}-([0-9]+)(?![0-9])`).exec(name);
      if (found && +found[1] > 0) return +found[1];
    }
  }
  throw new Error(`cannot work out this replica's number from DNS (reverse of ${ips.join(', ') || 'no IPv4 address'}); set ${service.toUpperCase()}_INDEX`);
}

// Replica `index` (1-based) takes connections index-1, index-1+replicas, ...
export const shareSize = (total, replicas, index) => Math.max(0, Math.ceil((total - index + 1) / replicas));
export const globalId = (k, replicas, index) => index - 1 + k * replicas;
// Connection k of n: when it opens and when its response should come, in ms after start.
export const openAtMs = (k, n, rampUp) => (rampUp * 1000 * k) / n;
export const endAtMs = (k, n, rampUp, hold, rampDown) => (rampUp + hold) * 1000 + (rampDown * 1000 * k) / n;
// How long each connection is held, from its open to its answer: the
// ramp-up, its slack and the hold. So the ramp-down closes at the pace the
// ramp-up opened (as fast as the path let them in), never faster than
// RAMP_DOWN spreads them (endAtMs), and every connection is held as long.
export const heldSeconds = (cfg) => cfg.rampUp + cfg.rampSlack + cfg.hold;
// The run's planned length: a ramp-up within RAMP_UP + RAMP_SLACK, the hold,
// and a ramp-down as long as the ramp-up or RAMP_DOWN, the longer.
export const plannedSeconds = (cfg) => heldSeconds(cfg) + Math.max(cfg.rampDown, cfg.rampUp + cfg.rampSlack);

// Parser states. Framing (status line, headers, chunk sizes, trailers) is read
// line by line; body bytes are only counted down, never kept.
const HEAD = 0, LENGTH = 1, SIZE = 2, DATA = 3, DATA_END = 4, TRAILER = 5, UNTIL_EOF = 6, DONE = 7;
const MAX_LINE = 16384;

// Minimal HTTP/1.1 response parser: feed() returns true once the response is
// complete, whatever the split; error becomes 'bad_response' on anything else.
export class ResponseParser {
  state = HEAD;
  line = ''; // the framing line read so far
  left = -1; // body or chunk bytes still to come (-1: no Content-Length seen)
  chunked = false;
  status = 0;
  error = null;

  get done() { return this.state === DONE; }

  // Called on EOF: a body without length or chunks ends with the connection.
  eof() {
    if (this.state === UNTIL_EOF) this.state = DONE;
    return this.state === DONE;
  }

  feed(buf, i = 0, end = buf.length) {
    while (i < end && this.state < DONE && !this.error) {
      if (this.state === LENGTH || this.state === DATA) {
        const n = Math.min(this.left, end - i);
        i += n;
        this.left -= n;
        if (this.left === 0) this.state = this.state === LENGTH ? DONE : DATA_END;
      } else if (this.state === UNTIL_EOF) {
        i = end;
      } else {
        const lf = buf.indexOf(10, i); // may land past `end` in a shared buffer
        const stop = lf < 0 || lf >= end ? end : lf + 1;
        this.line += buf.latin1Slice(i, stop);
        i = stop;
        if (this.line.length > MAX_LINE) this.error = 'bad_response';
        else if (stop === lf + 1) {
          const line = this.line.slice(0, this.line.endsWith('\r\n') ? -2 : -1);
          this.line = '';
          this.onLine(line);
        }
      }
    }
    return this.state === DONE;
  }

  onLine(line) {
    let m;
    if (this.state === HEAD && this.status === 0) {
      if ((m = /^HTTP\/1\.[01] ([0-9]{3})(?: |$)/.exec(line))) this.status = +m[1];
      else this.error = 'bad_response';
    } else if (this.state === HEAD && line !== '') {
      if ((m = /^content-length:[ \t]*(.*?)[ \t]*$/i.exec(line))) {
        if (/^[0-9]{1,15}$/.test(m[1])) this.left = +m[1];
        else this.error = 'bad_response';
      } else if (/^transfer-encoding:.*chunked[ \t]*$/i.test(line)) this.chunked = true;
    } else if (this.state === HEAD) { // end of the headers
      if (this.status < 200) this.status = 0; // 1xx: the real response follows
      else if (this.status === 204 || this.status === 304) this.state = DONE;
      else if (this.chunked) this.state = SIZE;
      else this.state = this.left < 0 ? UNTIL_EOF : this.left === 0 ? DONE : LENGTH;
    } else if (this.state === SIZE) {
      if ((m = /^([0-9A-Fa-f]{1,12})(?:[ \t;].*)?$/.exec(line))) {
        this.left = parseInt(m[1], 16);
        this.state = this.left === 0 ? TRAILER : DATA;
      } else this.error = 'bad_response';
    } else if (this.state === DATA_END) {
      if (line === '') this.state = SIZE;
      else this.error = 'bad_response';
    } else if (line === '') this.state = DONE; // TRAILER: ends at an empty line
  }
}

// One connection: the parser's fields plus its number, open time and socket.
class Conn extends ResponseParser {
  socket = null;
  connected = false;
  confirmed = false; // its response headers came back
  finished = false;
  constructor(k, openedAt) {
    super();
    this.k = k;
    this.openedAt = openedAt;
  }
}

const readProc = (file, re) => {
  try { return re.exec(fs.readFileSync(file, 'utf8')); } catch { return null; }
};
// Soft open-file limit of this process (a number, 'unlimited' or null).
export function readNofile() {
  const m = readProc('/proc/self/limits', /^Max open files\s+(\S+)/m);
  return m ? (m[1] === 'unlimited' ? m[1] : +m[1]) : null;
}

// Where a holder's hold starts (s after its start): past its ramp-up, and
// when paced (RAMP_DONE_MS: all confirmed, null if never) past the ramp it
// really took, at the latest once its slack is used up.
export function holdFrom({ rampUp, rampSlack = 0, maxUnconfirmed = 0 }, rampDoneMs) {
  const done = maxUnconfirmed > 0 ? (rampDoneMs === null ? rampUp + rampSlack : Math.max(rampUp, rampDoneMs / 1000)) : rampUp;
  return done + 1;
}

// Min and max of `open` over the whole seconds in [from, to].
export function holdWindow(samples, from, to) {
  const w = { from_t: Math.ceil(from), to_t: Math.floor(to), min_open: null, max_open: null };
  for (const { t, open } of samples.filter((x) => x.t >= w.from_t && x.t <= w.to_t)) {
    w.min_open = Math.min(w.min_open ?? open, open);
    w.max_open = Math.max(w.max_open ?? open, open);
  }
  return w;
}

const CONN = Symbol('conn');
// How often the schedule is read (TICK_MS): connections due open together, so
// their connects and answers come back together too. Every replica ticks on
// the same boundaries of the clock (each TICK_MS of Date.now()), so all their
// connections of a tick reach HAProxy and the backends at once: dozens of
// replicas at a few dozen connections a second each, ticking apart, woke
// every process in the path once or twice per connection, and a Node
// process's wake-up costs more than the connection's own work.

// The next tick at the next boundary, until stop() clears run.timer.
function scheduleTick(run) {
  const { tickMs } = run.cfg;
  run.timer = setTimeout(() => {
    tick(run);
    if (run.timer) scheduleTick(run);
  }, tickMs - (Date.now() % tickMs));
}
const READ_BUFFER = Buffer.alloc(65536); // every socket reads into this one buffer

// Everything one run shares: settings, connections, counters and samples.
function runState(cfg, address, { signal, log, warn }) {
  const n = shareSize(cfg.connections, cfg.replicas, cfg.index);
  // Read now: once out of file descriptors, /proc cannot be opened any more.
  const nofile = readNofile();
  const ports = readProc('/proc/sys/net/ipv4/ip_local_port_range', /^(\d+)\s+(\d+)/);
  const portRange = ports ? `${ports[1]}-${ports[2]}` : 'unknown';
  // Linux gives connect() the even ports of the range first; past those, each
  // connect() scans the port table and blocks the event loop for seconds.
  if (ports && n > (ports[2] - ports[1] + 1) / 2) {
    warn(`holder: ${n} connections to ${cfg.target} from one IP is over half of ip_local_port_range ${portRange}: ` +
      'connect() gets slow; widen the range (sysctls) or add holder replicas');
  }
  const mem0 = process.memoryUsage();
  return {
    cfg, address, signal, log, warn, n, nofile, portRange,
    // The last connection opens before its RAMP_DOWN schedule's end at the
    // latest (ramp_behind), and is held heldSeconds from there.
    hardDeadline: (cfg.rampUp + cfg.rampSlack + cfg.hold + cfg.rampDown + heldSeconds(cfg) + cfg.grace) * 1000,
    conns: [], // conns[k] until connection k finishes
    failures: {},
    latency: LATENCY_BOUNDS.map(() => 0),
    late: LATENCY_BOUNDS.map(() => 0),
    samples: [],
    memory: { rss_start: mem0.rss, rss_peak: mem0.rss, rss_at_peak_open: mem0.rss, heap_used_at_peak_open: mem0.heapUsed },
    t0: performance.now(), startedAt: Date.now(),
    // next: the next k to open; both timeout scans move forward, as deadlines grow with k.
    next: 0, connectScan: 0, endScan: 0, opened: 0, connected: 0, open: 0, ok: 0, failed: 0, finished: 0,
    // unconfirmed: opened, neither confirmed nor finished; rampDone: when all
    // were opened and none was unconfirmed any more (ms; pacing only).
    unconfirmed: 0, confirmed: 0, rampDone: null,
    // window: the unconfirmed connections allowed now; windowPeak: its largest.
    window: cfg.maxUnconfirmed, windowPeak: cfg.maxUnconfirmed,
    peakOpen: 0, bytes: 0, interrupted: false, lastLog: 0, timer: undefined, resolveRun: undefined,
    listeners: undefined, // socketListeners(run)
    onAbort: undefined, // the signal's 'abort' listener, removed by stop()
  };
}

// The earliest connection k's response may come (RAMP_DOWN's schedule), in
// ms after start.
const scheduledEnd = (run, k) => endAtMs(k, run.n, run.cfg.rampUp, run.cfg.hold, run.cfg.rampDown) + run.cfg.rampSlack * 1000;
// When connection c's response should come, in ms after start: held
// heldSeconds from its open, or later by the schedule. Connections open in
// order, so their ends come in order too.
const plannedEnd = (run, c) => Math.max(c.openedAt + heldSeconds(run.cfg) * 1000, scheduledEnd(run, c.k));
// When connection c's answer is asked for (?until=, ms since the epoch): its
// planned end on the next tick boundary of the clock, so the answers of a
// ramp-down, as the connects of a ramp-up (a tick's connections open
// together, and so end together), reach every process in the path in
// batches, from every replica at once.
const answerAt = (run, c) => Math.ceil((run.startedAt + plannedEnd(run, c)) / run.cfg.tickMs) * run.cfg.tickMs;

function fail(run, reason, count = 1) {
  const { cfg, failures, warn } = run;
  failures[reason] = (failures[reason] ?? 0) + count;
  run.failed += count;
  if (failures[reason] !== count) return; // explain only the first time
  if (reason === 'ramp_behind') {
    warn(`holder: connections not opened: their planned ends came before the ramp waiting for ${cfg.target} reached them ` +
      '(HAProxy took connections slower than RAMP_UP + RAMP_SLACK allow; raise RAMP_SLACK or hold fewer)');
  }
  if (reason === 'EMFILE') warn(`holder: out of file descriptors (nofile ${run.nofile}): raise the container's ulimits nofile (NOFILE in .env)`);
  if (reason === 'EADDRNOTAVAIL') {
    warn(`holder: out of local ports for ${cfg.target} from this IP (ip_local_port_range ${run.portRange}): add holder replicas or widen the range`);
  }
}

function finish(run, c, reason) { // reason null = ok
  if (c.finished) return;
  c.finished = true;
  if (!c.confirmed) run.unconfirmed--;
  run.conns[c.k] = undefined;
  run.finished++;
  if (c.connected) run.open--;
  if (reason === null) {
    run.ok++;
    run.late[bucketOf(performance.now() - run.t0 - (answerAt(run, c) - run.startedAt))]++;
  } else fail(run, reason);
  if (c.socket) c.socket[CONN] = null;
  c.socket?.destroy(); // we close once the response is complete
  c.socket = null;
}

// Listeners shared by all sockets (`this` is the socket): no closures per connection.
function socketListeners(run) {
  function onConnect() {
    const c = this[CONN];
    if (!c) return;
    const { cfg } = run;
    const now = performance.now() - run.t0, took = now - c.openedAt;
    c.connected = true;
    run.connected++;
    run.open++;
    run.latency[bucketOf(took)]++;
    this.setNoDelay(true);
    // The backend answers at the planned end, a time (ms since the epoch), not
    // a wait: a connection that then waits in HAProxy's accept queue keeps its
    // planned end (the request reaches the backend only once HAProxy accepts).
    const until = answerAt(run, c);
    this.write(`GET ${cfg.path}${cfg.path.includes('?') ? '&' : '?'}until=${until} HTTP/1.1\r\nHost: ${cfg.hostHeader}\r\n\r\n`);
  }
  function onData(nread, buf) {
    const c = this[CONN];
    if (!c) return;
    run.bytes += nread;
    const complete = c.feed(buf, 0, nread);
    if (!c.confirmed && c.status === 200 && c.state !== HEAD) { // its headers are in
      c.confirmed = true;
      run.unconfirmed--;
      run.confirmed++;
    }
    if (c.error) finish(run, c, c.error);
    else if (c.status > 200) finish(run, c, `status_${c.status}`); // no need to read its body
    else if (complete) finish(run, c, null);
  }
  function onGone() { // 'end' or 'close' before the response was complete (unless it ends at EOF)
    const c = this[CONN];
    if (c) finish(run, c, c.eof() && c.status === 200 ? null : 'closed_early');
  }
  function onError(err) {
    if (this[CONN]) finish(run, this[CONN], err.code || 'socket_error');
  }
  // A TLS socket has no onread: its decrypted chunks come as 'data'.
  function onTlsData(buf) { onData.call(this, buf.length, buf); }
  return { onConnect, onData, onTlsData, onGone, onError };
}

function openOne(run, k, now) {
  const { onConnect, onData, onTlsData, onGone, onError } = run.listeners;
  const { cfg } = run;
  const c = (run.conns[k] = new Conn(k, now));
  run.opened++;
  run.unconfirmed++;
  try {
    c.socket = cfg.tls
      ? tls.connect({ host: run.address, port: cfg.port, servername: cfg.host, ca: run.ca ?? undefined, rejectUnauthorized: run.ca !== null })
      : net.connect({ host: run.address, port: cfg.port, onread: { buffer: READ_BUFFER, callback: onData } });
  } catch (err) {
    return finish(run, c, err.code || 'connect_error');
  }
  c.socket[CONN] = c;
  if (cfg.tls) c.socket.on('secureConnect', onConnect).on('data', onTlsData);
  else c.socket.on('connect', onConnect);
  c.socket.on('end', onGone).on('error', onError).on('close', onGone);
}

function sample(run, now, final = false) {
  const { cfg, samples, memory, log } = run;
  const t = Math.floor(now / 1000), last = samples.at(-1);
  if (!final && last && t <= last.t) return;
  let mem;
  try {
    mem = process.memoryUsage();
  } catch { // reads /proc: fails while out of file descriptors
    mem = { rss: last?.rss_bytes ?? memory.rss_start, heapUsed: memory.heap_used_at_peak_open };
  }
  const s = { t, open: run.open, opened_total: run.opened, confirmed_total: run.confirmed, ok_total: run.ok, failed_total: run.failed, rss_bytes: mem.rss };
  if (last && t <= last.t) samples[samples.length - 1] = s; // the end state replaces this second's sample
  else {
    samples.push(s);
    run.window = Math.max(cfg.maxUnconfirmed, run.confirmed - (last?.confirmed_total ?? 0));
    run.windowPeak = Math.max(run.windowPeak, run.window);
  }
  memory.rss_peak = Math.max(memory.rss_peak, mem.rss);
  if (run.open > run.peakOpen) { // the peak as sampled, so that memory at that moment goes with it
    run.peakOpen = run.open;
    memory.rss_at_peak_open = mem.rss;
    memory.heap_used_at_peak_open = mem.heapUsed;
  }
  if (!final && t >= run.lastLog + 5) {
    run.lastLog = t;
    log(`holder ${cfg.index}/${cfg.replicas}: ${run.open} open, ${run.failed} failed, t=${t}s`);
  }
}

function tick(run) {
  const { cfg, conns, n } = run;
  const now = performance.now() - run.t0;
  const paced = cfg.maxUnconfirmed > 0;
  while (run.next < n && openAtMs(run.next, n, cfg.rampUp) <= now && (!paced || run.unconfirmed < run.window)) {
    // A paced ramp that fell this far behind: the connection's end has come
    // before it could open, so it is not held at all (opening it anyway
    // would only churn connections through HAProxy's accept queue).
    if (paced && scheduledEnd(run, run.next) <= now) {
      fail(run, 'ramp_behind');
      run.finished++;
      run.next++;
    } else openOne(run, run.next++, now);
  }
  if (paced && run.rampDone === null && run.next === n && run.unconfirmed === 0) run.rampDone = now;
  for (; run.connectScan < run.next; run.connectScan++) {
    const c = conns[run.connectScan];
    if (c && !c.connected && c.openedAt + cfg.connectTimeout * 1000 > now) break;
    if (c && !c.connected) finish(run, c, 'connect_timeout');
  }
  for (; run.endScan < run.next; run.endScan++) {
    const c = conns[run.endScan];
    if (c && plannedEnd(run, c) + cfg.grace * 1000 > now) break;
    if (c) finish(run, c, 'timeout');
  }
  sample(run, now);
  if (run.finished === n || now >= run.hardDeadline) stop(run, 'timeout');
}

// Ends the run: whatever is left, open or never opened, fails with `reason`.
function stop(run, reason) {
  if (!run.timer) return;
  clearTimeout(run.timer);
  run.timer = undefined;
  run.signal?.removeEventListener('abort', run.onAbort);
  for (const c of run.conns) if (c) finish(run, c, reason);
  if (run.next < run.n) fail(run, reason, run.n - run.next);
  sample(run, performance.now() - run.t0, true);
  run.resolveRun(summaryOf(run));
}

// What runHolder() resolves with (holder-<index>.json).
function summaryOf(run) {
  const { cfg, memory, peakOpen } = run;
  return {
    tool: 'holder', version: 1, testid: cfg.testid, index: cfg.index, replicas: cfg.replicas,
    target: cfg.target, path: cfg.path, planned: run.n, started_at_ms: run.startedAt, ended_at_ms: Date.now(),
    ramp_up: cfg.rampUp, hold: cfg.hold, ramp_down: cfg.rampDown, held_s: heldSeconds(cfg), grace: cfg.grace, connect_timeout: cfg.connectTimeout,
    opened: run.opened, connected: run.connected, ok: run.ok, failed: run.failed, failures: run.failures,
    interrupted: run.interrupted, peak_open: peakOpen,
    max_unconfirmed: cfg.maxUnconfirmed, window_peak: run.windowPeak, ramp_slack: cfg.rampSlack, confirmed: run.confirmed,
    ramp_done_s: run.rampDone === null ? null : Math.round(run.rampDone) / 1000,
    hold_window: holdWindow(run.samples, holdFrom(cfg, run.rampDone), cfg.rampUp + cfg.rampSlack + cfg.hold - 1),
    latency_ms: { bounds: LATENCY_BOUNDS, counts: run.latency }, late_ms: { bounds: LATENCY_BOUNDS, counts: run.late }, bytes_received: run.bytes, memory,
    bytes_per_connection: peakOpen > 0 ? Math.round((memory.rss_at_peak_open - memory.rss_start) / peakOpen) : null,
    nofile: run.nofile, samples: run.samples,
  };
}

// Runs this replica's share and resolves with its summary. Aborting `signal`
// stops it early: whatever is unfinished counts as `interrupted`.
export async function runHolder(cfg, { signal, log = console.log, warn = (l) => process.stderr.write(`${l}\n`) } = {}) {
  // Resolve the target once: a lookup per connection queues thousands of
  // getaddrinfo calls and DNS queries, which stalled the ramp-up.
  let address = cfg.host, lookupError;
  if (!net.isIP(address)) {
    try { ({ address } = await dnsPromises.lookup(address)); } catch (err) { lookupError = err.code || 'ENOTFOUND'; }
  }
  const run = runState(cfg, address, { signal, log, warn });
  run.listeners = socketListeners(run);
  run.ca = null;
  if (cfg.tls) {
    try { run.ca = fs.readFileSync(cfg.ca); } catch { warn(`holder: no CA at ${cfg.ca}: the server certificate is not verified`); }
  }
  run.onAbort = () => {
    run.interrupted = true;
    stop(run, 'interrupted');
  };

  return new Promise((resolve) => {
    run.resolveRun = resolve;
    scheduleTick(run);
    if (signal?.aborted) run.onAbort();
    else if (lookupError) stop(run, lookupError); // no address: every connection fails alike
    else signal?.addEventListener('abort', run.onAbort);
    if (run.timer) tick(run);
  });
}

// Writes RESULTS_ROOT/LOADGEN_SUMMARY_DIR/TOOL-<index>.json (TOOL: the
// summary's own, holder, vegeta or h2load); returns its path.
export function writeSummary(summary, cfg) {
  const dir = path.join(cfg.resultsRoot, cfg.summaryDir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${summary.tool}-${summary.index}.json`);
  fs.writeFileSync(file, `${JSON.stringify(summary)}\n`);
  return file;
}
