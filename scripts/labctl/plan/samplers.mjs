// The arguments of HAProxy's sampler (scripts/probes/haproxy-sockets.mjs),
// one file per HAProxy container in the run folder (samplers/CONTAINER.args,
// one argument a line): the runner passes them after HOST and EVERY, as read.
import { containersOf } from '../core/topology.mjs';

// The most sockets in a container's table (in use and TIME_WAIT) for which the
// sampler reads all of it: at 20,000 one pass lasted 4.8 s at the start of a
// 60,000 ramp (the 2 cores busy), a gap in the per-second samples.
export const KERNEL_TABLE_UP_TO = 5000;

// hexPorts PORTS: "0050|01BB" (80, 443), ports as /proc/net/tcp writes them.
const hexPorts = (ports) => [...new Set(ports)].sort((a, b) => a - b)
  .map((p) => p.toString(16).toUpperCase().padStart(4, '0')).join('|');

// samplerArgs TOPOLOGY (parsed, processes expanded) → {CONTAINER: [BACKEND_PORTS,
// FRONTEND_PORTS, PROXIES, MOST, CLIENTS, NAME=ADDRESS:PORT...]}: the backends'
// ports and proxies, the container's frontends' ports (its processes share
// them), the topology's frontend names and each of its processes' runtime API.
export function samplerArgs(topology) {
  const clients = [...new Set(topology.frontends.map((f) => f.name))].sort().join('|');
  return Object.fromEntries(containersOf(topology).map((first) => [first.container, [
    hexPorts(topology.backends.map((b) => b.port)),
    hexPorts(topology.frontends.filter((f) => f.instance === first.name).map((f) => f.port)),
    topology.backends.map((b) => b.proxy).join('|'),
    String(KERNEL_TABLE_UP_TO),
    clients,
    ...topology.instances.filter((i) => i.container === first.container).map((i) => `${i.name}=${i.runtime_api}`),
  ]]));
}
