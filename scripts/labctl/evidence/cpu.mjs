// CPU time per container over a step, from the kernel's cgroup accounting
// (scripts/lib/cgroups.sh container_cpu: cgroup v1 cpuacct.usage or v2
// cpu.stat usage_usec, every process of the container). The runner reads
// every container before and after the step (cpu-before.txt, cpu-after.txt),
// the load tools' every second while they run (cpu-samples.txt: a container
// that ends takes its cgroup with it) and, when a step asks for it, the
// idle rate before the load (cpu-idle.txt, then cpu-before.txt: what the
// healthchecks and scrapes cost, taken out of the step's own CPU).

const UNIT_NS = { ns: 1, us: 1000 };

// "AT_MS NAME VALUE UNIT" lines → [{at, name, ns}].
export function parseCpuReadings(text) {
  if (text === null || text === undefined) return null;
  return text.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 4 && UNIT_NS[f[3]])
    .map(([at, name, value, unit]) => ({ at: Number(at), name, ns: Number(value) * UNIT_NS[unit] }))
    .filter((r) => Number.isFinite(r.at) && Number.isFinite(r.ns));
}

// Each container's earliest (or, LATEST true, latest) reading in READINGS.
const readingBy = (readings, latest) => {
  const by = new Map();
  for (const r of readings ?? []) {
    const seen = by.get(r.name);
    if (!seen || (latest ? seen.at <= r.at : seen.at > r.at)) by.set(r.name, r);
  }
  return by;
};

// stepCpu({idle, before, after, samples}, startedMs) → {NAME: {ns, seconds,
// percent, idle_ns_per_s, net_ns}} or null when nothing was read. A container
// read before and after: the difference; one born during the step (a load
// tool): its last reading, over the time since the step started. net_ns: ns
// less the idle rate over the same time (null when no idle rate was read).
export function stepCpu({ idle, before, after, samples }, startedMs) {
  if (!before && !after && !samples) return null;
  const start = readingBy(before, false);
  const end = readingBy([...(after ?? []), ...(samples ?? [])], true);
  const idleStart = readingBy(idle, false);
  const cpu = {};
  for (const [name, last] of end) {
    const first = start.get(name);
    const ns = first ? last.ns - first.ns : last.ns;
    const seconds = ((first ? last.at - first.at : last.at - startedMs) / 1000);
    if (!(seconds > 0) || ns < 0) continue;
    const i = idleStart.get(name);
    const idleRate = i && first && first.at > i.at ? ((first.ns - i.ns) / (first.at - i.at)) * 1000 : null;
    cpu[name] = {
      ns,
      seconds,
      percent: (ns / 1e9 / seconds) * 100,
      idle_ns_per_s: idleRate,
      net_ns: idleRate === null ? null : Math.max(0, ns - idleRate * seconds),
    };
  }
  return Object.keys(cpu).length ? cpu : null;
}

// The load's steady window in SAMPLES: from a quarter into the load (the load
// tool's first sample + SECONDS ÷ 4) to its planned end, as [from, to] ms,
// or null when the load tool left no sample.
export function steadyWindow(samples, isTool, seconds) {
  if (!samples?.length || !(seconds > 0)) return null;
  const toolAt = samples.filter((r) => isTool(r.name)).map((r) => r.at);
  if (toolAt.length === 0) return null;
  const start = Math.min(...toolAt);
  return [start + (seconds * 1000) / 4, start + seconds * 1000 + 500];
}

// Each name's first and last reading in [from, to] at least a second apart.
export function firstAndLast(readings, [from, to]) {
  const byName = new Map();
  for (const r of readings.filter((x) => x.at >= from && x.at <= to)) {
    if (!byName.has(r.name)) byName.set(r.name, []);
    byName.get(r.name).push(r);
  }
  const out = new Map();
  for (const [name, rs] of byName) {
    rs.sort((a, b) => a.at - b.at);
    if (rs.at(-1).at - rs[0].at >= 1000) out.set(name, [rs[0], rs.at(-1)]);
  }
  return out;
}

// loadRates SAMPLES TOOLSERVICE SECONDS [WINDOW] → {NAME: cores} | null:
// every container's CPU rate while the load ran steadily (steadyWindow), or
// over WINDOW ([from, to] ms: a holder's ramp), from the per-second samples
// (cpu-samples.txt). A step's whole-time average would count the idle start
// and the tail (waiting for the last answers) and hide a component that was
// saturated while the load ran.
export function loadRates(samples, isTool, seconds, ramp = null) {
  const window = ramp ?? steadyWindow(samples, isTool, seconds);
  if (!window || !samples?.length) return null;
  const rates = {};
  for (const [name, [a, b]] of firstAndLast(samples, window)) {
    if (b.ns >= a.ns) rates[name] = (b.ns - a.ns) / 1e6 / (b.at - a.at);
  }
  return Object.keys(rates).length ? rates : null;
}

// "AT_MS NAME N periods|throttled" lines of the same files → [{at, name,
// periods, throttled}]: a container's CFS periods so far and those in which
// it used up its quota (scripts/probes/cgroup-cpu.sh), one reading
// per time both were read.
export function parseThrottleReadings(text) {
  if (text === null || text === undefined) return null;
  const byKey = new Map();
  for (const [at, name, value, unit] of text.split('\n').map((l) => l.trim().split(/\s+/))) {
    if (unit !== 'periods' && unit !== 'throttled') continue;
    const key = `${at} ${name}`;
    if (!byKey.has(key)) byKey.set(key, { at: Number(at), name });
    byKey.get(key)[unit] = Number(value);
  }
  return [...byKey.values()].filter((r) => Number.isFinite(r.at) && Number.isFinite(r.periods) && Number.isFinite(r.throttled));
}

// throttledShares THROTTLE SAMPLES TOOLSERVICE SECONDS [WINDOW] → {NAME:
// {periods, throttled, pct}} | null: the share of each container's CFS
// periods, over the same window as loadRates, in which it used up its quota. A
// container whose work outgrows its quota is throttled in nearly every
// period it runs; one under it, rarely. Containers with no quota count no
// periods and are left out.
export function throttledShares(throttle, samples, isTool, seconds, ramp = null) {
  const window = ramp ?? steadyWindow(samples, isTool, seconds);
  if (!window || !throttle?.length) return null;
  const out = {};
  for (const [name, [a, b]] of firstAndLast(throttle, window)) {
    const periods = b.periods - a.periods;
    const throttled = b.throttled - a.throttled;
    if (periods > 0 && throttled >= 0) out[name] = { periods, throttled, pct: (throttled / periods) * 100 };
  }
  return Object.keys(out).length ? out : null;
}
