// The exporter's CPU allowance arithmetic, and one scrape against a fake
// Docker engine on a unix socket in this process (no Docker needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'container-exporter-'));
process.env.DOCKER_SOCKET = path.join(dir, 'docker.sock');
const { cpuAllowanceCores, cpusetCores, identity, metrics, resolved } = await import('../container-exporter.mjs');
const { containerLines } = await import('../../scripts/labctl/swarm/collector.mjs');

test('--cpus 0.5 (NanoCpus) is half a core', () => {
  assert.equal(cpuAllowanceCores({ NanoCpus: 5e8 }, 2), 0.5);
});

test('a CFS quota of 50000 over 100000 is half a core, a period of 0 meaning 100000', () => {
  assert.equal(cpuAllowanceCores({ CpuQuota: 50000, CpuPeriod: 100000 }, 2), 0.5);
  assert.equal(cpuAllowanceCores({ CpuQuota: 50000, CpuPeriod: 0 }, 2), 0.5);
  assert.equal(cpuAllowanceCores({ CpuQuota: -1, CpuPeriod: 100000 }, 2), 2, 'quota -1: no limit');
});

test('cpuset "0" on a 2-core machine is one core', () => {
  assert.equal(cpuAllowanceCores({ CpusetCpus: '0' }, 2), 1);
});

test('cpuset "0-1" with --cpus 1.5 is 1.5 cores: the least of the limits', () => {
  assert.equal(cpuAllowanceCores({ CpusetCpus: '0-1', NanoCpus: 1.5e9 }, 2), 1.5);
  assert.equal(cpuAllowanceCores({ CpusetCpus: '0', NanoCpus: 1.5e9 }, 2), 1);
});

test('nothing set on 2 cores is the machine: 2 cores', () => {
  assert.equal(cpuAllowanceCores({ NanoCpus: 0, CpuQuota: 0, CpuPeriod: 0, CpusetCpus: '' }, 2), 2);
  assert.equal(cpuAllowanceCores(undefined, 2), 2);
  assert.equal(cpuAllowanceCores({}, undefined), null, 'no limit and no machine size: unknown');
});

test('a cpuset counts the cores it names', () => {
  assert.equal(cpusetCores('0,1'), 2);
  assert.equal(cpusetCores('0-3,8-11'), 8);
  assert.equal(cpusetCores('1,1-2'), 2);
  assert.equal(cpusetCores(''), null);
  assert.equal(cpusetCores('zero'), null);
});

// A fake engine: our own container (any /containers/X/json that is not a
// listed one), a haproxy with --cpus 0.5, a backend with no limit whose stats
// lack online_cpus (so the engine's NCPU counts), and a container removed
// during the scrape (stats and inspect 404).
const CONTAINERS = {
  h: { Names: ['/lab-haproxy-1'], Image: 'haproxy:3.2.22', Labels: { 'com.docker.compose.service': 'haproxy' }, HostConfig: { NanoCpus: 5e8 } },
  b: { Names: ['/lab-backend-fast-1'], Image: 'node:24.19.0-alpine', Labels: { 'com.docker.compose.service': 'backend-fast' }, HostConfig: {} },
  gone: { Names: ['/lab-gone-1'], Labels: { 'com.docker.compose.service': 'gone' } },
};
const STATS = {
  h: { memory_stats: { usage: 3000, stats: { inactive_file: 1000 } }, cpu_stats: { cpu_usage: { total_usage: 2.5e9 }, online_cpus: 2 } },
  b: { memory_stats: { usage: 500 }, cpu_stats: { cpu_usage: { total_usage: 1e9 } } },
};

const inspected = []; // the ids /containers/ID/json was asked for, in order

function engine(req, res) {
  const send = (body) => (body === undefined ? ((res.statusCode = 404), res.end('{}')) : res.end(JSON.stringify(body)));
  const url = new URL(req.url, 'http://docker');
  const [, kind, id, what] = url.pathname.split('/');
  if (url.pathname === '/info') return send({ NCPU: 4 });
  if (url.pathname === '/containers/json') return send(Object.keys(CONTAINERS).map((Id) => ({ Id, ...CONTAINERS[Id] })));
  if (kind === 'containers' && what === 'stats') return send(STATS[id]);
  if (kind === 'containers' && what === 'json') {
    inspected.push(id);
    if (id === 'gone') return send(undefined);
    return send(CONTAINERS[id] ?? { Config: { Labels: { 'com.docker.compose.project': 'lab' } } });
  }
  return send(undefined);
}

test('a scrape: each family grouped under its HELP and TYPE, a removed container left out', async (t) => {
  const server = http.createServer(engine);
  await new Promise((resolve) => server.listen(process.env.DOCKER_SOCKET, resolve));
  t.after(() => {
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const text = await metrics();
  // cAdvisor's names and meanings: the working set is the usage less the
  // inactive file pages, the usage keeps them.
  const h = 'name="lab-haproxy-1",image="haproxy:3.2.22",service="haproxy"';
  const b = 'name="lab-backend-fast-1",image="node:24.19.0-alpine",service="backend-fast"';
  assert.deepEqual(text.split('\n').filter((l) => l && !l.startsWith('# HELP')), [
    '# TYPE container_memory_working_set_bytes gauge',
    `container_memory_working_set_bytes{${h}} 2000`,
    `container_memory_working_set_bytes{${b}} 500`,
    '# TYPE container_memory_usage_bytes gauge',
    `container_memory_usage_bytes{${h}} 3000`,
    `container_memory_usage_bytes{${b}} 500`,
    '# TYPE container_cpu_usage_seconds_total counter',
    `container_cpu_usage_seconds_total{${h}} 2.5`,
    `container_cpu_usage_seconds_total{${b}} 1`,
    '# TYPE container_cpu_allowance_cores gauge',
    `container_cpu_allowance_cores{${h}} 0.5`,
    `container_cpu_allowance_cores{${b}} 4`,
  ]);
  assert.match(text, /^# HELP container_cpu_allowance_cores CPU the container may use, in cores/m);
  // The runner's reader on a Swarm (the collector's /containers) takes this
  // scrape as it is: each container by its name, the working set its memory.
  assert.deepEqual(containerLines(text, 7), ['7 lab-haproxy-1 2500000000 2000 0.5', '7 lab-backend-fast-1 1000000000 500 4']);

  // The next scrape reads each container's stats again, its inspect not
  // (kept a minute), but asks again for the one that had none.
  inspected.length = 0;
  assert.equal(await metrics(), text);
  assert.deepEqual(inspected.filter((id) => id in CONTAINERS), ['gone'],
    `expected only the inspect-less container inspected again, found ${JSON.stringify(inspected)}`);
});

// On a Swarm (scripts/swarm.sh deploy) a task's container has no compose
// labels: it is named as compose would name it, so the runner's evidence and
// the dashboard read one host and a Swarm alike.
test('a Swarm task is named STACK-SERVICE-SLOT, its service without the stack prefix', () => {
  const labels = (service, task) => ({
    'com.docker.stack.namespace': 'haproxy-lab', 'com.docker.swarm.service.name': `haproxy-lab_${service}`, 'com.docker.swarm.task.name': task,
  });
  assert.deepEqual(identity(labels('loadgen', 'haproxy-lab_loadgen.2.x7k3'), 'haproxy-lab_loadgen.2.x7k3'), { service: 'loadgen', name: 'haproxy-lab-loadgen-2' });
  assert.deepEqual(identity(labels('container-exporter', 'haproxy-lab_container-exporter.nodeid9.t1'), 'x'),
    { service: 'container-exporter', name: 'haproxy-lab-container-exporter-nodeid9' }, 'a global task: its node id for a slot');
  assert.deepEqual(identity({ 'com.docker.compose.service': 'haproxy' }, 'lab-haproxy-1'), { service: 'haproxy', name: 'lab-haproxy-1' }, 'compose: as it is');
});

test('a name is resolved as this node gives it: sorted IPv4 addresses, "-" for none', async () => {
  assert.equal(await resolved('localhost'), '127.0.0.1');
  assert.equal(await resolved('no-such-host.invalid'), '-');
});
