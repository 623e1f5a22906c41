// A scenario run's cost per step, read from its docker CLI calls (the log
// scripts/step-cost.sh's shim writes: "START_MS DURATION_MS ARGS" per call).
// A step starts at the runner's first `exec ... candidate.cfg` (apply_config:
// the new config checked in HAProxy's container) after the previous step's
// load tool was removed (`rm -f ID...`), and ends with that removal. Its load
// is the longest `wait ID...` in it (the runner waiting for the tool's
// replicas); the rest is the runner's fixed cost: applying the config, reading
// the evidence before and after, starting and removing the tool.

const ID = /^[0-9a-f]{64}$/;

export function parseCalls(text) {
  return text.split('\n').filter(Boolean).map((line) => {
    const m = /^(\d+) (\d+) (.*)$/.exec(line);
    if (!m) throw new Error(`not a "START_MS DURATION_MS ARGS" line: ${line.slice(0, 80)}`);
    return { start: Number(m[1]), ms: Number(m[2]), args: m[3].trim().split(/\s+/) };
  }).sort((a, b) => a.start - b.start);
}

const isApply = (c) => c.args[0] === 'exec' && c.args.join(' ').includes('candidate.cfg');
const isToolRemoval = (c) => c.args[0] === 'rm' && c.args[1] === '-f' && c.args.length > 2 && c.args.slice(2).every((a) => ID.test(a));
const isToolWait = (c) => c.args[0] === 'wait' && c.args.length > 1 && c.args.slice(1).every((a) => ID.test(a));

// stepCost CALLS: [{ step, wallMs, toolMs, fixedMs, calls }] in order.
export function stepCost(calls) {
  const steps = [];
  let open = null;
  for (const c of calls) {
    if (!open && isApply(c)) open = { start: c.start, calls: [] };
    if (!open) continue;
    open.calls.push(c);
    if (isToolRemoval(c)) {
      const end = c.start + c.ms;
      const toolMs = Math.max(0, ...open.calls.filter(isToolWait).map((w) => w.ms));
      const wallMs = end - open.start;
      steps.push({ step: steps.length + 1, wallMs, toolMs, fixedMs: wallMs - toolMs, calls: open.calls.length });
      open = null;
    }
  }
  return steps;
}

const s = (ms) => (ms / 1000).toFixed(2);

// costTable CALLS: the steps, then the run's totals, as text.
export function costTable(calls) {
  const steps = stepCost(calls);
  if (steps.length === 0) return 'no step found (no config applied and load tool removed in these calls)';
  const mean = (k) => steps.reduce((t, x) => t + x[k], 0) / steps.length;
  const wall = calls.length ? Math.max(...calls.map((c) => c.start + c.ms)) - calls[0].start : 0;
  return [
    'step  wall (s)  load tool (s)  fixed (s)  docker calls',
    ...steps.map((x) => `${String(x.step).padStart(4)}  ${s(x.wallMs).padStart(8)}  ${s(x.toolMs).padStart(13)}  ${s(x.fixedMs).padStart(9)}  ${String(x.calls).padStart(12)}`),
    `fixed cost per step: ${s(mean('fixedMs'))} s on average (${s(Math.min(...steps.map((x) => x.fixedMs)))}-${s(Math.max(...steps.map((x) => x.fixedMs)))} s), over ${steps.length} steps`,
    `docker calls: ${calls.length} in the run (${Math.round(mean('calls'))} a step); the run's docker activity spans ${s(wall)} s`,
  ].join('\n');
}
