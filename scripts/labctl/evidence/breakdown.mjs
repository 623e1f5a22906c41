// Where a connection's CPU goes, from the host sampler's raw lines
// (scripts/probes/host-cpu.mjs, host-sampler.txt) and the step's container
// map (containers.txt): for each window of a holder's step (the ramp, the
// hold, the ramp-down), the cores each part of the lab used, and per
// connection opened, held or closed.
import { rampWindow } from './holder.mjs';

// parseHostSampler TEXT → {tick, stat: [{at, v}], cg: Map(id → [{at, ns}]),
// proc: Map(pid → {comm, rs: [{at, ticks}]}), haproxy: Map(pid → {id, rs}),
// other: Map(pid → {comm, rs}), otherEveryMs: how often other lines come} | null.
export function parseHostSampler(text) {
  if (typeof text !== 'string' || !text.trim()) return null;
  const out = { tick: 100, stat: [], cg: new Map(), proc: new Map(), haproxy: new Map(), other: new Map(), otherEveryMs: 10000 };
  const push = (map, key, extra, r) => {
    if (!map.has(key)) map.set(key, { ...extra, rs: [] });
    map.get(key).rs.push(r);
  };
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === '#' && f[1] === 'ticks_per_second' && Number(f[2]) > 0) out.tick = Number(f[2]);
    if (f[0] === '#' && f[1] === 'other_every_ms' && Number(f[2]) > 0) out.otherEveryMs = Number(f[2]);
    const at = Number(f[0]);
    if (!Number.isFinite(at)) continue;
    if (f[1] === 'stat' && f.length >= 10) out.stat.push({ at, v: f.slice(2, 10).map(Number) });
    else if (f[1] === 'cg' && f.length === 4) {
      if (!out.cg.has(f[2])) out.cg.set(f[2], []);
      out.cg.get(f[2]).push({ at, ns: Number(f[3]) });
    } else if (f[1] === 'proc' && f.length === 5) push(out.proc, f[3], { comm: f[2] }, { at, ticks: Number(f[4]) });
    else if (f[1] === 'haproxy' && f.length === 5) push(out.haproxy, f[3], { id: f[2] }, { at, ticks: Number(f[4]) });
    else if (f[1] === 'other' && f.length === 5) push(out.other, f[3], { comm: f[2] }, { at, ticks: Number(f[4]) });
  }
  return out.stat.length ? out : null;
}

// parseContainers TEXT ("ID|NAME|SERVICE|PROBE_OF" lines) → Map(id → {name, service, probe}).
export function parseContainers(text) {
  const out = new Map();
  for (const line of (text ?? '').split('\n')) {
    const [id, name, service = '', probe = ''] = line.trim().split('|');
    if (/^[0-9a-f]{64}$/.test(id ?? '')) out.set(id, { name, service, probe });
  }
  return out;
}

// The parts a connection's CPU is split into, in the table's order.
export const PARTS = [
  ['haproxy', 'HAProxy'],
  ['backends', 'backends'],
  ['load', 'load tool (holders)'],
  ['probes', "the runner's probes and samplers"],
  ['services', 'lab services (Prometheus, exporters)'],
  ['docker', 'Docker (dockerd, containerd, shims)'],
  ['rest', 'the rest (runc, the runner, the kernel outside any process)'],
];

function partOf({ service, probe }, services) {
  if (probe) return 'probes';
  if (services.haproxy.has(service)) return 'haproxy';
  if (services.backends.has(service)) return 'backends';
  if (services.load.has(service)) return 'load';
  return 'services';
}

// The change of a series [{at, value}] over [from, to]: the readings nearest
// inside the window (at least 1 s apart), as {delta, seconds} or null; SLACK
// ms either side (a reading each second: 600).
function over(rs, value, [from, to], slack = 600) {
  const inside = rs.filter((r) => r.at >= from - slack && r.at <= to + slack);
  if (inside.length < 2) return null;
  const a = inside[0], b = inside.at(-1);
  const seconds = (b.at - a.at) / 1000;
  return seconds >= 1 && value(b) >= value(a) ? { delta: value(b) - value(a), seconds } : null;
}

// The processes outside the containers (the sampler's other lines), by name
// (a kernel thread's without its CPU: kworker/1:2 → kworker), most CPU
// first: [[name, cores]] for the most that used at least 0.005 cores over
// the window (SECONDS long: a process that lived through part of it counts
// its CPU over the whole window, not over its own life).
const MOST_OTHERS = 4;
function othersOver(host, window, seconds) {
  const by = new Map();
  for (const { comm, rs } of host.other?.values() ?? []) {
    const c = over(rs, (r) => r.ticks, window, host.otherEveryMs + 600);
    if (!c) continue;
    const name = comm.split('/')[0];
    by.set(name, (by.get(name) ?? 0) + c.delta / host.tick / Math.max(c.seconds, seconds));
  }
  return [...by].filter(([, cores]) => cores >= 0.005).sort((a, b) => b[1] - a[1]).slice(0, MOST_OTHERS);
}

// coresOver HOST CONTAINERS SERVICES WINDOW → {machine, kernel: {system,
// softirq}, parts: {part: cores}, processes: [cores per HAProxy process],
// others: [[name, cores]] (othersOver)} | null.
export function coresOver(host, containers, services, window) {
  const m = over(host.stat, (r) => r.v[0] + r.v[1] + r.v[2] + r.v[5] + r.v[6] + r.v[7], window);
  if (!m) return null;
  const tick = (t, seconds) => t / host.tick / seconds;
  const sys = over(host.stat, (r) => r.v[2], window), soft = over(host.stat, (r) => r.v[5] + r.v[6], window);
  const parts = Object.fromEntries(PARTS.map(([k]) => [k, 0]));
  // Each container's and process's CPU over the machine's seconds: one that
  // lived through part of the window (runc's init for each docker exec, for
  // a second) used its CPU in it, not at that pace throughout (over its own
  // second, runc's init read 0.15 cores through a 205 s ramp).
  const seconds = (c) => Math.max(c.seconds, m.seconds);
  let known = true;
  for (const [id, rs] of host.cg) {
    const c = over(rs, (r) => r.ns, window);
    if (!c) continue;
    const who = containers.get(id);
    if (!who) { known = false; continue; }
    parts[partOf(who, services)] += c.delta / 1e9 / seconds(c);
  }
  for (const { rs } of host.proc.values()) {
    const c = over(rs, (r) => r.ticks, window);
    if (c) parts.docker += tick(c.delta, seconds(c));
  }
  const machine = tick(m.delta, m.seconds);
  parts.rest = Math.max(0, machine - PARTS.slice(0, -1).reduce((t, [k]) => t + parts[k], 0));
  const processes = [...host.haproxy.values()].map(({ rs }) => over(rs, (r) => r.ticks, window))
    .filter(Boolean).map((c) => tick(c.delta, seconds(c)));
  return {
    seconds: m.seconds, machine, parts, processes, all_known: known, others: othersOver(host, window, m.seconds),
    kernel: { system: sys ? tick(sys.delta, sys.seconds) : null, softirq: soft ? tick(soft.delta, soft.seconds) : null },
  };
}

// The holders' windows (epoch ms) and what happened in each: the ramp
// (connections opened), the hold (connections held), the ramp-down
// (connections answered and closed).
export function holderWindows(merged) {
  if (!merged?.samples?.length || !Number.isFinite(merged.started_at_ms)) return {};
  const s = merged.samples, t0 = merged.started_at_ms;
  const out = {};
  const ramp = rampWindow(merged);
  if (ramp) {
    const key = merged.max_unconfirmed > 0 ? 'confirmed_total' : 'opened_total';
    const at = (ms) => s.reduce((best, x) => (t0 + x.t * 1000 <= ms ? x : best), s[0]);
    out.ramp = { window: ramp, connections: at(ramp[1])[key] - at(ramp[0])[key] };
  }
  const h = merged.hold_window;
  if (h && h.to_t > h.from_t && h.min_open > 0) out.hold = { window: [t0 + h.from_t * 1000, t0 + h.to_t * 1000], connections: h.min_open };
  const first = s.find((x) => x.ok_total > 0), last = s.find((x) => x.ok_total > 0 && x.ok_total + x.failed_total >= merged.planned);
  if (first && last && last.t > first.t) {
    const before = s[s.indexOf(first) - 1] ?? first;
    out.drain = { window: [t0 + before.t * 1000, t0 + last.t * 1000], connections: last.ok_total - before.ok_total };
  }
  return out;
}

// The closes a second the holders asked for: each connection is held as
// long (held_s), so the ramp-down goes at the ramp's pace (RAMP_RATE), and
// no faster than RAMP_DOWN spreads them. Summaries without held_s asked for
// RAMP_DOWN's alone.
function drainAsked(merged, rampRate) {
  const spread = merged.ramp_down > 0 ? merged.planned / merged.ramp_down : Infinity;
  const asked = merged.held_s === undefined ? spread : Math.min(spread, rampRate ?? Infinity);
  return Number.isFinite(asked) ? asked : null;
}

// breakdownOf {host, containers, services, merged} → {ramp, hold, drain}: each
// window's cores per part, µs per connection opened/closed (ramp, drain) or
// µs per connection held per second (hold), HAProxy's per process.
export function breakdownOf({ host, containers, services, merged }) {
  if (!host || !merged) return null;
  const out = {};
  const windows = holderWindows(merged);
  const rateOf = (w) => w.connections / ((w.window[1] - w.window[0]) / 1000);
  for (const [name, w] of Object.entries(windows)) {
    const c = coresOver(host, containers, services, w.window);
    if (!c || !(w.connections > 0)) continue;
    const rate = name === 'hold' ? w.connections : rateOf(w);
    const us = (cores) => (cores * 1e6) / rate;
    out[name] = {
      connections: w.connections, seconds: (w.window[1] - w.window[0]) / 1000,
      rate: name === 'hold' ? null : rate,
      // What the holders asked for, connections/s: opens at RAMP_UP's pace;
      // answers at the pace the ramp opened, at most RAMP_DOWN's.
      asked_rate: name === 'ramp' ? (merged.ramp_up > 0 ? merged.planned / merged.ramp_up : null)
        : name === 'drain' ? drainAsked(merged, windows.ramp?.connections > 0 ? rateOf(windows.ramp) : null) : null,
      machine_cores: c.machine, cores: c.parts, us: Object.fromEntries(Object.entries(c.parts).map(([k, v]) => [k, us(v)])),
      machine_us: us(c.machine),
      kernel_cores: c.kernel,
      haproxy_processes: c.processes.length,
      haproxy_process_cores: c.processes.length ? { min: Math.min(...c.processes), max: Math.max(...c.processes) } : null,
      others: c.others, others_every_s: host.otherEveryMs / 1000,
      all_known: c.all_known,
    };
  }
  return Object.keys(out).length ? out : null;
}
