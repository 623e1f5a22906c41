// The lab's topology (topology.txt at the repository's root): its HAProxy
// instances, their frontends, the backend services, the other services it
// needs and the limits every stage shares. The runner reads the table as
// expandProcesses writes it (a run's topology.txt, cli.mjs topology: read by
// scripts/lib/env.sh topology_text). Every reader takes instances and
// frontends from here, so another instance or frontend is a row, not code.
import { readFileSync } from 'node:fs';
import { PORT_RANGE, portProblem } from './ports.mjs';

export const TOPOLOGY_FILE = new URL('../../../topology.txt', import.meta.url);

// A frontend's protocol: https = TLS ends at HAProxy (its bind says ssl).
export const PROTOCOLS = ['http', 'https'];
// What each kind of row must and may say (numbers are whole numbers; ports
// and the ports of HOST:PORT addresses from 1 to 65535).
const KINDS = {
  instance: { needs: ['service', 'runtime_api', 'master_cli'], numbers: ['index', 'process', 'port_step'], addresses: ['runtime_api', 'master_cli'] },
  frontend: { needs: ['instance', 'protocol', 'port'], numbers: ['port'], ports: ['port'] },
  backend: { needs: ['proxy', 'template', 'slots', 'port'], numbers: ['slots', 'port'], ports: ['port'] },
  service: { needs: [], numbers: [] },
  limit: { needs: ['max'], numbers: ['max'] },
};

// parseRows TEXT SOURCE → [{kind, name, ...settings}]; an Error naming the line.
function parseRows(text, source) {
  const rows = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    const [kind, name, ...settings] = line.split(/\s+/);
    const where = `${source}:${i + 1}`;
    const rule = KINDS[kind];
    if (!rule) throw new Error(`${where}: unknown kind "${kind}" (use ${Object.keys(KINDS).join(', ')})`);
    if (!name || name.includes('=')) throw new Error(`${where}: a ${kind} row needs a name`);
    const row = { kind, name };
    for (const setting of settings) {
      const m = /^([a-z_]+)=(\S+)$/.exec(setting);
      if (!m) throw new Error(`${where}: "${setting}" is not KEY=VALUE`);
      row[m[1]] = rule.numbers.includes(m[1]) ? Number(m[2]) : m[2];
      if (rule.numbers.includes(m[1]) && !/^\d+$/.test(m[2])) throw new Error(`${where}: ${m[1]} must be a whole number, found "${m[2]}"`);
    }
    const missing = rule.needs.filter((k) => row[k] === undefined);
    if (missing.length) throw new Error(`${where}: ${kind} ${name} needs ${missing.join(', ')}`);
    const ports = [...(rule.ports ?? []).map((k) => [k, row[k]]), ...(rule.addresses ?? []).map((k) => [k, String(row[k]).split(':').pop()])];
    for (const [key, port] of ports) if (portProblem(port)) throw new Error(`${where}: ${key}: ${portProblem(port)}`);
    if (kind === 'frontend' && !PROTOCOLS.includes(row.protocol)) throw new Error(`${where}: protocol must be ${PROTOCOLS.join(' or ')}, found "${row.protocol}"`);
    rows.push(row);
  });
  return rows;
}

// parseTopology TEXT [SOURCE] → {instances, frontends, backends, services,
// limits: {name: max}}; checked: names unique per kind, every frontend on a
// known instance, at least one instance.
export function parseTopology(text, source = 'topology.txt') {
  const rows = parseRows(text, source);
  const of = (kind) => rows.filter((r) => r.kind === kind);
  // A frontend is named within its instance (N processes run one config).
  const key = (r) => (r.kind === 'frontend' ? `${r.name} on ${r.instance}` : r.name);
  for (const kind of Object.keys(KINDS)) {
    const names = of(kind).map(key);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`${source}: ${kind} ${twice} is listed twice`);
  }
  const instances = of('instance');
  if (instances.length === 0) throw new Error(`${source}: no instance row (the lab needs an HAProxy)`);
  for (const f of of('frontend')) {
    if (!instances.some((i) => i.name === f.instance)) throw new Error(`${source}: frontend ${f.name} is on instance ${f.instance}, which has no row`);
  }
  for (const i of instances) {
    if (i.processes !== undefined && i.port_step === undefined) throw new Error(`${source}: instance ${i.name} has processes=${i.processes} but no port_step`);
    // Process 1 of its own container unless the row says otherwise (expandProcesses).
    i.process ??= 1;
    i.container ??= i.name;
  }
  return {
    instances,
    frontends: of('frontend'),
    backends: of('backend'),
    services: of('service'),
    limits: Object.fromEntries(of('limit').map((r) => [r.name, r.max])),
  };
}

// A process's own name: the row's for process 1, NAME-pK for process K.
export const processName = (name, k) => (k === 1 ? name : `${name}-p${k}`);

// shiftPort ADDRESS STEP K: HOST:PORT of process K (haproxy/processes.sh's rule).
const shiftPort = (address, step, k) => {
  const at = address.lastIndexOf(':');
  return `${address.slice(0, at)}:${Number(address.slice(at + 1)) + step * (k - 1)}`;
};

// checkShiftedPorts ROW N: an Error naming ROW's count variable when its
// last process's runtime API or master CLI would be past the last port.
function checkShiftedPorts(row, n) {
  const highest = Math.max(...[row.runtime_api, row.master_cli].map((a) => Number(a.split(':').pop())));
  const last = highest + row.port_step * (n - 1);
  if (last > PORT_RANGE[1]) {
    const most = Math.floor((PORT_RANGE[1] - highest) / row.port_step) + 1;
    throw new Error(`${row.processes}=${n}: process ${n} of ${row.name} would listen on port ${last} (topology.txt: ${highest} + ${row.port_step} a process), `
      + `past ${PORT_RANGE[1]}: set ${row.processes} to at most ${most}`);
  }
}

// expandProcesses TEXT COUNTS → the table with each instance row that says
// processes=VAR written out as COUNTS[VAR] rows, one per HAProxy process of
// its container (haproxy/processes.sh): process K is NAME-pK, with its own
// runtime API and master CLI (the ports + port_step x (K - 1)) and every
// frontend of NAME (one config, the same listening ports). The rows written
// out say process=K and container=NAME instead of processes=VAR, so a run
// folder's copy reads the same whatever .env says later. A missing count is 1.
export function expandProcesses(text, counts = {}) {
  const rows = parseRows(text, 'topology.txt');
  const expanded = new Map();
  for (const r of rows) {
    if (r.kind !== 'instance' || r.processes === undefined) continue;
    const n = Number(counts[r.processes] ?? 1);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${r.processes} must be a whole number from 1, found "${counts[r.processes]}"`);
    checkShiftedPorts(r, n);
    expanded.set(r.name, { row: r, n });
  }
  const out = [];
  for (const raw of text.split('\n')) {
    const [kind, name, ...settings] = raw.replace(/#.*$/, '').trim().split(/\s+/);
    const instanceOf = kind === 'frontend' ? /(?:^|\s)instance=(\S+)/.exec(raw.replace(/#.*$/, ''))?.[1] : undefined;
    if (kind === 'instance' && expanded.has(name)) {
      const { row, n } = expanded.get(name);
      for (let k = 1; k <= n; k++) {
        const keep = settings.filter((kv) => !/^(processes|runtime_api|master_cli)=/.test(kv));
        out.push(['instance', processName(name, k), ...keep, `runtime_api=${shiftPort(row.runtime_api, row.port_step, k)}`,
          `master_cli=${shiftPort(row.master_cli, row.port_step, k)}`, `process=${k}`, `container=${name}`].join(' '));
      }
    } else if (kind === 'frontend' && expanded.has(instanceOf)) {
      for (let k = 1; k <= expanded.get(instanceOf).n; k++) out.push(raw.replace(`instance=${instanceOf}`, `instance=${processName(instanceOf, k)}`));
    } else {
      out.push(raw);
    }
  }
  return out.join('\n');
}

// containersOf TOPOLOGY: the instances that stand for their container (its
// first process): memory, CPU, the kernel's counters and the log are the
// container's, counted once.
export const containersOf = (topology) => topology.instances.filter((i) => i.process === 1);

// The lab's own table.
export const TOPOLOGY = parseTopology(readFileSync(TOPOLOGY_FILE, 'utf8'));

// frontendsOf TOPOLOGY [INSTANCE]: the frontends (of one instance).
export function frontendsOf(topology, instance) {
  return topology.frontends.filter((f) => instance === undefined || f.instance === instance);
}

// backendNamed TOPOLOGY SERVICE: the backend row of a compose service.
export function backendNamed(topology, service) {
  const row = topology.backends.find((b) => b.name === service);
  if (!row) throw new Error(`${service} is not a backend of the topology (${topology.backends.map((b) => b.name).join(', ')})`);
  return row;
}

// Compose names a container PROJECT-SERVICE-N: is NAME a container of one of SERVICES?
export const isServiceContainer = (name, services) => services.some((service) => name.endsWith(`-${service}-${name.split('-').pop()}`) && /-\d+$/.test(name));
