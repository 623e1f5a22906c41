// Entry point of a holder replica: `node /loadgen/holder/holder.mjs`. Holds this
// replica's share of CONNECTIONS long-lived GET requests through HAProxy, then
// writes holder-<index>.json. Settings: see loadConfig() in lib.mjs.
// Exit: 0 all ok, 1 some failed, 2 bad settings, 130 stopped by a signal.
import { heldSeconds, loadConfig, resolveIndex, runHolder, writeSummary } from './lib.mjs';

const die = (line) => {
  process.stderr.write(`holder: ${line}\n`);
  process.exit(2);
};

let cfg;
try {
  cfg = loadConfig(process.env);
  cfg.index ??= await resolveIndex();
} catch (err) {
  die(err.message);
}
if (cfg.index > cfg.replicas) die(`replica ${cfg.index} of ${cfg.replicas}: scale holder to HOLDER_REPLICAS (--scale holder=${cfg.replicas})`);

const stopper = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => (stopper.signal.aborted ? process.exit(130) : stopper.abort())); // a second signal: do not wait
}

const who = `holder ${cfg.index}/${cfg.replicas}`;
console.log(`${who}: testid ${cfg.testid}, ${cfg.connections} connections in all to ${cfg.target}${cfg.path}, ` +
  `ramp-up ${cfg.rampUp}s, hold ${cfg.hold}s, each held ${heldSeconds(cfg)}s, ramp-down at the ramp-up's pace or over ${cfg.rampDown}s`);
const s = await runHolder(cfg, { signal: stopper.signal });
let written = true;
try {
  if (cfg.summaryDir) writeSummary(s, cfg);
} catch (err) {
  written = false;
  process.stderr.write(`holder: cannot write the summary: ${err.message}\n`);
}
const reasons = Object.entries(s.failures).map(([r, c]) => `${r}=${c}`).join(' ');
console.log(`${who}: done, ${s.ok}/${s.planned} ok, ${s.failed} failed${reasons && ` (${reasons})`}, peak ${s.peak_open} open, ` +
  `${s.bytes_per_connection ?? '-'} bytes/connection`);
process.exit(s.interrupted ? 130 : written && s.failed === 0 && s.ok === s.planned ? 0 : 1);
