// Merges the holder-<index>.json summaries of one test's replicas into one, the
// way `vegeta report -inputs` does: mergeSummaries() is pure (no I/O), and
//   node merge.mjs holder-1.json holder-2.json ... > merged.json
// runs it on files (unreadable or invalid ones count as `missing`).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { LATENCY_BOUNDS, holdFrom, holdWindow } from './lib.mjs';

const SUMS = ['planned', 'opened', 'connected', 'confirmed', 'ok', 'failed', 'bytes_received'];
const SERIES = ['open', 'opened_total', 'confirmed_total', 'ok_total', 'failed_total', 'rss_bytes'];
const MEMORY = ['rss_start', 'rss_peak', 'rss_at_peak_open', 'heap_used_at_peak_open'];

const isSummary = (s) => s !== null && typeof s === 'object' && s.tool === 'holder' && Array.isArray(s.samples);

// The common hold window: every replica past its ramp-up (paced: past the
// ramp it really took), none ramping down; and when the paced ramps were all
// done (s after the earliest start; null if one never was).
function commonHold(inputs, samples, offset) {
  const config = (s) => ({ rampUp: s.ramp_up, rampSlack: s.ramp_slack ?? 0, maxUnconfirmed: s.max_unconfirmed ?? 0 });
  const rampDoneMs = (s) => (s.ramp_done_s === null || s.ramp_done_s === undefined ? null : s.ramp_done_s * 1000);
  const paced = inputs.filter((s) => (s.max_unconfirmed ?? 0) > 0);
  return {
    hold_window: inputs.length
      ? holdWindow(samples, Math.max(...inputs.map((s) => offset(s) + holdFrom(config(s), rampDoneMs(s)))),
        Math.min(...inputs.map((s) => offset(s) + s.ramp_up + (s.ramp_slack ?? 0) + s.hold - 1)))
      : null,
    ramp_done_s: paced.length === 0 || paced.some((s) => s.ramp_done_s === null) ? null
      : Math.max(...paced.map((s) => offset(s) + s.ramp_done_s)),
  };
}

export function mergeSummaries(list) {
  const inputs = list.filter(isSummary);
  const start = inputs.length ? Math.min(...inputs.map((s) => s.started_at_ms)) : null;
  const offset = (s) => (s.started_at_ms - start) / 1000; // seconds after the earliest start
  const out = {
    tool: 'holder', version: 1, merged: true,
    testid: inputs[0]?.testid ?? null,
    replicas: inputs.map((s) => s.index).sort((a, b) => a - b),
    inputs: inputs.length, missing: list.length - inputs.length,
    target: inputs[0]?.target ?? null, path: inputs[0]?.path ?? null,
    started_at_ms: start,
    ended_at_ms: inputs.length ? Math.max(...inputs.map((s) => s.ended_at_ms)) : null,
    ramp_up: inputs[0]?.ramp_up ?? null, hold: inputs[0]?.hold ?? null, ramp_down: inputs[0]?.ramp_down ?? null,
    // Absent from a summary written before each connection was held as long.
    held_s: inputs[0]?.held_s,
    ramp_slack: inputs[0]?.ramp_slack ?? 0, max_unconfirmed: inputs[0]?.max_unconfirmed ?? 0,
  };
  for (const k of SUMS) out[k] = inputs.reduce((sum, s) => sum + (s[k] ?? 0), 0);
  out.failures = {};
  for (const s of inputs) for (const [r, c] of Object.entries(s.failures ?? {})) out.failures[r] = (out.failures[r] ?? 0) + c;
  out.interrupted = inputs.some((s) => s.interrupted);

  // Samples by wall-clock second; a replica without a sample for a second
  // (not sampled then, or already finished) counts with its last known values.
  const byReplica = inputs.map((s) => {
    const at = new Map();
    for (const x of s.samples) at.set(Math.round(offset(s) + x.t), x);
    return at;
  });
  let lastT = -1;
  for (const at of byReplica) for (const t of at.keys()) lastT = Math.max(lastT, t);
  const last = byReplica.map(() => null);
  out.samples = [];
  for (let t = 0; t <= lastT; t++) {
    const row = { t };
    for (const k of SERIES) row[k] = 0;
    byReplica.forEach((at, i) => {
      last[i] = at.get(t) ?? last[i];
      if (last[i]) for (const k of SERIES) row[k] += last[i][k] ?? 0;
    });
    out.samples.push(row);
  }
  out.peak_open = out.samples.reduce((max, x) => Math.max(max, x.open), 0);
  Object.assign(out, commonHold(inputs, out.samples, offset));

  for (const key of ['latency_ms', 'late_ms']) {
    const counts = new Array(LATENCY_BOUNDS.length).fill(0);
    for (const s of inputs) s[key]?.counts?.forEach((c, i) => (counts[i] += c));
    out[key] = { bounds: LATENCY_BOUNDS, counts };
  }
  out.memory = {};
  for (const k of MEMORY) out.memory[k] = inputs.reduce((sum, s) => sum + (s.memory?.[k] ?? 0), 0);
  const peaks = inputs.reduce((sum, s) => sum + (s.peak_open ?? 0), 0);
  out.bytes_per_connection = peaks > 0 ? Math.round((out.memory.rss_at_peak_open - out.memory.rss_start) / peaks) : null;
  const nofiles = inputs.map((s) => s.nofile).filter((n) => typeof n === 'number');
  out.nofile = nofiles.length ? Math.min(...nofiles) : null;
  return out;
}

// Parsed JSON of a file, or null when it cannot be read or parsed.
export function readSummary(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node merge.mjs holder-1.json [holder-2.json ...] > merged.json\n');
    process.exit(2);
  }
  const merged = mergeSummaries(files.map(readSummary));
  process.stdout.write(`${JSON.stringify(merged, null, 2)}\n`);
  if (merged.missing) process.stderr.write(`merge: ${merged.missing} of ${files.length} inputs missing or invalid\n`);
  process.exit(merged.inputs ? 0 : 1);
}
