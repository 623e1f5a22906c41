// Entry point of a vegeta replica: `node /loadgen/vegeta/attack.mjs`. Runs
// `vegeta attack` for this replica's share of RATE requests/s for DURATION,
// then vegeta's own reports (JSON, latency histograms) into vegeta-<index>.json.
// Settings: loadConfig() in lib.mjs. Exit: 0 every request answered 2xx/3xx
// and none dropped, 1 otherwise, 2 bad settings or no vegeta, 130 stopped by
// a signal (the requests sent until then are reported).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveIndex } from '../holder/lib.mjs';
import { summaryDirProblem, superviseChild } from '../wrapper/lib.mjs';
import {
  HIST_BUCKETS, attackArgs, latencyHistType, loadConfig, ownCpu, parseLatencyHist, summarize, targetLine, writeSummary,
} from './lib.mjs';

const VEGETA = process.env.VEGETA_BIN || 'vegeta';
const die = (line, code = 2) => {
  process.stderr.write(`vegeta: ${line}\n`);
  process.exit(code);
};

let cfg;
try {
  cfg = loadConfig(process.env);
  if (cfg.replicas > 1 && !process.env.VEGETA_INDEX) cfg.index = await resolveIndex({ service: 'vegeta' });
} catch (err) {
  die(err.message);
}
if (cfg.tls && !fs.existsSync(cfg.ca)) die(`no CA at ${cfg.ca}: mount the lab-ca volume at /certs (compose does)`);

// Where the summary goes, writable before any load is sent (not found out after it).
const summaryProblem = summaryDirProblem(cfg);
if (summaryProblem) die(summaryProblem);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'vegeta-'));
const results = path.join(work, 'results.bin');
const who = `vegeta ${cfg.index}/${cfg.replicas}`;
console.log(`${who}: testid ${cfg.testid}, ${cfg.rate}/s for ${cfg.duration}s to ${cfg.url}, ` +
  `${cfg.keepalive ? 'kept-alive connections' : 'a connection per request'}` +
  `${cfg.tls ? `, TLS sessions ${cfg.resume ? 'resumed (tickets)' : 'never resumed'}` : ''}`);

const attack = spawn(VEGETA, attackArgs(cfg, results), { stdio: ['pipe', 'inherit', 'inherit'] });
attack.stdin.end(targetLine(cfg));
// vegeta stops on SIGINT and still writes what it sent.
const supervised = superviseChild(attack);
const exit = await supervised.exit;
const interrupted = supervised.interrupted();
if (exit.error) die(`cannot run ${VEGETA}: ${exit.error.message}`);
// Read before the reports: their CPU is not the load's.
const cpu = ownCpu();
if (exit.code !== 0 && !interrupted) die(`vegeta attack exited with ${exit.code ?? exit.signal} (above)`, 1);

const report = (type) => {
  const out = spawnSync(VEGETA, ['report', `-type=${type}`, results], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (out.status !== 0) die(`vegeta report -type=${type} failed: ${(out.stderr || '').trim()}`, 1);
  return out.stdout;
};
let summary;
try {
  summary = summarize({
    cfg,
    report: JSON.parse(report('json')),
    hist: report(`hist[${HIST_BUCKETS}]`),
    latencyHistogram: parseLatencyHist(report(latencyHistType())),
    cpu,
    version: process.env.VEGETA_VERSION || null,
    interrupted,
  });
  if (cfg.summaryDir) writeSummary(summary, cfg);
} catch (err) {
  die(`cannot write the summary: ${err.message}`, 1);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
const ms = (ns) => (Number(ns) / 1e6).toFixed(1);
console.log(`${who}: done, ${summary.ok}/${summary.planned} ok, ${summary.failed} failed, ${summary.dropped} dropped, ` +
  `sent ${Number(summary.report.rate).toFixed(1)}/s, p50 ${ms(summary.report.latencies?.['50th'])} ms, ` +
  `p99 ${ms(summary.report.latencies?.['99th'])} ms, CPU ${(cpu.ns / 1e6).toFixed(0)} ms (${cpu.source})`);
process.exit(interrupted ? 130 : summary.failed === 0 && summary.dropped === 0 ? 0 : 1);
