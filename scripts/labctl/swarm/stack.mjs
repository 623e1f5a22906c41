// The lab as a Swarm stack: `docker compose -f compose.yaml -f
// swarm/compose.swarm.yaml config --format json` (the lab's services, .env's
// values, the overlay's placement) made into a file `docker stack deploy`
// takes. Compose and Swarm read the same format differently; each rule below
// is one difference, applied to every service, so a service added to
// compose.yaml reaches Swarm with no edit here:
//   - a read-only bind mount of a file or folder of the lab (./haproxy,
//     ./backend, ...) becomes one Swarm config per file: a bind mount names a
//     path on the node that runs the task, and only the deploying machine has
//     the checkout. A config is immutable, so its name carries a hash of the
//     content: an edited file is a new config, which `stack deploy` rolls out.
//   - a writable bind mount of the lab (./results) has no Swarm form: refused.
//   - a bind mount of a host path outside the lab (the Docker socket) stays:
//     every node has it.
//   - ports are published in host mode (on the node that runs the task), and
//     on every address: Swarm has no host_ip (compose binds 127.0.0.1 only).
//     Host mode also needs no IPVS, which Swarm's routing mesh does.
//   - depends_on, network_mode: none, restart, container_name, profiles and build have
//     no Swarm form (Swarm restarts a task until what it needs answers; it
//     never builds, the image is what runs): left out. A cpuset is refused.
//   - security_opt (no-new-privileges) has no Swarm form either (docker
//     stack deploy ignores it with a warning): left out; cap_drop, read_only
//     and the pids limit do reach Swarm.
//   - a cpus limit of 0 (compose: no limit) is left out.
//   - the lab's network is an overlay, attachable (a one-off container, such
//     as a probe, can join it).
//   - a load tool (toolStack) runs once per step, sending its files to the
//     runner's collector instead of writing them to the checkout.
//   - compose's project names (name:, a network's or a volume's name:) go:
//     the stack's name prefixes them.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

// Swarm refuses a config larger than this (docker config create: 500 KB).
export const CONFIG_MAX_BYTES = 500 * 1024;
const DROPPED_KEYS = ['depends_on', 'restart', 'container_name', 'pull_policy', 'build', 'profiles', 'security_opt'];

export class StackError extends Error {}

// filesUnder PATH → every regular file under PATH (PATH itself if a file), sorted.
function filesUnder(path) {
  const stat = statSync(path);
  if (stat.isFile()) return [path];
  return readdirSync(path).sort().flatMap((name) => {
    const child = join(path, name);
    const s = statSync(child);
    if (s.isDirectory()) return filesUnder(child);
    return s.isFile() ? [child] : [];
  });
}

// configName RELPATH CONTENT → a Swarm config name: the path's words and the
// content's hash (64 characters at most with the stack's prefix).
export function configName(relPath, content) {
  const words = relPath.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 10);
  // The path's end says most (datasources_prometheus_yaml), cut at a word.
  const tail = words.length > 36 ? words.slice(-36).replace(/^[^_]*_/, '') : words;
  return `${tail}_${hash}`;
}

// checkArguments COMPOSE WITHOUT REPLICAS: a StackError for a service
// --without or --scale names that the stack cannot have.
function checkArguments(compose, without, replicas) {
  for (const name of without) {
    if (!compose.services?.[name]) throw new StackError(`--without ${name}: compose.yaml has no such service`);
  }
  for (const [name, count] of Object.entries(replicas)) {
    const mode = compose.services?.[name]?.deploy?.mode ?? 'replicated';
    if (!compose.services?.[name] || without.includes(name)) throw new StackError(`--scale ${name}: the stack has no such service`);
    if (mode !== 'replicated') throw new StackError(`--scale ${name}: a ${mode} service's tasks are not counted (only a replicated one scales)`);
    if (!Number.isInteger(count) || count < 0) throw new StackError(`--scale ${name}=${count}: give a whole number`);
  }
}

// swarmKeys NAME SERVICE → the service's keys that Swarm reads.
function swarmKeys(name, service) {
  const out = {};
  for (const [key, value] of Object.entries(service)) {
    // An empty value (compose's unset HAPROXY_CPUSET) says nothing to Swarm.
    if (DROPPED_KEYS.includes(key) || value === null || value === '') continue;
    if (key === 'cpuset') throw new StackError(`${name}: cpuset "${value}" has no Swarm form: set HAPROXY_CPUSET= (empty) for a stack`);
    if (key === 'network_mode') {
      if (value !== 'none') throw new StackError(`${name}: network_mode ${value} has no Swarm form`);
      continue;
    }
    out[key] = value;
  }
  if (out.ports) {
    out.ports = out.ports.map(({ target, published, protocol }) => ({
      mode: 'host', target, published: Number(published), protocol: protocol ?? 'tcp',
    }));
  }
  const limits = out.deploy?.resources?.limits;
  if (limits && Number(limits.cpus) === 0) delete limits.cpus;
  return out;
}

// mountsToConfigs NAME MOUNTS ROOTS CONFIGS → {volumes, configs} of the
// service: each read-only bind mount of the lab as configs (added to CONFIGS,
// the stack's), the other mounts as they are.
function mountsToConfigs(name, mounts, { hostRoot, localRoot }, configs) {
  const volumes = [];
  const used = [];
  for (const mount of mounts) {
    if (mount.type !== 'bind' || (mount.source !== hostRoot && !mount.source.startsWith(hostRoot + sep))) {
      volumes.push(mount);
      continue;
    }
    const rel = relative(hostRoot, mount.source);
    if (!mount.read_only) throw new StackError(`${name}: the writable bind mount ${rel} has no Swarm form (a node writes to its own disk)`);
    const local = join(localRoot, rel);
    for (const file of filesUnder(local)) {
      const fileRel = relative(localRoot, file);
      const content = readFileSync(file);
      if (content.length > CONFIG_MAX_BYTES) {
        throw new StackError(`${name}: ${fileRel} is ${content.length} bytes, more than a Swarm config holds (${CONFIG_MAX_BYTES})`);
      }
      const config = configName(fileRel, content);
      configs[config] = { file: join(hostRoot, fileRel) };
      const below = relative(local, file);
      used.push({ source: config, target: below === '' ? mount.target : `${mount.target}/${below.split(sep).join('/')}` });
    }
  }
  return { volumes, configs: used };
}

// swarmService NAME SERVICE ROOTS CONFIGS → SERVICE as Swarm reads it, its
// read-only bind mounts of the lab as configs (added to CONFIGS, the stack's).
function swarmService(name, service, roots, configs) {
  const out = swarmKeys(name, service);
  const mounts = mountsToConfigs(name, service.volumes ?? [], roots, configs);
  delete out.volumes;
  if (mounts.volumes.length > 0) out.volumes = mounts.volumes;
  if (mounts.configs.length > 0) out.configs = mounts.configs;
  return out;
}

// stackNetworks COMPOSE: the lab's networks as overlays, attachable (a
// one-off container, such as a probe, can join it), without compose's
// project names (the stack's name prefixes them).
function stackNetworks(compose) {
  return Object.fromEntries(Object.entries(compose.networks ?? {}).map(([name, net]) => {
    const { name: _projectName, driver: _driver, ...rest } = net ?? {};
    return [name, { ...rest, driver: 'overlay', attachable: true }];
  }));
}
// stackVolumes COMPOSE [NAMES]: the lab's volumes (only NAMES when given) as
// they are, without compose's project names.
function stackVolumes(compose, names = null) {
  return Object.fromEntries(Object.entries(compose.volumes ?? {}).filter(([name]) => !names || names.includes(name)).map(([name, volume]) => {
    const { name: _projectName, ...rest } = volume ?? {};
    return [name, rest];
  }));
}

// toStack COMPOSE {hostRoot, localRoot, without, replicas} → the stack file's object:
// COMPOSE is compose config's JSON; hostRoot is the lab's checkout as the
// host (and compose config) names it, localRoot where this process reads it.
// without: services left out (e.g. grafana when no node can have its image);
// replicas: {service: N}, the tasks a replicated service runs (compose's --scale).
export function toStack(compose, { hostRoot, localRoot = hostRoot, without = [], replicas = {} }) {
  checkArguments(compose, without, replicas);
  const configs = {};
  const services = {};
  for (const [name, service] of Object.entries(compose.services ?? {})) {
    if (without.includes(name)) continue;
    const out = swarmService(name, service, { hostRoot, localRoot }, configs);
    if (replicas[name] !== undefined) out.deploy = { ...out.deploy, replicas: replicas[name] };
    services[name] = out;
  }
  return { services, networks: stackNetworks(compose), volumes: stackVolumes(compose), configs };
}

// The script a load tool runs under on a Swarm (loadgen/send-results.sh):
// the tool's command, then its files sent to the runner's collector.
export const SEND_RESULTS = ['/bin/sh', '/loadgen/send-results.sh'];
// Where a load tool writes its files (compose: the checkout's results folder).
const RESULTS_TARGET = '/results';

// toolStack COMPOSE {hostRoot, localRoot, service, replicas, index,
// collector, collectorToken, files} → a stack file of one load tool's service, for
// one step: `docker stack deploy` of it under the lab's stack name adds the
// service beside the lab's (nothing else is touched without --prune).
// COMPOSE is compose config's JSON with the tool's profile and the step's
// environment. On a Swarm the tool:
//   - runs REPLICAS tasks once each (restart none), each told its number by
//     INDEX ({{.Task.Slot}}: 1..N, as compose's container number);
//   - writes its files in its own container (the checkout's results folder is
//     on another machine: the writable bind mount of /results becomes a
//     tmpfs) and sends them to COLLECTOR with the run's token
//     (COLLECTOR_TOKEN; loadgen/send-results.sh before its command: compose's
//     entrypoint and command; compose.swarm.yaml names one for a tool whose
//     image's command would do on one host);
//   - reads FILES ({TARGET: PATH of a file in the lab}) as configs at TARGET,
//     in place of a volume mounted at TARGET's folder: a volume is its
//     node's, and the one the certs job filled (the CA a TLS client trusts)
//     is HAProxy's node's alone.
export function toolStack(compose, { hostRoot, localRoot = hostRoot, service, replicas, index, collector, collectorToken, files = {} }) {
  const spec = compose.services?.[service];
  if (!spec) throw new StackError(`${service}: compose config has no such service (its profile not given?)`);
  const lab = spec.volumes ?? [];
  const results = lab.filter((m) => m.type === 'bind' && !m.read_only && m.target === RESULTS_TARGET);
  const replaced = lab.filter((m) => m.type === 'volume' && Object.keys(files).some((target) => target.startsWith(`${m.target}/`)));
  // Each file as a read-only bind mount of the lab: a config, as any other.
  const bound = Object.entries(files).map(([target, source]) => {
    if (!source.startsWith(`${hostRoot}/`)) throw new StackError(`${service}: ${source} is not a file of the lab (${hostRoot})`);
    return { type: 'bind', source, target, read_only: true };
  });
  const configs = {};
  const volumes = [...lab.filter((m) => !results.includes(m) && !replaced.includes(m)), ...bound];
  const out = swarmService(service, { ...spec, volumes }, { hostRoot, localRoot }, configs);
  // Its own results folder, in memory (tmpfs: mode 1777, so its user writes there).
  if (results.length > 0) out.volumes = [...(out.volumes ?? []), { type: 'tmpfs', target: RESULTS_TARGET }];
  delete out.command;
  const command = [...(spec.entrypoint ?? []), ...(spec.command ?? [])];
  if (command.length === 0) throw new StackError(`${service}: compose names no command for it: send-results.sh goes before it (compose.swarm.yaml)`);
  out.entrypoint = [...SEND_RESULTS, ...command];
  // An unset variable (null) would be the deploying shell's: left out.
  const environment = Object.fromEntries(Object.entries(spec.environment ?? {}).filter(([, v]) => v !== null && v !== undefined));
  out.environment = { ...environment, [index]: '{{.Task.Slot}}', COLLECTOR_URL: collector, COLLECTOR_TOKEN: collectorToken };
  out.deploy = { ...out.deploy, mode: 'replicated', replicas, restart_policy: { condition: 'none' } };
  const used = (out.volumes ?? []).filter((m) => m.type === 'volume').map((m) => m.source);
  return { services: { [service]: out }, networks: stackNetworks(compose), volumes: stackVolumes(compose, used), configs };
}
