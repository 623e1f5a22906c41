// The lab's topology (topology.txt at the repository's root): its HAProxy
// instances, their frontends, the backend services, the other services it
// needs and the limits every stage shares, as the runner reads them too
// (scripts/lib/common.sh topology). Every reader takes instances and
// frontends from here, so another instance or frontend is a row, not code.
import { readFileSync } from 'node:fs';

export const TOPOLOGY_FILE = new URL('../../../topology.txt', import.meta.url);

// A frontend's protocol: https = TLS ends at HAProxy (its bind says ssl).
export const PROTOCOLS = ['http', 'https'];
// What each kind of row must and may say (numbers are whole numbers).
const KINDS = {
  instance: { needs: ['service', 'runtime_api', 'master_cli'], numbers: ['index'] },
  frontend: { needs: ['instance', 'protocol', 'port'], numbers: ['port'] },
  backend: { needs: ['proxy', 'template', 'slots', 'port'], numbers: ['slots', 'port'] },
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
  return {
    instances,
    frontends: of('frontend'),
    backends: of('backend'),
    services: of('service'),
    limits: Object.fromEntries(of('limit').map((r) => [r.name, r.max])),
  };
}

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
