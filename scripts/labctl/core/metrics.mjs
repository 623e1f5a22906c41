// The metrics a report knows, one entry each: the only list of them. The
// order is the order of summary.json's rows (measured, min, max) and of the
// CSV's columns after the plan's.
//
// Fields:
//   label   the table's and report.md's name for it
//   unit    what one of it is (for readers of this file; the format follows
//           from count and from the ratio's unit ×)
//   count   a whole number of things: shown as an integer. (Repeated runs of
//           a step are averaged all the same, like every metric; summary.json
//           keeps their min and max.)
//   csv     always a column of summary.csv (besides the plan's columns)
//   group   where report.md's step details name it:
//             load         the load and HAProxy's counters (their own sentences)
//             accept_queue the accept queue on both sides (their own sentences)
//             long_lived   long-lived and held connections: one line of those measured
//             cpu_cost     CPU per request and TLS handshakes: one line of those measured
//             derived      not one number per run: cpu (per container), ratio
//                          (to another step, computed when the report is built)
//   about   how it is measured
// The frontends HAProxy's counters are read from, and the first one, whose
// listening socket's backlog the report shows (topology.txt).
import { TOPOLOGY, isServiceContainer } from './topology.mjs';
import { RESOLUTION } from '../../../loadgen/lib/histogram.mjs';
const FRONTENDS = TOPOLOGY.frontends.map((f) => f.name).join(' + ');
const FIRST = TOPOLOGY.frontends[0];
const entry = (group, label, unit, about, { count = false, csv = false } = {}) => ({ group, label, unit, about, count, csv });
const load = (label, unit, about, flags) => entry('load', label, unit, about, flags);
const acceptQueue = (label, unit, about) => entry('accept_queue', label, unit, about, { count: true, csv: true });
const longLived = (label, unit, about, flags) => entry('long_lived', label, unit, about, flags);
const COUNTED = { count: true, csv: true };
const cpuCost = (label, unit, about, flags) => entry('cpu_cost', label, unit, about, flags);
// The latency histograms' resolution, in % (loadgen/lib/histogram.mjs).
const WIDTH_PCT = (RESOLUTION * 100).toFixed(1);

export const METRIC_TABLE = {
  requests: load('requests', 'requests', 'requests (or connections) the load tool sent, summed over replicas', COUNTED),
  successful: load('successful', 'requests', 'requests that got a response that is not an error', COUNTED),
  failed: load('failed', 'requests', 'requests that failed (timeouts, resets, 5xx)', COUNTED),
  seconds: load('seconds', 's', 'the longest replica\'s run'),
  hits_per_sec: load('hits/sec', 'requests/s', 'successful ÷ seconds', { csv: true }),
  p50_ms: load('p50 ms (all replicas)', 'ms', `median latency of every replica's requests together, from their latency histograms added up (buckets ${WIDTH_PCT}% wide: within ${WIDTH_PCT}%); ` +
    'evidence recorded before them: one replica\'s own figure, none for several (report.md names the worst replica\'s apart)', { csv: true }),
  p95_ms: load('p95 ms (all replicas)', 'ms', '95th percentile latency of every replica\'s requests together, read as the median is', { csv: true }),
  p99_ms: load('p99 ms (all replicas)', 'ms', '99th percentile latency of every replica\'s requests together, read as the median is', { csv: true }),
  max_sessions: load('max sessions', 'sessions', `${FRONTENDS}'s smax in HAProxy's show stat`, COUNTED),
  max_queue: load('max queue', 'requests', 'qmax of the be_* backends, added up', COUNTED),
  errors: load('errors', 'errors', `${FRONTENDS}'s ereq plus every backend's econ and eresp`, COUNTED),
  maxconn_reached: load('maxconn reached', 'times', 'MaxconnReached in HAProxy\'s show info', COUNTED),
  listen_overflows: load('listen overflows', 'SYNs', 'TcpExt.ListenOverflows of HAProxy\'s kernel, after − before', COUNTED),
  backlog: acceptQueue('backlog (ss)', 'connections', `${FIRST.name} :${FIRST.port}'s listening backlog, read back with ss`),
  accept_queue_max: acceptQueue('accept queue (max sampled)', 'connections', 'the longest accept queue sampled while the load ran'),
  listen_drops: acceptQueue('listen drops', 'SYNs', 'TcpExt.ListenDrops of HAProxy\'s kernel, after − before'),
  syncookies: acceptQueue('SYN cookies sent', 'SYNs', 'TcpExt.SyncookiesSent of HAProxy\'s kernel, after − before'),
  syn_retrans: acceptQueue('client SYN retransmits', 'SYNs', 'TcpExt.TCPSynRetrans of every client replica\'s kernel, summed'),
  connects_retried: acceptQueue('connects after ≥1 s', 'connects', 'connects that took 1 s or more (at least one SYN retransmitted)'),
  req_rate: longLived('completed requests/sec', 'requests/s', 'requests ÷ seconds, failed ones included'),
  mean_ms: longLived('mean ms', 'ms', 'mean latency of the load\'s requests (the floor probes left out)'),
  floor_ms: longLived('floor ms (sleep-0 probes)', 'ms', 'mean latency of the sleep-0 probes run beside the load'),
  mean_above_floor_ms: longLived('mean − floor ms', 'ms', 'what the backend\'s sleep adds above what the machine adds'),
  dropped: longLived('dropped (k6 could not start them)', 'requests', 'k6\'s dropped_iterations: an open model\'s arrivals it had no VU for', { count: true }),
  failure_pct: longLived('failed %', '%', 'failed ÷ requests × 100'),
  littles_conns: longLived('rate × mean time (Little)', 'connections', 'offered RATE (else the completed rate) × mean latency'),
  haproxy_req_rate: longLived('HAProxy requests/sec (received)', 'requests/s', 'the requests HAProxy\'s load frontends received (their req_tot, sampled every second; CumReq, which also counts the probes\' runtime API sessions, where a frontend is TCP) over the window its cores were read in while the load ran (a quarter into it to its end), taken at that window\'s very ends: the rate HAProxy took requests in'),
  plateau_conns: longLived('HAProxy conns (plateau)', 'connections', 'median of HAProxy\'s sampled connections over the load\'s second half', { count: true }),
  backend_plateau: longLived('HAProxy→backend conns (plateau)', 'connections', 'the same, HAProxy to the backends: its container\'s established sockets to the backends\' ports; past 20,000 sockets in its table, its processes\' own sessions on the backends (show stat scur)', { count: true }),
  haproxy_conns_peak: longLived('HAProxy conns (peak)', 'connections', 'the most connections HAProxy held in a sample', { count: true }),
  backend_conns_peak: longLived('HAProxy→backend conns (peak)', 'connections', 'the most connections to the backends in a sample', { count: true }),
  sd_aborts: longLived('SD aborts (HAProxy log)', 'sessions', 'log lines whose termination state starts SD (server aborted the data phase)', { count: true }),
  cd_aborts: longLived('CD aborts (HAProxy log)', 'sessions', 'log lines whose termination state starts CD (client aborted the data phase)', { count: true }),
  connections: longLived('target connections', 'connections', 'the connections the step asked the holders for', { count: true }),
  client_held: longLived('held by clients (whole hold)', 'connections', 'the fewest connections the holders kept open during the common hold', { count: true }),
  haproxy_held_min: longLived('HAProxy conns (least in the hold)', 'connections', 'the fewest connections HAProxy held in a sample taken during the holders\' common hold (all processes): a connection the clients count as open may still wait in HAProxy\'s accept queue', { count: true }),
  bytes_haproxy: longLived('HAProxy bytes/conn', 'bytes', 'HAProxy\'s memory growth (its cgroup, page cache excluded) ÷ held connections', { count: true }),
  bytes_backend: longLived('backend bytes/conn', 'bytes', 'the backends\' memory growth ÷ held connections', { count: true }),
  bytes_holder: longLived('client bytes/conn (RSS)', 'bytes', 'the holders\' own RSS growth per connection', { count: true }),
  bytes_kernel: longLived('kernel bytes/conn', 'bytes', 'the Docker host kernel\'s slab and TCP buffer pages (/proc/meminfo, /proc/net/sockstat) grew by, mid-hold against before the step, ÷ held connections; the containers\' cgroups are charged for part of it too', { count: true }),
  bytes_host: longLived('host bytes/conn (all)', 'bytes', 'the Docker host\'s MemAvailable fall, mid-hold against before the step, ÷ held connections: every process and the kernel', { count: true }),
  late_p99_ms: longLived('answers late p99 ms', 'ms', 'how late after its planned end the 99th percentile answer in time came (the holders\' histogram: the upper bound of its power-of-2 bucket)', { count: true }),
  ramp_rate: longLived('ramp connections/s', 'connections/s', 'the holders\' open connections at 99% of the level ÷ the seconds they took to get there (their summaries\' per-second samples); with holders that wait for HAProxy (MAX_UNCONFIRMED), the connections whose response headers came back through it', { count: true }),
  drain_rate: longLived('ramp-down connections/s', 'connections/s', 'connections answered and closed per second on the way down: the holders\' answers from the first to the last ÷ the seconds between (their per-second samples)', { count: true }),
  haproxy_us_per_conn: longLived('HAProxy µs/conn opened', 'µs', 'HAProxy\'s CPU (its containers\' cgroups, every process) over the ramp ÷ the connections opened in it (scripts/probes/host-cpu.mjs, once a second)'),
  machine_us_per_conn: longLived('machine µs/conn opened', 'µs', 'the whole machine\'s busy CPU (/proc/stat) over the ramp ÷ the connections opened in it: HAProxy, backends, clients, the kernel, Docker and the lab\'s own probes'),
  oom_killed: longLived('HAProxy OOM-killed', '0 or 1', 'docker\'s OOMKilled for HAProxy after the step', { count: true }),
  haproxy_requests: cpuCost('HAProxy requests', 'requests', `requests HAProxy counted (${FRONTENDS}'s req_tot)`, { count: true }),
  handshakes_full: cpuCost('full TLS handshakes', 'handshakes', `${FRONTENDS}'s ssl_sess: handshakes HAProxy did in full`, { count: true }),
  handshakes_resumed: cpuCost('resumed TLS handshakes', 'handshakes', `${FRONTENDS}'s ssl_reused_sess: sessions HAProxy resumed`, { count: true }),
  resumed_pct: cpuCost('resumed %', '%', 'resumed ÷ (full + resumed) TLS handshakes × 100, as HAProxy counted them'),
  haproxy_us_per_req: cpuCost('HAProxy µs/request', 'µs', 'HAProxy containers\' cgroup CPU time over the step (less their idle rate when read) ÷ the requests HAProxy counted'),
  haproxy_us_per_req_load: cpuCost('HAProxy µs/request (under load)', 'µs', 'HAProxy\'s cgroup CPU time over the window its cores were read in while the load ran ÷ the requests its load frontends received in that window (req_tot at its ends): its cost while it worked, without the step\'s idle start and tail'),
  check_us_per_req: cpuCost('second method: HAProxy µs/request', 'µs', 'wrk (not the curve\'s tool) unpaced right after the step, over the same bridge network: HAProxy\'s cgroup CPU ÷ the requests it counted (show info CumReq), read just before and after wrk'),
  check_ratio: cpuCost('under load ÷ second method', '×', 'HAProxy µs/request under the curve\'s load ÷ under the second method\'s: 1 when the two agree'),
  check_busy_pct: cpuCost('second method: HAProxy busy %', '%', 'HAProxy\'s CPU while wrk ran ÷ wrk\'s seconds ÷ its allowance × 100'),
  check_client_us_per_req: cpuCost('second method: client µs/request', 'µs', 'wrk\'s own cgroup CPU time ÷ the requests it made'),
  check_loopback_us_per_req: cpuCost('loopback: HAProxy µs/request', 'µs', 'the same wrk run again from inside HAProxy\'s network namespace: no bridge, no veth'),
  per_core_rate: cpuCost('requests/s per core', 'requests/s', '10⁶ ÷ HAProxy µs/request: what one core of HAProxy could do at that cost'),
  loops_per_req: cpuCost('HAProxy loops/request', 'loops', 'turns of HAProxy\'s event loop (show activity\'s loops, since the step\'s reload) ÷ the requests it counted: under 1, one turn served several requests'),
  backend_us_per_req: cpuCost('backends µs/request', 'µs', 'the backends\' cgroup CPU time over the step (less their idle rate when read) ÷ the requests HAProxy counted: the same plain HTTP work in steps that change neither the backends nor how HAProxy connects to them, so between such steps it moves with the machine\'s speed'),
  haproxy_over_client_backends: cpuCost('HAProxy ÷ (client + backends) CPU', '×', 'HAProxy µs/request ÷ (client µs/request + backends µs/request), all read over the same seconds: HAProxy\'s cost with the machine\'s speed in those seconds taken out, for steps a few seconds apart do not run at the same speed on a shared machine; between TLS steps the client\'s own share differs by its signature check'),
  loadgen_us_per_req: cpuCost('client µs/request', 'µs', 'the load tool\'s own cgroup CPU time ÷ its requests'),
  haproxy_cores: cpuCost('HAProxy cores used', 'cores', 'HAProxy containers\' cgroup CPU time per second while the load ran (a quarter into it to its end)'),
  haproxy_allowance: cpuCost('HAProxy allowance (cores)', 'cores', 'the CPU HAProxy may use: its cgroup\'s quota, cpus, cpuset or the machine\'s cores, the smallest, read back while the load ran'),
  haproxy_busy_pct: cpuCost('HAProxy busy % of allowance', '%', 'HAProxy cores used ÷ its allowance × 100: 85% or more is saturated'),
  haproxy_throttled_pct: cpuCost('HAProxy throttled % of periods', '%', 'the share of HAProxy\'s CFS periods (cpu.stat nr_periods) in which it used up its quota (nr_throttled) while the load ran: 50% or more is saturated, whatever its busy %'),
  loadgen_cores: cpuCost('load tool cores used', 'cores', 'the load tool\'s replicas\' cgroup CPU time per second while the load ran'),
  backend_cores: cpuCost('backend cores used', 'cores', 'the backend replicas\' cgroup CPU time per second while the load ran'),
  haproxy_core_busy_pct: cpuCost('HAProxy\'s own cores busy %', '%', 'how busy the cores HAProxy had to itself were while the load ran (/proc/stat: HAProxy and the kernel\'s work for its packets, which no cgroup counts): 90% or more is saturated'),
  rest_core_busy_pct: cpuCost('the other cores busy %', '%', 'the same for every other core (the load tools, backends, probes, Docker and the kernel\'s work for them): 90% or more, the client side is saturated'),
  box_busy_pct: cpuCost('all containers % of the machine', '%', 'every container\'s CPU while the load ran ÷ the machine\'s cores × 100'),
  sent_pct: cpuCost('sent % of offered rate', '%', 'the load tool\'s sent rate ÷ the offered RATE × 100: under 95% the load tool is late'),
  cpu: entry('derived', 'HAProxy CPU %', '%', 'CPU time of each container\'s cgroup over the step ÷ the step\'s time (cpuacct.usage, cpu.stat); the number: HAProxy\'s (else the busiest)'),
  ratio: entry('derived', 'ratio', '×', 'hits/sec ÷ the ratio_to step\'s (measured and published alike)'),
};

export const METRICS = Object.keys(METRIC_TABLE);
const inGroup = (...groups) => METRICS.filter((m) => groups.includes(METRIC_TABLE[m].group));
// One number per run, averaged over a step's runs.
export const RUN_METRICS = inGroup('load', 'accept_queue', 'long_lived', 'cpu_cost');
export const LONG_LIVED_METRICS = inGroup('long_lived');
export const CPU_COST_METRICS = inGroup('cpu_cost');
export const CSV_METRICS = METRICS.filter((m) => METRIC_TABLE[m].csv);

export function metricLabel(metric, report = {}) {
  if (metric === 'ratio' && report.ratio_to) return `ratio to ${report.ratio_to}`;
  return METRIC_TABLE[metric]?.label ?? metric;
}

// The number a metric stands for; cpu: the HAProxy container's (else the busiest).
export function scalar(values, metric) {
  const v = values?.[metric];
  if (metric === 'cpu' && v && typeof v === 'object') {
    const names = Object.keys(v);
    if (names.length === 0) return null;
    const haproxy = names.find((n) => isServiceContainer(n, TOPOLOGY.instances.map((i) => i.service)));
    return haproxy ? v[haproxy] : Math.max(...names.map((n) => v[n]));
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// Counts as integers, ratios as 1.23×, the rest with 1 decimal (2 significant below 10).
export function formatValue(metric, v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-';
  if (METRIC_TABLE[metric]?.unit === '×') return `${v.toFixed(2)}×`;
  if (METRIC_TABLE[metric]?.count) return String(Math.round(v));
  if (v === 0) return '0';
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return Math.abs(v) < 0.001 ? v.toExponential(1) : v.toPrecision(2);
}
