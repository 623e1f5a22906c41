// Testable parts of the vegeta load tool: vegeta (tsenart/vegeta) attacks at
// a constant rate whatever the latency (open model, as seed 04's client),
// kept-alive or not, resuming TLS sessions or not (k6 never resumes). This wrapper
// turns the lab's settings into `vegeta attack` flags, and vegeta's own JSON
// report (kept verbatim) plus the container's CPU time into vegeta-<index>.json.
import { FIRST, LAST, histogram, upperMs } from '../lib/histogram.mjs';
import { duration, extraArgs, flag, keepalive, number, ownCpu, requestSettings } from '../wrapper/lib.mjs';

export { ownCpu };
export { writeSummary } from '../holder/lib.mjs';

// The latency buckets of the histogram kept beside the report for a reader
// (vegeta's hist[...] report type), from sub-millisecond to the timeout's range.
export const HIST_BUCKETS = '0,1ms,2ms,5ms,10ms,20ms,50ms,100ms,200ms,500ms,1s,2s,5s,10s';

// The flags attackArgs sets, with the knob each comes from ('': the
// wrapper's own): VEGETA_EXTRA_ARGS may add any other of vegeta attack's.
// -targets and -format: the one target comes on stdin (targetLine); -h2c
// would leave HTTP/1.1 as -http2=false does.
export const OWN_FLAGS = {
  '-rate': 'RATE', '-duration': 'DURATION', '-timeout': 'TIMEOUT', '-keepalive': 'KEEPALIVE', '-http2': '', '-h2c': '',
  '-connections': 'CONNECTIONS', '-max-connections': 'MAX_CONNECTIONS', '-workers': 'WORKERS', '-max-workers': 'MAX_WORKERS',
  '-session-tickets': 'TLS_RESUME', '-root-certs': '', '-name': 'TESTID', '-output': '', '-targets': 'TARGET', '-format': '',
};

// The report type of vegeta's own histogram in the buckets every load tool
// shares (loadgen/lib/histogram.mjs), for the report to merge the replicas'.
// Not `vegeta report` over every replica's results: those stay in each
// replica's container (on its own host in a Swarm) and would have to meet
// once all had ended, and vegeta's percentiles are a t-digest's estimates
// anyway; its histogram counts every request exactly in its bucket, and
// counts add up. vegeta's bucket k is [bound k, bound k+1) from 0, the last
// one open: bucket FIRST + k.
export function latencyHistType() {
  const bounds = [0];
  for (let i = FIRST; i < LAST; i++) bounds.push(`${Math.round(upperMs(i) * 1e6)}ns`);
  return `hist[${bounds.join(',')}]`;
}

// parseLatencyHist TEXT: the latency_histogram from the output of
// `vegeta report -type=latencyHistType()`; null when it is not that output.
export function parseLatencyHist(text) {
  const rows = String(text ?? '').split('\n').map((l) => /^\[[^\]]*\]\s+(\d+)\s/.exec(l)).filter(Boolean);
  if (rows.length !== LAST - FIRST + 1) return null;
  return histogram(Object.fromEntries(rows.map((m, k) => [FIRST + k, Number(m[1])])));
}

// Settings from the environment (empty = the default); a RangeError saying
// "NAME must be ... (got "x")" for a bad one. RATE is the whole step's; each
// of VEGETA_REPLICAS replicas sends its share.
export function loadConfig(env = process.env) {
  const { scheme, tls, host, port, path: loadPath, target, summaryDir } = requestSettings(env);
  const replicas = number(env, 'VEGETA_REPLICAS', 1, 1, 1000);
  const rate = number(env, 'RATE', 200, 0.1, 1e7);
  return {
    tls,
    url: `${scheme}://${host}:${port}${loadPath}`,
    target,
    path: loadPath,
    rate: rate / replicas,
    duration: duration(env, 'DURATION', 10, 0.1, 86400),
    keepalive: keepalive(env),
    connections: number(env, 'CONNECTIONS', 10000, 1, 1e6),
    // 0 = no bound (vegeta's default): a connection per waiting request.
    maxConnections: number(env, 'MAX_CONNECTIONS', 0, 0, 1e6),
    resume: flag(env, 'TLS_RESUME', true),
    ca: env.TLS_CA || '/certs/ca.crt',
    timeout: duration(env, 'TIMEOUT', 10, 0.1, 3600),
    workers: number(env, 'WORKERS', 10, 1, 1e6),
    maxWorkers: number(env, 'MAX_WORKERS', 10000, 1, 1e6),
    replicas,
    index: env.VEGETA_INDEX ? number(env, 'VEGETA_INDEX', 1, 1, replicas) : 1,
    testid: env.TESTID || 'adhoc',
    summaryDir,
    resultsRoot: env.RESULTS_ROOT || '/results',
    extraArgs: extraArgs(env, 'VEGETA_EXTRA_ARGS', OWN_FLAGS),
  };
}

// attackArgs CFG RESULTS: `vegeta attack` arguments for CFG, its binary
// results into the file RESULTS, VEGETA_EXTRA_ARGS last. HTTP/1.1 as the article (vegeta would speak
// HTTP/2 wherever ALPN offers it). -max-workers bounds the goroutines a late
// client would pile up: past it, vegeta sends less than the rate (the lateness
// the report counts as "dropped").
export function attackArgs(cfg, results) {
  // vegeta's rate is a whole number per period: a share like 333.5/s is 3335/10s.
  const per = [1, 10, 100, 1000].find((p) => Number.isInteger(Math.round(cfg.rate * p * 1e6) / 1e6)) ?? 1000;
  return [
    'attack',
    `-rate=${Math.round(cfg.rate * per)}/${per}s`,
    `-duration=${Math.round(cfg.duration * 1000)}ms`,
    `-timeout=${Math.round(cfg.timeout * 1000)}ms`,
    `-keepalive=${cfg.keepalive}`,
    '-http2=false',
    `-connections=${cfg.connections}`,
    ...(cfg.maxConnections > 0 ? [`-max-connections=${cfg.maxConnections}`] : []),
    `-workers=${Math.min(cfg.workers, cfg.maxWorkers)}`,
    `-max-workers=${cfg.maxWorkers}`,
    ...(cfg.tls ? [`-session-tickets=${cfg.resume}`, `-root-certs=${cfg.ca}`] : []),
    `-name=${cfg.testid}`,
    `-output=${results}`,
    ...cfg.extraArgs,
  ];
}

// The one target vegeta reads (its "http" targets format).
export const targetLine = (cfg) => `GET ${cfg.url}\n`;

// summarize {cfg, report, hist, latencyHistogram, cpu, version, interrupted}:
// this replica's summary: vegeta's JSON report verbatim, its histogram for
// reading (hist) and for merging (latency_histogram), what was asked
// (planned requests), the lateness (asked but never sent), the container's
// CPU time at the attack's end (before the reports, which are not the load).
export function summarize({ cfg, report, hist = '', latencyHistogram = null, cpu, version = null, interrupted = false }) {
  const planned = Math.round(cfg.rate * cfg.duration);
  const requests = Number(report?.requests) || 0;
  const ok = Math.round((Number(report?.success) || 0) * requests);
  return {
    tool: 'vegeta',
    index: cfg.index,
    replicas: cfg.replicas,
    testid: cfg.testid,
    version,
    target: cfg.url,
    rate: cfg.rate,
    duration: cfg.duration,
    keepalive: cfg.keepalive,
    tls_resume: cfg.tls ? cfg.resume : null,
    extra_args: cfg.extraArgs,
    planned,
    requests,
    ok,
    failed: requests - ok,
    // Not sent at all: the client fell behind the rate (its own limit).
    dropped: interrupted ? 0 : Math.max(0, planned - requests),
    interrupted,
    cpu,
    report,
    hist,
    latency_histogram: latencyHistogram,
  };
}
