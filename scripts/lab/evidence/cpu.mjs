// CPU time per container over a step, from the kernel's cgroup accounting
// (scripts/lib/common.sh container_cpu: cgroup v1 cpuacct.usage or v2
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

// loadRates SAMPLES TOOLSERVICE SECONDS → {NAME: cores} | null: every
// container's CPU rate while the load ran steadily, from the per-second
// samples (cpu-samples.txt): from a quarter into the load (the load tool's
// first sample + SECONDS ÷ 4) to its planned end. A step's whole-time average
// would count the idle start and the tail (waiting for the last answers) and
// hide a component that was saturated while the load ran.
export function loadRates(samples, isTool, seconds) {
  if (!samples?.length || !(seconds > 0)) return null;
  const toolAt = samples.filter((r) => isTool(r.name)).map((r) => r.at);
  if (toolAt.length === 0) return null;
  const start = Math.min(...toolAt);
  const [from, to] = [start + (seconds * 1000) / 4, start + seconds * 1000 + 500];
  const byName = new Map();
  for (const r of samples.filter((x) => x.at >= from && x.at <= to)) {
    if (!byName.has(r.name)) byName.set(r.name, []);
    byName.get(r.name).push(r);
  }
  const rates = {};
  for (const [name, rs] of byName) {
    rs.sort((a, b) => a.at - b.at);
    const [a, b] = [rs[0], rs[rs.length - 1]];
    if (b.at - a.at >= 1000 && b.ns >= a.ns) rates[name] = (b.ns - a.ns) / 1e6 / (b.at - a.at);
  }
  return Object.keys(rates).length ? rates : null;
}
