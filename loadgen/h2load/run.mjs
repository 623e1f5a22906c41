// Entry point of an h2load replica: `node /loadgen/h2load/run.mjs`. Runs
// h2load for this replica's share of the load for DURATION (unpaced, or
// RATE requests/s), then writes its report, read from h2load's stdout (kept
// verbatim), into h2load-<index>.json. Settings: loadConfig() in lib.mjs.
// Exit: 0 every request answered 2xx/3xx and none dropped, 1 otherwise (or
// none sent), 2 bad settings or no h2load, 130 stopped by a signal (h2load
// dies on SIGINT without a report: the summary says interrupted).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { resolveIndex } from '../holder/lib.mjs';
import { summaryDirProblem, superviseChild } from '../wrapper/lib.mjs';
import { h2loadArgs, logHistogram, loadConfig, ownCpu, parseReport, summarize, versionOf, writeSummary } from './lib.mjs';

const H2LOAD = process.env.H2LOAD_BIN || 'h2load';
const die = (line, code = 2) => {
  process.stderr.write(`h2load: ${line}\n`);
  process.exit(code);
};

let cfg;
try {
  cfg = loadConfig(process.env);
  if (cfg.replicas > 1 && !process.env.H2LOAD_INDEX) cfg.index = await resolveIndex({ service: 'h2load' });
} catch (err) {
  die(err.message);
}
const probe = spawnSync(H2LOAD, ['--version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) die(`cannot run ${H2LOAD}: ${probe.error?.message ?? (probe.stderr || '').trim()}`);
const version = versionOf(probe.stdout);

// Where the summary goes, writable before any load is sent (not found out after it).
const summaryProblem = summaryDirProblem(cfg);
if (summaryProblem) die(summaryProblem);
const who = `h2load ${cfg.index}/${cfg.replicas}`;
const how = {
  none: `unpaced (as fast as HAProxy answers) on ${cfg.connections} ${cfg.keepalive ? 'kept-alive connections' : 'connections, a new one per request'}`,
  'per-connection': `${cfg.rate}/s on ${cfg.connections} kept-alive connections (${+cfg.rps?.toFixed(3)}/s each)`,
  'new-connections': `${cfg.rate}/s, a new connection per request (${cfg.connectionRate?.per} every ${cfg.connectionRate?.ms} ms)`,
}[cfg.pacing];
console.log(`${who}: testid ${cfg.testid}, h2load ${version}, ${how} for ${cfg.duration}s to ${cfg.url}` +
  `${cfg.tls ? ' (h2load does not verify the certificate)' : ''}`);

// The wrapper's own start (node, h2load --version) is in the container's CPU
// time too: read before h2load starts, so a reader can take it out.
const cpuStart = ownCpu();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'h2load-'));
const log = path.join(work, 'requests.log');
const run = spawn(H2LOAD, h2loadArgs(cfg, log), { stdio: ['ignore', 'pipe', 'inherit'] });
const chunks = [];
run.stdout.on('data', (d) => chunks.push(d));
// h2load dies on SIGINT with no report: what it sent is not known then.
const supervised = superviseChild(run, 'close');
const exit = await supervised.exit;
const interrupted = supervised.interrupted();
// Right after h2load: the summary's work is not the load's.
const cpu = ownCpu();
if (exit.error) die(`cannot run ${H2LOAD}: ${exit.error.message}`);
const output = Buffer.concat(chunks).toString('utf8');
if (exit.code !== 0 && !interrupted) {
  process.stderr.write(output.split('\n').slice(-20).join('\n'));
  die(`h2load exited with ${exit.code ?? exit.signal} (its output's end above)`, 1);
}
const report = interrupted ? null : parseReport(output);
if (!report && !interrupted) die(`no report in h2load's output:\n${output.split('\n').slice(-20).join('\n')}`, 1);

// The log's histogram, read line by line (a line per request, ~25 bytes, in
// the container's /tmp); none without a report (h2load stopped early).
const histogramOf = (file) => (report && fs.existsSync(file)
  ? logHistogram(readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity })) : null);
let summary;
try {
  const latencyHistogram = await histogramOf(log);
  summary = summarize({ cfg, report, output, log, latencyHistogram, cpu, cpuStart, version, interrupted });
  if (cfg.summaryDir) writeSummary(summary, cfg);
} catch (err) {
  die(`cannot write the summary: ${err.message}`, 1);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
const ms = (v) => (v === null ? '-' : v.toFixed(2));
if (interrupted) {
  console.log(`${who}: interrupted, no report (h2load stops on a signal without one), CPU ${(cpu.ns / 1e6).toFixed(0)} ms (${cpu.source})`);
  process.exit(130);
}
console.log(`${who}: done, ${summary.ok}/${summary.planned ?? summary.requests} ok, ${summary.failed} failed, ${summary.dropped} dropped, ` +
  `${summary.req_rate}/s, p50 ${ms(summary.latency_ms.median)} ms, p99 ${ms(summary.latency_ms.p99)} ms, ` +
  `CPU ${(cpu.ns / 1e6).toFixed(0)} ms (${cpu.source})${summary.requests === 0 ? ': no request sent' : ''}`);
process.exit(summary.failed === 0 && summary.dropped === 0 && summary.requests > 0 ? 0 : 1);
