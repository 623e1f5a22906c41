// Checks the lab's compose rules on `docker compose config --format json`
// (read from stdin): prints one line per broken rule, exits 1 if any.
//   no container_name (it breaks --scale); every image pinned (a tag, never
//   :latest); ports published on 127.0.0.1 only; a memory limit everywhere;
//   every depended-on service has a healthcheck and is waited for healthy,
//   or is a one-shot job (no healthcheck, never restarted: certs) waited for
//   to complete successfully; Grafana's anonymous visitors are Viewers.
import { readFileSync } from 'node:fs';

const config = JSON.parse(readFileSync(0, 'utf8'));
const problems = [];
const services = config.services ?? {};

for (const [name, svc] of Object.entries(services)) {
  if (svc.container_name) problems.push(`${name}: container_name breaks --scale`);
  const image = svc.image ?? '';
  const tag = image.includes(':') ? image.slice(image.lastIndexOf(':') + 1) : '';
  if (tag === '' || tag === 'latest' || tag.includes('/')) problems.push(`${name}: image "${image}" is not pinned to a version`);
  for (const port of svc.ports ?? []) {
    if (port.published && port.host_ip !== '127.0.0.1') {
      problems.push(`${name}: port ${port.published} is published on ${port.host_ip ?? 'all interfaces'}, not 127.0.0.1`);
    }
  }
  const environment = svc.environment ?? {};
  if (environment.GF_AUTH_ANONYMOUS_ENABLED === 'true' && environment.GF_AUTH_ANONYMOUS_ORG_ROLE !== 'Viewer') {
    problems.push(`${name}: anonymous visitors get the role ${environment.GF_AUTH_ANONYMOUS_ORG_ROLE ?? 'Viewer (unset)'}, not Viewer`);
  }
  const memory = svc.deploy?.resources?.limits?.memory ?? svc.mem_limit;
  if (!memory) problems.push(`${name}: no memory limit`);
  for (const [dep, how] of Object.entries(svc.depends_on ?? {})) {
    const oneShot = !services[dep]?.healthcheck?.test && !services[dep]?.restart;
    if (oneShot && how.condition === 'service_completed_successfully') continue;
    if (how.condition !== 'service_healthy') problems.push(`${name}: depends_on ${dep} without condition: service_healthy`);
    if (!services[dep]?.healthcheck?.test) problems.push(`${name}: depends on ${dep}, which has no healthcheck`);
  }
}
const networks = Object.keys(config.networks ?? {});
if (networks.length !== 1) problems.push(`expected one user-defined network, found: ${networks.join(', ')}`);

for (const p of problems) console.log(p);
if (problems.length > 0) process.exit(1);
console.log(`${Object.keys(services).length} services follow the rules`);
