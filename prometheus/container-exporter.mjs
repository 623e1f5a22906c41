// Memory and CPU of every container of this compose project, in Prometheus
// text format, read from the Docker API (the mounted socket): what cAdvisor
// would give, with no image beyond the lab's node one and no dependencies.
// A name cAdvisor has means what it means there, so a query written for
// cAdvisor reads the same figure here: container_memory_usage_bytes is the
// usage with the page cache, container_memory_working_set_bytes the usage
// less inactive file pages (what docker stats shows); the labels name (the
// container's name), image, and service (compose's; cAdvisor has none).
// cAdvisor's id (the container's cgroup path) is left out: the Docker API
// does not give it.
//   GET /metrics  container_memory_working_set_bytes, container_memory_usage_bytes,
//                 container_cpu_usage_seconds_total, container_cpu_allowance_cores
//   GET /healthz
//   GET /resolve?name=NAME   NAME's IPv4 addresses as this node's resolver
//                 gives them (on a Swarm's overlay: the embedded DNS, each
//                 node its own), sorted, one line, "-" for none
// Importing the file (a test) starts nothing: the server runs only when node
// runs this file (DOCKER_SOCKET and PORT are read at import).
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

const SOCKET = process.env.DOCKER_SOCKET ?? '/var/run/docker.sock';
const PORT = Number(process.env.PORT ?? 9102);
// Docker's CFS period when a container sets a quota but no period.
const DEFAULT_CPU_PERIOD_US = 100000;

const FAMILIES = [
  ['container_memory_working_set_bytes', 'gauge', 'Memory used by the container less its inactive file pages (as docker stats and cAdvisor show it).'],
  ['container_memory_usage_bytes', 'gauge', 'Memory used by the container, page cache included (as cAdvisor names it).'],
  ['container_cpu_usage_seconds_total', 'counter', 'CPU time used by the container.'],
  ['container_cpu_allowance_cores', 'gauge',
    'CPU the container may use, in cores: the least of its --cpus, CPU quota/period, cpuset size and the machine\'s cores.'],
];

function docker(path) {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath: SOCKET, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`docker ${path}: HTTP ${res.statusCode}`));
        // A container being removed can answer with an empty or cut body.
        try {
          return resolve(JSON.parse(body));
        } catch (err) {
          return reject(new Error(`docker ${path}: ${err.message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`docker ${path}: timeout`)));
    req.on('error', reject);
  });
}

// The project is our own container's compose label, so a second lab (the
// tests' haproxy-lab-test) is measured apart; on a Swarm, the stack's
// namespace label (scripts/swarm.sh deploy): [label, value].
const PROJECT_LABELS = ['com.docker.compose.project', 'com.docker.stack.namespace'];
let project;
async function ownProject() {
  if (!project) {
    const self = await docker(`/containers/${os.hostname()}/json`);
    const key = PROJECT_LABELS.find((k) => self.Config.Labels?.[k]) ?? PROJECT_LABELS[0];
    project = [key, self.Config.Labels?.[key]];
  }
  return project;
}

// identity LABELS NAME → {service, name}: compose's service and the
// container's name; a Swarm task's as compose would name it
// (STACK-SERVICE-SLOT, a global task's node id for its slot), so one host
// and a Swarm read alike.
export function identity(labels = {}, name = '') {
  const task = labels['com.docker.swarm.task.name'];
  const namespace = labels['com.docker.stack.namespace'];
  if (labels['com.docker.compose.service'] || !task || !namespace) {
    return { service: labels['com.docker.compose.service'] ?? '', name };
  }
  const service = (labels['com.docker.swarm.service.name'] ?? '').replace(`${namespace}_`, '');
  const slot = task.split('.')[1] ?? '';
  return { service, name: `${namespace}-${service}-${slot}` };
}

// The engine's cores (GET /info NCPU), asked once: the machine's size when a
// container's stats lack online_cpus. null, logged, when the engine does not say.
let engineCores;
async function engineCpus() {
  if (!engineCores) {
    engineCores = await docker('/info').then((info) => info.NCPU || null, (err) => {
      console.error(`container-exporter: ${err.message}`);
      return null;
    });
  }
  return engineCores;
}

// How many cores a cpuset names ("0", "0-1", "0,2-3"); null when empty or
// not a cpuset.
export function cpusetCores(cpuset) {
  const text = String(cpuset ?? '').trim();
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(text)) return null;
  const cores = new Set();
  for (const part of text.split(',')) {
    const [first, last = first] = part.split('-').map(Number);
    for (let core = first; core <= last; core += 1) cores.add(core);
  }
  return cores.size || null;
}

// The CPU, in cores, a container with this HostConfig may use on a machine
// of machineCores: the least of --cpus (NanoCpus), the CFS quota over its
// period and the cpuset's size, each when set, and of the machine's cores;
// null when nothing is known.
export function cpuAllowanceCores(hostConfig, machineCores) {
  const { NanoCpus = 0, CpuQuota = 0, CpuPeriod = 0, CpusetCpus = '' } = hostConfig ?? {};
  const limits = [
    NanoCpus > 0 ? NanoCpus / 1e9 : null,
    CpuQuota > 0 ? CpuQuota / (CpuPeriod > 0 ? CpuPeriod : DEFAULT_CPU_PERIOD_US) : null,
    cpusetCores(CpusetCpus),
    machineCores > 0 ? machineCores : null,
  ].filter((cores) => cores !== null);
  return limits.length ? Math.min(...limits) : null;
}

function label(value) {
  return String(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

// Each container's inspect, read again after INSPECT_TTL_MS: only its
// HostConfig is used, which changes only with docker update, and reading it
// on every scrape doubled the exporter's calls to the engine (dozens of
// containers in a large connections run).
const INSPECT_TTL_MS = 60000;
const inspects = new Map(); // container id -> { at, inspect }

function inspectOf(id, now, orNull) {
  const kept = inspects.get(id);
  if (kept && now - kept.at < INSPECT_TTL_MS) return Promise.resolve(kept.inspect);
  return orNull(`/containers/${id}/json`).then((inspect) => {
    if (inspect) inspects.set(id, { at: now, inspect });
    return inspect;
  });
}

// A container's stats and inspect, each null when the container is gone.
function readContainer(c, now) {
  const orNull = (path) => docker(path).catch(() => null);
  return Promise.all([orNull(`/containers/${c.Id}/stats?stream=false&one-shot=true`), inspectOf(c.Id, now, orNull)])
    .then(([stats, inspect]) => ({ c, stats, inspect }));
}

// A container's sample of each family, by name ({} for a container that is
// not running: its stats have no memory usage).
async function samples({ c, stats, inspect }) {
  if (!stats?.memory_stats?.usage) return {};
  const { service, name } = identity(c.Labels, (c.Names?.[0] ?? c.Id).replace(/^\//, ''));
  const l = `name="${label(name)}",image="${label(c.Image ?? '')}",service="${label(service)}"`;
  const m = stats.memory_stats;
  const inactive = m.stats?.total_inactive_file ?? m.stats?.inactive_file ?? 0;
  const out = {
    container_memory_working_set_bytes: `{${l}} ${Math.max(0, m.usage - inactive)}`,
    container_memory_usage_bytes: `{${l}} ${m.usage}`,
    container_cpu_usage_seconds_total: `{${l}} ${(stats.cpu_stats?.cpu_usage?.total_usage ?? 0) / 1e9}`,
  };
  // No inspect (removed meanwhile): no allowance rather than the machine's.
  const cores = inspect && cpuAllowanceCores(inspect.HostConfig, stats.cpu_stats?.online_cpus || (await engineCpus()));
  if (cores) out.container_cpu_allowance_cores = `{${l}} ${cores}`;
  return out;
}

export async function metrics() {
  const [key, value] = await ownProject();
  const filters = encodeURIComponent(JSON.stringify({ label: [`${key}=${value}`] }));
  const containers = await docker(`/containers/json?filters=${filters}`);
  const now = Date.now();
  for (const id of inspects.keys()) if (!containers.some((c) => c.Id === id)) inspects.delete(id);
  const all = await Promise.all(containers.map((c) => readContainer(c, now).then(samples)));
  // Each family's lines together, after its HELP and TYPE.
  const lines = FAMILIES.flatMap(([family, type, help]) => [
    `# HELP ${family} ${help}`,
    `# TYPE ${family} ${type}`,
    ...all.filter((s) => s[family]).map((s) => `${family}${s[family]}`),
  ]);
  return `${lines.join('\n')}\n`;
}

// resolved NAME → "ADDR ADDR..." (sorted) or "-".
export async function resolved(name) {
  try {
    const found = await lookup(name, { all: true, family: 4 });
    return found.map((a) => a.address).sort().join(' ') || '-';
  } catch {
    return '-';
  }
}

function handle(req, res) {
  if (req.url === '/healthz') {
    res.end('ok');
    return;
  }
  const asked = /^\/resolve\?name=([a-z0-9][a-z0-9_.-]*)$/i.exec(req.url ?? '');
  if (asked) {
    resolved(asked[1]).then((text) => res.end(`${text}\n`));
    return;
  }
  if (req.url !== '/metrics') {
    res.statusCode = 404;
    res.end('not found\n');
    return;
  }
  metrics().then((text) => {
    res.setHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    res.end(text);
  }, (err) => {
    res.statusCode = 503;
    res.end(`${err.message}\n`);
  });
}

function serve() {
  const server = http.createServer(handle);
  server.listen(PORT, () => console.log(`container-exporter listening on :${PORT} (docker socket ${SOCKET})`));
  // A scrape must never take the exporter down: log and keep serving.
  process.on('uncaughtException', (err) => console.error(`container-exporter: ${err.stack ?? err}`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) serve();
