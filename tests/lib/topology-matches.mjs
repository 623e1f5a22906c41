// The topology table (topology.txt) against the files where each setting
// lives: haproxy/haproxy.cfg (runtime API socket, frontends' binds, backends'
// server templates), compose.yaml (`docker compose config --format json` on
// stdin: services, the master CLI's -S, healthchecks, published ports, the
// backends' PORT) and prometheus/prometheus.yml (the backends' scrape port).
// Prints one line per difference; exit 1 if any.
//   docker compose config --format json | node tests/lib/topology-matches.mjs
import { readFileSync } from 'node:fs';
import { TOPOLOGY } from '../../scripts/labctl/core/topology.mjs';
// HAProxy's environment variables read as the config's defaults (process 1's).
import { withDefaults } from '../../scripts/labctl/plan/listeners.mjs';

// sections CONFIG → {"frontend fe_main": [lines...], ...}, comments dropped.
export function sections(text) {
  const out = {};
  let current = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trimEnd();
    if (line.trim() === '') continue;
    if (/^\S/.test(line)) { current = line.trim().split(/\s+/).slice(0, 2).join(' '); out[current] = []; continue; }
    if (current) out[current].push(line.trim().split(/\s+/));
  }
  return out;
}

// mismatches TOPOLOGY CFG COMPOSE PROMETHEUS LAUNCHER → ["what differs", ...]
// (LAUNCHER: haproxy/processes.sh's text).
export function mismatches(topology, cfg, compose, prometheus, launcher) {
  const problems = [];
  const haproxy = sections(cfg);
  const services = compose.services ?? {};
  const flat = (value) => (Array.isArray(value) ? value.join(' ') : String(value ?? ''));
  for (const i of topology.instances) {
    const global = (haproxy.global ?? []).map((w) => withDefaults(w.join(' ')));
    if (!global.some((l) => l.startsWith(`stats socket ipv4@${i.runtime_api} `))) {
      problems.push(`instance ${i.name}: haproxy.cfg's global has no "stats socket ipv4@${i.runtime_api}" (its runtime_api)`);
    }
    const service = services[i.service];
    if (!service) { problems.push(`instance ${i.name}: compose has no service "${i.service}"`); continue; }
    if (!flat(service.command).includes(`-S ${i.master_cli}`)) problems.push(`instance ${i.name}: ${i.service}'s command lacks "-S ${i.master_cli}" (its master_cli)`);
    // Its processes: the launcher runs them, asks each in the healthcheck,
    // and shifts their ports by the table's port_step.
    if (i.processes !== undefined) {
      if (!flat(service.command).includes('processes.sh haproxy')) problems.push(`instance ${i.name}: ${i.service}'s command does not run haproxy/processes.sh (its processes=${i.processes})`);
      if (!flat(service.healthcheck?.test).includes('processes.sh health')) problems.push(`instance ${i.name}: ${i.service}'s healthcheck is not "processes.sh health" (every process)`);
      if (String(service.environment?.[i.processes]) === 'undefined') problems.push(`instance ${i.name}: compose does not pass ${i.processes} to ${i.service}`);
      const step = /^readonly PORT_STEP=(\d+)$/m.exec(launcher ?? '')?.[1];
      if (Number(step) !== i.port_step) problems.push(`instance ${i.name}: port_step=${i.port_step}, haproxy/processes.sh's PORT_STEP is ${step}`);
    }
  }
  for (const f of topology.frontends) {
    const binds = (haproxy[`frontend ${f.name}`] ?? []).filter((w) => w[0] === 'bind').flatMap((w) => w[1].split(','));
    if (!binds.some((a) => a.endsWith(`:${f.port}`))) problems.push(`frontend ${f.name}: haproxy.cfg binds ${binds.join(', ') || 'nothing'}, the table says port ${f.port}`);
    const tls = (haproxy[`frontend ${f.name}`] ?? []).some((w) => w[0] === 'bind' && w.includes('ssl'));
    if (tls !== (f.protocol === 'https')) problems.push(`frontend ${f.name}: the table says ${f.protocol}, haproxy.cfg's bind ${tls ? 'has' : 'lacks'} "ssl"`);
    const service = services[topology.instances.find((i) => i.name === f.instance)?.service];
    if (service && !(service.ports ?? []).some((p) => Number(p.target) === f.port)) problems.push(`frontend ${f.name}: compose publishes no port with target ${f.port}`);
  }
  for (const b of topology.backends) {
    const templates = (haproxy[`backend ${b.proxy}`] ?? []).filter((w) => w[0] === 'server-template').map((w) => w.slice(1, 4).join(' '));
    const want = `${b.template} ${b.slots} ${b.name}:${b.port}`;
    if (!templates.includes(want)) problems.push(`backend ${b.name}: haproxy.cfg's backend ${b.proxy} has server-template ${templates.join(', ') || 'none'}, the table says "${want}"`);
    const service = services[b.name];
    if (!service) { problems.push(`backend ${b.name}: compose has no service "${b.name}"`); continue; }
    if (String(service.environment?.PORT) !== String(b.port)) problems.push(`backend ${b.name}: compose sets PORT=${service.environment?.PORT}, the table says ${b.port}`);
    if (!flat(service.healthcheck?.test).includes(`127.0.0.1:${b.port}/`)) problems.push(`backend ${b.name}: its healthcheck does not ask port ${b.port}`);
    if (!new RegExp(`port: ${b.port}\\b`).test(prometheus)) problems.push(`backend ${b.name}: prometheus.yml scrapes no "port: ${b.port}"`);
  }
  for (const s of topology.services) if (!services[s.name]) problems.push(`service ${s.name}: compose has no such service`);
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = mismatches(TOPOLOGY, readFileSync('haproxy/haproxy.cfg', 'utf8'), JSON.parse(readFileSync(0, 'utf8')),
    readFileSync('prometheus/prometheus.yml', 'utf8'), readFileSync('haproxy/processes.sh', 'utf8'));
  for (const p of problems) console.log(p);
  if (problems.length === 0) {
    console.log(`topology.txt matches haproxy.cfg, compose.yaml and prometheus.yml: ${TOPOLOGY.instances.length} instance(s), `
      + `${TOPOLOGY.frontends.length} frontend(s), ${TOPOLOGY.backends.length} backends`);
  }
  process.exitCode = problems.length ? 1 : 0;
}
