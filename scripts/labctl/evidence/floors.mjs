// The floors a connection run measured before its levels (scripts/lib/floors.sh,
// RUN/floors/): what opening and holding a connection costs at the least
// on this machine, each part by a minimal tool.
import path from 'node:path';
import { readText } from './files.mjs';

const json = (text) => {
  for (const line of (text ?? '').split('\n').reverse()) {
    try { return JSON.parse(line); } catch { /* the next line up */ }
  }
  return null;
};
const cgroupNs = (text) => {
  const f = (text ?? '').trim().split(/\s+/);
  const unit = { ns: 1, us: 1000 }[f[2]];
  return f.length >= 3 && unit && Number.isFinite(Number(f[1])) ? Number(f[1]) * unit : null;
};

// readFloors RUN_DIR → {node: {connect_us, accept_us, connections, rate}, haproxy:
// {close_us, requests, image}} (parts null when not measured) | null.
export function readFloors(dir) {
  const file = (name) => readText(path.join(dir, 'floors', name));
  const client = json(file('node-client.json')), server = json(file('node-server.json'));
  const h2 = /requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded/.exec(file('haproxy-h2load.txt') ?? '');
  const before = cgroupNs(file('haproxy-cpu-before.txt')), after = cgroupNs(file('haproxy-cpu-after.txt'));
  const image = /image=(\S+)/.exec(file('haproxy-container.txt') ?? '')?.[1] ?? null;
  const node = client?.connected > 0 && server?.accepted > 0 ? {
    connections: client.connected,
    rate: client.seconds > 0 ? client.connected / client.seconds : null,
    connect_us: (client.user_us + client.system_us) / client.connected,
    accept_us: (server.user_us + server.system_us) / server.accepted,
    connect_system_us: client.system_us / client.connected,
    accept_system_us: server.system_us / server.accepted,
  } : null;
  const succeeded = h2 ? Number(h2[2]) : 0;
  // h2load's own time: "finished in 3.25s" (or ms), for the rate and how busy HAProxy was.
  const took = /finished in ([0-9.]+)(ms|s),/.exec(file('haproxy-h2load.txt') ?? '');
  const seconds = took ? Number(took[1]) / (took[2] === 'ms' ? 1000 : 1) : null;
  const haproxy = succeeded > 0 && before !== null && after !== null && after > before ? {
    requests: succeeded, close_us: (after - before) / 1000 / succeeded, image,
    rate: seconds > 0 ? succeeded / seconds : null,
    busy_pct: seconds > 0 ? ((after - before) / 1e9 / seconds) * 100 : null,
  } : null;
  return node || haproxy ? { node, haproxy } : null;
}
