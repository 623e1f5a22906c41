// What saturated in a step: each component's CPU used against the CPU it may
// use (its allowance: Docker's cpus/cpuset as its cgroup enforces it, read
// back by scripts/lib/cgroups.sh container_allowance), the load tool's own
// lateness (requests it could not send at the rate), HAProxy's queue and
// errors. A figure measures HAProxy only if HAProxy is what saturated.
import { isServiceContainer } from '../core/topology.mjs';
import { cpuAllowanceCores } from '../../../prometheus/container-exporter.mjs';

// A component at this share of its allowance or more is saturated: CFS
// quotas and a busy event loop both read a little under 100%.
export const SATURATED_PCT = 85;
// A component under a CFS quota that used it up in this share of the periods
// it ran or more is saturated, whatever its CPU time read: at a ceiling its
// CPU time can read just under SATURATED_PCT while its throttling says it
// ran out.
export const THROTTLED_PCT = 50;
// Cores busy this share of their time or more (/proc/stat: every process's
// work and the kernel's) are saturated: a dedicated core's kernel work for
// HAProxy's packets is in no cgroup, so HAProxy's own busy % reads low while
// its core is full.
export const CORE_SATURATED_PCT = 90;
// The load tool is late when it sent under this share of the offered rate.
export const SENT_PCT = 95;

// "NAME key=value..." lines (cpu-allowance.txt) → {NAME: {cores, machine}}:
// the CPU each container may use, by the rule the dashboard's exporter
// applies (prometheus/container-exporter.mjs cpuAllowanceCores: the smallest
// of cpus, the CFS quota, the cpuset and the machine's cores), the quota
// being the one its cgroup enforces (read back), not only what Docker was told.
export function parseAllowance(text) {
  if (text === null || text === undefined) return null;
  const out = {};
  for (const line of text.split('\n')) {
    const [name, ...fields] = line.trim().split(/\s+/);
    if (!name || name.startsWith('#')) continue;
    const v = Object.fromEntries(fields.map((f) => f.split('=')));
    const machine = Number(v.machine_cores) > 0 ? Number(v.machine_cores) : null;
    const cores = cpuAllowanceCores({
      NanoCpus: Number(v.nano_cpus) || 0, CpuQuota: Number(v.cfs_quota_us) || 0, CpuPeriod: Number(v.cfs_period_us) || 0,
      CpusetCpus: v.cpuset === '-' ? '' : v.cpuset,
    }, machine);
    if (cores !== null) out[name] = { cores, machine, cpuset: v.cpuset && v.cpuset !== '-' ? v.cpuset : null };
  }
  return out;
}

const round = (v, digits = 2) => Number(v.toFixed(digits));

// components CPUTIME ALLOWANCE TOPOLOGY TOOLSERVICE → [{name, role, cores,
// allowance, pct}]: each HAProxy instance and each backend replica on its
// own (a Node replica runs its JavaScript on one thread: at most one core),
// the load tool's replicas together.
function components(cores, allowance, topology, toolService, throttled) {
  const haproxy = topology.instances.map((i) => i.service);
  const backends = topology.backends.map((b) => b.name);
  const machine = Math.max(0, ...Object.values(allowance).map((a) => a.machine ?? 0)) || null;
  const out = [];
  const add = (name, role, names) => {
    const used = names.reduce((t, n) => t + cores[n], 0);
    const counted = names.map((n) => throttled?.[n]).filter(Boolean);
    const periods = counted.reduce((t, c) => t + c.periods, 0);
    const throttledPeriods = counted.reduce((t, c) => t + c.throttled, 0);
    const throttledPct = periods > 0 ? (throttledPeriods / periods) * 100 : null;
    let cap = names.reduce((t, n) => t + (allowance[n]?.cores ?? machine ?? 0), 0);
    if (role === 'load tool' && machine) cap = Math.min(cap, machine);
    if (role === 'backend') cap = Math.min(cap, 1);
    out.push({ name, role, cores: used, allowance: cap || null, pct: cap ? (used / cap) * 100 : null, throttledPct, periods, throttledPeriods });
  };
  const names = Object.keys(cores);
  for (const n of names.filter((x) => isServiceContainer(x, haproxy))) add(n, 'HAProxy', [n]);
  const tool = names.filter((x) => isServiceContainer(x, [toolService]));
  if (tool.length) add(toolService, 'load tool', tool);
  for (const n of names.filter((x) => isServiceContainer(x, backends))) add(n, 'backend', [n]);
  return { parts: out, machine };
}

// A component is saturated when its CPU time reached SATURATED_PCT of its
// allowance or its quota ran out in THROTTLED_PCT of its periods.
const isSaturated = (p) => (p.pct !== null && p.pct >= SATURATED_PCT) || (p.throttledPct !== null && p.throttledPct >= THROTTLED_PCT);

// haproxySaturated MEASURED → whether a step's HAProxy was saturated by its
// numbers (runs recorded before the throttling was read: its busy % alone).
export const haproxySaturated = (m) => isSaturated({ pct: m.haproxy_busy_pct ?? null, throttledPct: m.haproxy_throttled_pct ?? null });

// saturationOf {cores (by container, while the load ran), throttled (by
// container, evidence/cpu.mjs throttledShares), allowance, topology,
// toolService, offered, load, haproxy: {max_queue, errors}, during (the
// window's words)} → the step's
// numbers (haproxy_cores, haproxy_allowance, haproxy_busy_pct,
// haproxy_throttled_pct, loadgen_cores, backend_cores, box_busy_pct,
// sent_pct) and {saturation: {saturated: [names], text}}.
// coreSets: {haproxy: pct, rest: pct} | null: how busy HAProxy's dedicated
// cores and the other cores were (/proc/stat), when HAProxy had cores of its
// own; then the machine's limit is the other cores', not all of them.
export function saturationOf({ cores, throttled = null, hostCores = null, coreSets = null, allowance, topology, toolService, offered, load, haproxy = {}, during = 'while the load ran' }) {
  const none = { haproxy_cores: null, haproxy_allowance: null, haproxy_busy_pct: null, haproxy_throttled_pct: null, loadgen_cores: null,
    haproxy_core_busy_pct: null, rest_core_busy_pct: null,
    backend_cores: null, box_busy_pct: null, sent_pct: null, saturation: null };
  if (!cores || !allowance) return none;
  const { parts, machine } = components(cores, allowance, topology, toolService, throttled);
  const sum = (role, key) => {
    const xs = parts.filter((p) => p.role === role);
    return xs.length ? xs.reduce((t, p) => t + (p[key] ?? 0), 0) : null;
  };
  const all = Object.values(cores).reduce((t, c) => t + c, 0);
  const haproxyCores = sum('HAProxy', 'cores');
  const haproxyCap = sum('HAProxy', 'allowance');
  const sentPct = offered > 0 && Number.isFinite(load.req_rate) ? (load.req_rate / offered) * 100 : null;
  const late = (sentPct !== null && sentPct < SENT_PCT) || (load.requests > 0 && load.dropped > 0.01 * load.requests);
  // The machine: its containers, or all its busy time when that was sampled
  // (/proc/stat: the kernel's network work and the daemons no cgroup counts).
  const boxPct = machine ? (Math.max(all, hostCores ?? 0) / machine) * 100 : null;
  const haproxyCoreFull = coreSets !== null && coreSets.haproxy >= CORE_SATURATED_PCT;
  const restFull = coreSets !== null && coreSets.rest >= CORE_SATURATED_PCT;
  const busy = (role) => parts.some((p) => p.role === role && isSaturated(p)) || (role === 'HAProxy' && haproxyCoreFull);
  const boxBusy = coreSets !== null ? restFull : boxPct !== null && boxPct >= 90;
  const saturated = parts.filter(isSaturated)
    .map((p) => (p.role === 'load tool' ? `${p.name} (load tool)` : p.name));
  // Late with HAProxy saturated: its workers all waited on HAProxy (the
  // queue of an open model); late without: the load tool's own limit.
  if (late && !busy('HAProxy')) saturated.push(`${toolService} could not keep the rate`);
  if (haproxyCoreFull && !parts.some((p) => p.role === 'HAProxy' && isSaturated(p))) saturated.push('HAProxy\'s core (its kernel work included)');
  if (boxBusy) saturated.push(coreSets !== null ? 'the other services\' cores' : 'the machine\'s cores');
  const describe = (p) => `${p.role === 'HAProxy' || p.role === 'backend' ? p.name.replace(/^.*-(\w[\w-]*-\d+)$/, '$1') : p.name} ` +
    `${round(p.cores)} of ${p.allowance === null ? '?' : round(p.allowance)} core${p.allowance === 1 ? '' : 's'}` +
    `${p.pct === null ? '' : ` (${Math.round(p.pct)}%`}` +
    `${p.throttledPct === null ? '' : `${p.pct === null ? ' (' : ', '}quota used up in ${Math.round(p.throttledPct)}% of ${p.periods} periods`}` +
    `${p.pct === null && p.throttledPct === null ? '' : ')'}`;
  const queue = [haproxy.max_queue > 0 ? `queued ${haproxy.max_queue}` : '', haproxy.errors > 0 ? `${haproxy.errors} errors` : '']
    .filter(Boolean).join(', ');
  const waited = late && busy('HAProxy') ? ': its workers all waited on HAProxy' : '';
  const text = `${during}: ${parts.map(describe).join('; ')}; all containers ${round(all)} of ${machine ?? '?'} cores` +
    `${hostCores === null ? '' : `; the whole machine ${round(hostCores)} of ${machine ?? '?'} cores (/proc/stat)`}` +
    `${coreSets === null ? '' : `; HAProxy's own core${haproxyCap === 1 ? '' : 's'} ${Math.round(coreSets.haproxy)}% busy, the others ${Math.round(coreSets.rest)}% (/proc/stat, the kernel's work included)`}` +
    `${sentPct === null ? '' : `; ${toolService} sent ${Math.round(sentPct)}% of the offered rate${load.dropped > 0 ? ` (${load.dropped} dropped${waited})` : ''}`}` +
    `${queue ? `; HAProxy ${queue}` : ''}`;
  return {
    haproxy_cores: haproxyCores,
    haproxy_allowance: haproxyCap,
    haproxy_busy_pct: haproxyCores !== null && haproxyCap ? (haproxyCores / haproxyCap) * 100 : null,
    haproxy_throttled_pct: sum('HAProxy', 'periods') > 0 ? (sum('HAProxy', 'throttledPeriods') / sum('HAProxy', 'periods')) * 100 : null,
    loadgen_cores: sum('load tool', 'cores'),
    backend_cores: sum('backend', 'cores'),
    box_busy_pct: boxPct,
    haproxy_core_busy_pct: coreSets?.haproxy ?? null,
    rest_core_busy_pct: coreSets?.rest ?? null,
    sent_pct: sentPct,
    // HAProxy's ceiling: HAProxy saturated while neither the load tool nor
    // the machine was.
    // The client side's limit: the load tool's own, its lateness, or (HAProxy on cores of its own) the other cores full.
    saturation: { saturated, haproxy: busy('HAProxy') && !busy('load tool') && !boxBusy, client: busy('load tool') || (late && !busy('HAProxy')) || restFull, late, text },
  };
}
