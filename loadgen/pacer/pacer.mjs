// Entry point of a pacer replica: `node /loadgen/pacer/pacer.mjs`. Sends this
// replica's share of RATE requests/s for DURATION (open model), then writes
// pacer-<index>.json. Settings: loadConfig() in lib.mjs.
// Exit: 0 all ok, 1 some failed, 2 bad settings, 130 stopped by a signal.
import fs from 'node:fs';
import { loadConfig, runPacer, writeSummary } from './lib.mjs';
import { resolveIndex } from '../holder/lib.mjs';

const die = (line) => {
  process.stderr.write(`pacer: ${line}\n`);
  process.exit(2);
};

let cfg;
try {
  cfg = loadConfig(process.env);
  if (cfg.replicas > 1 && !process.env.PACER_INDEX) cfg.index = await resolveIndex({ service: 'pacer' });
} catch (err) {
  die(err.message);
}
// The lab's CA (the certs volume): verified like a real client; without it, not verified.
let ca = null;
if (cfg.tls) {
  try { ca = fs.readFileSync(cfg.ca); } catch { process.stderr.write(`pacer: no CA at ${cfg.ca}: the server certificate is not verified\n`); }
}
const stopper = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => (stopper.signal.aborted ? process.exit(130) : stopper.abort()));

const who = `pacer ${cfg.index}/${cfg.replicas}`;
console.log(`${who}: testid ${cfg.testid}, ${cfg.rate}/s for ${cfg.duration}s to ${cfg.target}${cfg.path}, ` +
  `${cfg.keepalive ? `${cfg.connections} kept-alive connections` : 'a connection per request'}${cfg.tls ? `, TLS sessions ${cfg.resume ? 'resumed' : 'never resumed'}` : ''}`);
const s = await runPacer(cfg, { signal: stopper.signal, ca });
try {
  if (cfg.summaryDir) writeSummary(s, cfg);
} catch (err) {
  process.stderr.write(`pacer: cannot write the summary: ${err.message}\n`);
  process.exit(1);
}
const refused = s.tls?.full_offered ? ` (${s.tls.full_offered} full although a session was offered)` : '';
const tls = s.tls ? `, TLS ${s.tls.full} full + ${s.tls.resumed} resumed${refused} (${Object.keys(s.tls.key_types).join(', ')})` : '';
console.log(`${who}: done, ${s.ok}/${s.planned} ok, ${s.failed} failed, ${s.dropped} dropped${tls}, ` +
  `p50 ${s.latency_ms.p50?.toFixed(1)} ms, CPU ${(s.cpu.ns / 1e6).toFixed(0)} ms (${s.cpu.source})`);
process.exit(s.interrupted ? 130 : s.failed === 0 && s.dropped === 0 ? 0 : 1);
