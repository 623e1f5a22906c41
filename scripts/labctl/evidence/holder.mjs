// The holder load tool's evidence in a step folder: the replicas' summaries
// (holder-N.json), merged the way loadgen/holder/merge.mjs does. Same
// interface as k6.mjs: read(stepDir, step).
import { mergeSummaries } from '../../../loadgen/holder/merge.mjs';
import { readSummaries } from './files.mjs';

// What read() measures, by the metrics.mjs names.
export const MEASURES = ['requests', 'successful', 'failed', 'seconds', 'connections', 'client_held', 'bytes_holder', 'ramp_rate', 'late_p99_ms'];

// read STEPDIR STEP → {measured (connections, not requests) | null, client
// (the holders' own memory), merged (the merged summary), versions, files,
// unreadable}.
export function read(stepDir, step) {
  const { summaries, files, unreadable } = readSummaries(stepDir, 'holder');
  const holders = summaries.filter((s) => s.tool === 'holder');
  const merged = holders.length > 0 ? mergeSummaries(holders) : null;
  return {
    measured: merged ? measure(merged, step) : null,
    // The clients did not exist before the step: their own RSS growth per connection.
    client: { bytes_holder: merged?.bytes_per_connection ?? null },
    merged,
    // The holder is the lab's own code, on the lab's node (the runner's versions.env).
    versions: {},
    files,
    unreadable,
  };
}

function measure(merged, step) {
  return {
    requests: merged.planned,
    successful: merged.ok,
    failed: merged.failed,
    seconds: (merged.ended_at_ms - merged.started_at_ms) / 1000,
    connections: step.connections ?? merged.planned,
    client_held: merged.hold_window?.min_open ?? null,
    ramp_rate: rampRate(merged),
    late_p99_ms: lateP99(merged),
  };
}

// lateP99 MERGED: how late after its planned end the 99th percentile answer
// in time came, as the upper bound (ms) of its histogram bucket (late_ms,
// powers of 2); null for summaries recorded before it. An answer later than
// the grace is a failure, not in it.
export function lateP99(merged) {
  const h = merged.late_ms;
  const total = h?.counts?.reduce((t, c) => t + c, 0) ?? 0;
  if (total === 0) return null;
  let seen = 0;
  const at = h.counts.findIndex((c) => (seen += c) >= 0.99 * total);
  const bound = h.bounds[at];
  return typeof bound === 'number' ? bound : null;
}

// rampReached MERGED → {first, reached, key}: the merged holders' first
// sample and the first that held 99% of the planned connections (null when
// none did). Paced holders (max_unconfirmed) count the connections whose
// headers came back through HAProxy, not the ones the kernel completed.
function rampReached(merged) {
  const samples = merged.samples ?? [];
  const key = merged.max_unconfirmed > 0 ? 'confirmed_total' : 'open';
  const reached = samples.find((x) => x[key] >= 0.99 * merged.planned);
  if (!reached || samples.length === 0 || reached.t <= samples[0].t) return null;
  return { first: samples[0], reached, key };
}

// rampRate MERGED: connections opened per second on the way up: 99% of the
// planned ones ÷ the seconds from the first sample to the first that held
// them (null when they never were): with paced holders, the pace HAProxy
// took them at.
export function rampRate(merged) {
  const ramp = rampReached(merged);
  return ramp ? Math.round(ramp.reached[ramp.key] / (ramp.reached.t - ramp.first.t)) : null;
}

// rampWindow MERGED → [from, to] (epoch ms): the ramp rampRate measures, for
// the CPU each component used while the connections were opened (null when
// the ramp never reached the level or the summaries have no start time).
export function rampWindow(merged) {
  const ramp = rampReached(merged);
  if (!ramp || !Number.isFinite(merged.started_at_ms)) return null;
  return [merged.started_at_ms + ramp.first.t * 1000, merged.started_at_ms + ramp.reached.t * 1000];
}
