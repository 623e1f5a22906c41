// Testable parts of the h2load load tool: h2load (nghttp2's benchmarking
// client, in C: about HAProxy's own CPU per request, where vegeta costs 4-8
// times more) over HTTP/1.1. Unpaced, it is a closed loop, each connection
// sending its next request when the last is answered; paced, each kept-alive
// connection sends RATE ÷ connections requests/s (--rps), or, with a
// connection per request, new connections are made at RATE (-r, an open
// model). This wrapper turns the lab's settings into h2load's flags, and
// h2load's own text report (kept verbatim) plus the container's CPU time
// into h2load-<index>.json.
import { bucketOf, histogram } from '../lib/histogram.mjs';
import { bad, duration, extraArgs, keepalive, number, ownCpu, requestSettings } from '../wrapper/lib.mjs';

export { ownCpu };
export { writeSummary } from '../holder/lib.mjs';

// h2load's --rps is per connection, at most 1e6 (its own check).
const MAX_RPS = 1e6;

// The flags h2loadArgs sets or that would change what it asks, with the
// knob each comes from ('': the wrapper's own): H2LOAD_EXTRA_ARGS may add
// any other of h2load's (-H, -T, --warm-up-time, --sni, ...). -i, -B and
// --timing-script-file would change the URL or the pacing; -p and
// --alpn-list the protocol (--h1).
export const OWN_FLAGS = {
  '-t': 'THREADS', '--threads': 'THREADS', '-m': '', '--max-concurrent-streams': '',
  '-N': 'TIMEOUT', '--connection-inactivity-timeout': 'TIMEOUT', '-r': 'RATE', '--rate': 'RATE', '--rate-period': 'RATE',
  '-c': 'CONNECTIONS', '--clients': 'CONNECTIONS', '-n': 'RATE', '--requests': 'RATE', '-D': 'DURATION', '--duration': 'DURATION',
  '--rps': 'RATE', '--h1': '', '-p': '', '--no-tls-proto': '', '--alpn-list': '', '--npn-list': '',
  '-i': 'LOAD_PATH', '--input-file': 'LOAD_PATH', '-B': 'TARGET', '--base-uri': 'TARGET', '--timing-script-file': 'RATE',
  '-h': '', '--help': '', '--version': '', '--log-file': '',
};

// whole VALUE NAME MAX RAW: VALUE when it is a whole number; else the
// RangeError number() gives, "NAME must be ... (got "x")".
function whole(value, name, max, raw) {
  if (Number.isInteger(value)) return value;
  throw bad(name, `a whole number from 1 to ${max}`, raw);
}

// connectionRate SHARE THREADS: h2load -r makes a whole number of
// connections every --rate-period (whole milliseconds), at least one per
// thread: the shortest period whose count is within 0.5% of SHARE per
// second, so the connections come evenly rather than in bursts. null when
// none fits in a minute's period.
export function connectionRate(share, threads) {
  for (let ms = 1; ms <= 60000; ms++) {
    const per = Math.round((share * ms) / 1000);
    if (per >= threads && Math.abs((per * 1000) / ms - share) <= share * 0.005) return { per, ms };
  }
  return null;
}

// Settings from the environment (empty = the default); a RangeError saying
// "NAME must be ... (got "x")" for a bad one. RATE and CONNECTIONS are the
// whole step's; each of H2LOAD_REPLICAS replicas takes its share.
export function loadConfig(env = process.env) {
  const { scheme, tls, host, port, path: loadPath, target, summaryDir } = requestSettings(env);
  const replicas = whole(number(env, 'H2LOAD_REPLICAS', 1, 1, 1000), 'H2LOAD_REPLICAS', 1000, env.H2LOAD_REPLICAS);
  // Empty or 0: unpaced, as fast as HAProxy answers.
  const rate = number(env, 'RATE', 0, 0, 1e7);
  const runSeconds = duration(env, 'DURATION', 10, 0.1, 86400);
  const timeout = duration(env, 'TIMEOUT', 10, 0.1, 3600);
  const kept = keepalive(env);
  const asked = whole(number(env, 'CONNECTIONS', 50, 1, 1e6), 'CONNECTIONS', 1e6, env.CONNECTIONS);
  const threads = whole(number(env, 'THREADS', 1, 1, 64), 'THREADS', 64, env.THREADS);
  const share = rate / replicas;
  const cfg = {
    tls,
    url: `${scheme}://${host}:${port}${loadPath}`,
    target,
    path: loadPath,
    paced: share > 0,
    // none: a closed loop; per-connection: kept-alive connections each at
    // rps; new-connections: a connection per request, made at the rate.
    pacing: share === 0 ? 'none' : kept ? 'per-connection' : 'new-connections',
    rate: share > 0 ? share : null,
    duration: runSeconds,
    timeout,
    keepalive: kept,
    connections: Math.ceil(asked / replicas),
    threads,
    rps: null,
    connectionRate: null,
    planned: share > 0 ? Math.round(share * runSeconds) : null,
    replicas,
    index: env.H2LOAD_INDEX ? whole(number(env, 'H2LOAD_INDEX', 1, 1, replicas), 'H2LOAD_INDEX', replicas, env.H2LOAD_INDEX) : 1,
    testid: env.TESTID || 'adhoc',
    summaryDir,
    resultsRoot: env.RESULTS_ROOT || '/results',
    extraArgs: extraArgs(env, 'H2LOAD_EXTRA_ARGS', OWN_FLAGS, true),
  };
  if (cfg.pacing === 'per-connection') pacePerConnection(cfg, env);
  if (cfg.pacing === 'new-connections') paceNewConnections(cfg, env);
  // h2load runs at most one thread per connection.
  cfg.threads = Math.min(cfg.threads, cfg.connections);
  return cfg;
}

// Kept-alive connections each at rps = share ÷ connections. h2load closes a
// connection that saw nothing for TIMEOUT (-N) and 1.70 does not open it
// again: at most share × TIMEOUT ÷ 2 connections, so that each sends a
// request at least twice per TIMEOUT.
function pacePerConnection(cfg, env) {
  const most = Math.floor((cfg.rate * cfg.timeout) / 2);
  if (most < 1) throw bad('RATE', `at least ${(2 / cfg.timeout) * cfg.replicas} with TIMEOUT ${cfg.timeout} (a kept-alive connection idle for TIMEOUT is closed)`, env.RATE);
  cfg.connections = Math.min(cfg.connections, most);
  cfg.rps = cfg.rate / cfg.connections;
  if (cfg.rps > MAX_RPS) throw bad('RATE', `at most ${MAX_RPS} per connection: raise CONNECTIONS`, env.RATE);
}

// A connection per request at the rate: h2load 1.70's --rps does not pace a
// connection's first request, so Connection: close with --rps is unpaced;
// its -r (connections per period, each making one request, -c = -n = the
// planned requests) is. CONNECTIONS does not apply: as many are open as
// HAProxy has not answered yet. Every planned request is sent, late when
// h2load or HAProxy cannot keep up (its seconds and req/s show it), and
// over TLS each is a full handshake (1.70 resumes only on a connection it
// reopens).
function paceNewConnections(cfg, env) {
  const rate = connectionRate(cfg.rate, cfg.threads);
  if (!rate) throw bad('RATE', `at least ${cfg.threads * cfg.replicas / 60} with THREADS ${cfg.threads} (a new connection per request: at least one per thread a minute)`, env.RATE);
  if (cfg.planned < rate.per) throw bad('DURATION', `long enough for ${rate.per} requests at RATE (a new connection per request)`, env.DURATION);
  cfg.connectionRate = rate;
  cfg.connections = cfg.planned;
}

const ms = (seconds) => `${Math.round(seconds * 1000)}ms`;

// h2loadArgs CFG [LOG]: h2load's arguments. HTTP/1.1 (--h1) as the lab's
// other tools, no pipelining (-m 1); -N: a request unanswered for TIMEOUT
// fails (h2load's closest to a request timeout); H2LOAD_EXTRA_ARGS before
// the URL. h2load does not verify a TLS certificate (a load tool: the target
// is the lab's own HAProxy). LOG: the file h2load writes a line per request
// into (--log-file), for the latency histogram.
export function h2loadArgs(cfg, log = null) {
  const common = ['--h1', '-t', String(cfg.threads), '-m', '1', '-N', ms(cfg.timeout),
    ...(cfg.keepalive ? [] : ['-H', 'Connection: close']), ...(log ? [`--log-file=${log}`] : []), ...cfg.extraArgs];
  if (cfg.pacing === 'new-connections') {
    const { per, ms: period } = cfg.connectionRate;
    return [...common, '-r', String(per), '--rate-period', `${period}ms`, '-c', String(cfg.planned), '-n', String(cfg.planned), cfg.url];
  }
  return [...common, '-c', String(cfg.connections), '-D', ms(cfg.duration),
    ...(cfg.pacing === 'per-connection' ? ['--rps', String(cfg.rps)] : []), cfg.url];
}

// seconds TEXT: "108us", "38.10ms", "2.00s" (h2load's durations) in seconds; null otherwise.
export function seconds(text) {
  const m = /^([0-9]+(?:\.[0-9]+)?)(us|ms|s)$/.exec(text ?? '');
  return m ? Number(m[1]) * { us: 1e-6, ms: 1e-3, s: 1 }[m[2]] : null;
}

// The rows of h2load's table, by the names of 1.70 and of the older ones.
const ROWS = { request: 'request', 'time for request': 'request', connect: 'connect', 'time for connect': 'connect',
  TTFB: 'ttfb', 'time to 1st byte': 'ttfb' };
// The columns the summary keeps (a 1.70 table has median, p95 and p99;
// older ones min, max, mean only: the others are null).
const COLUMNS = ['min', 'max', 'median', 'p95', 'p99', 'mean'];
const count = (m, i) => (m && m[i] !== undefined ? Number(m[i]) : null);

// parseReport TEXT: h2load's stdout → {seconds, req_rate, counts, status,
// request, connect, ttfb} (each row {min..mean} in ms), or null when it has
// no report (h2load stopped early). The table's columns are read from its
// header row.
export function parseReport(text) {
  const finished = /^finished in ([0-9.]+(?:us|ms|s)), ([0-9.]+) req\/s/m.exec(text);
  const req = /^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored(?:, (\d+) timeout)?/m.exec(text);
  if (!finished || !req) return null;
  const status = /^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/m.exec(text);
  const lines = text.split('\n');
  const head = lines.findIndex((l) => /^\s+min\s+max\s/.test(l));
  const columns = head < 0 ? [] : lines[head].trim().split(/\s{2,}/);
  const report = {
    seconds: seconds(finished[1]),
    req_rate: Number(finished[2]),
    counts: { total: count(req, 1), started: count(req, 2), done: count(req, 3), succeeded: count(req, 4),
      failed: count(req, 5), errored: count(req, 6), timeout: count(req, 7) },
    status: status ? { '2xx': count(status, 1), '3xx': count(status, 2), '4xx': count(status, 3), '5xx': count(status, 4) } : null,
    request: null,
    connect: null,
    ttfb: null,
  };
  for (const line of head < 0 ? [] : lines.slice(head + 1)) {
    const m = /^([A-Za-z0-9/ ]+?)\s*:\s+(.*)$/.exec(line);
    if (!m || !ROWS[m[1]]) continue;
    const values = m[2].trim().split(/\s+/);
    report[ROWS[m[1]]] = Object.fromEntries(COLUMNS.map((c) => {
      const s = seconds(values[columns.indexOf(c)]);
      // In ms, to the ns: h2load prints at most 3 significant decimals.
      return [c, columns.includes(c) && s !== null ? Math.round(s * 1e9) / 1e6 : null];
    }));
  }
  return report;
}

// logHistogram LINES: the latency_histogram (loadgen/lib/histogram.mjs) of
// h2load's --log-file lines (start µs, status, µs to the response's end,
// tab-separated), for the report to merge the replicas': h2load's own
// percentiles are each replica's. As h2load's own table, over the requests
// answered: a failed stream (status -1) is left out. LINES: any iterable of
// lines, a file's read line by line included.
export async function logHistogram(lines) {
  const counts = {};
  for await (const line of lines) {
    const [, status, us] = line.split('\t');
    if (us === undefined || status === '-1' || !/^\d+$/.test(us)) continue;
    const bucket = bucketOf(Number(us) / 1000);
    counts[bucket] = (counts[bucket] ?? 0) + 1;
  }
  return histogram(counts);
}

// The version in `h2load --version` ("h2load nghttp2/1.70.0"), else its line.
export const versionOf = (text) => /nghttp2\/([0-9][0-9A-Za-z.+-]*)/.exec(text)?.[1] ?? (text.trim() || null);

const NO_LATENCY = Object.fromEntries(COLUMNS.map((c) => [c, null]));

// summarize {cfg, report, output, log, latencyHistogram, cpu, cpuStart,
// version, interrupted}: this replica's summary. requests: those h2load
// sent (its done and its timeouts: 1.70 counts a timed-out request in
// "timeout" alone; with a connection per request, its total); ok: answered
// 2xx or 3xx; failed: the rest (h2load's own "errored" are among its done).
// dropped: paced, what was planned but never sent (the connections fell
// behind, waiting for HAProxy). The latencies are h2load's, over the
// requests it saw answered (null when none was), and their histogram
// (latency_histogram, logHistogram). cpu:
// the container's CPU time when h2load ended, cpu_start when it started
// (node's own start). output: h2load's stdout verbatim. log: the --log-file
// h2load was given.
export function summarize({
  cfg, report, output = '', log = null, latencyHistogram = null, cpu, cpuStart = null, version = null, interrupted = false,
}) {
  const c = report?.counts;
  const requests = !c ? null : cfg.pacing === 'new-connections' ? c.total : c.done + (c.timeout ?? 0);
  const ok = c ? c.succeeded : null;
  const answered = c && c.done > 0;
  return {
    tool: 'h2load',
    index: cfg.index,
    replicas: cfg.replicas,
    testid: cfg.testid,
    version,
    target: cfg.url,
    rate: cfg.rate,
    paced: cfg.paced,
    pacing: cfg.pacing,
    connections: cfg.connections,
    threads: cfg.threads,
    duration: cfg.duration,
    keepalive: cfg.keepalive,
    timeout: cfg.timeout,
    // h2load does not check the certificate of an https target.
    tls_verified: cfg.tls ? false : null,
    args: h2loadArgs(cfg, log),
    planned: cfg.planned,
    requests,
    ok,
    failed: c ? requests - ok : null,
    seconds: report?.seconds ?? null,
    req_rate: report?.req_rate ?? null,
    latency_ms: answered && report.request ? report.request : NO_LATENCY,
    connect_ms: c && c.started > 0 && report.connect ? report.connect : NO_LATENCY,
    ttfb_ms: answered && report.ttfb ? report.ttfb : NO_LATENCY,
    latency_histogram: latencyHistogram,
    counts: c ?? null,
    status: report?.status ?? null,
    dropped: cfg.paced && !interrupted && c ? Math.max(0, cfg.planned - requests) : 0,
    interrupted,
    cpu,
    cpu_start: cpuStart,
    output,
  };
}
