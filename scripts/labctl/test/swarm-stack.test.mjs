// The lab as a Swarm stack (scripts/labctl/swarm/stack.mjs): each rule that
// makes compose config's JSON into what docker stack deploy takes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONFIG_MAX_BYTES, SEND_RESULTS, StackError, configName, toStack, toolStack } from '../swarm/stack.mjs';

// A checkout with ./app/{server.mjs,lib/util.mjs} and ./one.cfg; HOST is the
// path compose config names it by, LOCAL where the test reads it.
function checkout() {
  const local = mkdtempSync(join(tmpdir(), 'stack-'));
  mkdirSync(join(local, 'app/lib'), { recursive: true });
  writeFileSync(join(local, 'app/server.mjs'), 'server');
  writeFileSync(join(local, 'app/lib/util.mjs'), 'util');
  writeFileSync(join(local, 'one.cfg'), 'cfg');
  return { local, host: '/home/me/haproxy-lab' };
}

function compose(services, extra = {}) {
  return { name: 'haproxy-lab', services, networks: { lab: { name: 'haproxy-lab_lab', driver: 'bridge', ipam: {} } }, volumes: { data: { name: 'haproxy-lab_data' } }, 'x-sysctls': {}, ...extra };
}

test('a read-only bind mount of the lab becomes one config per file, named by its content', () => {
  const { local, host } = checkout();
  const stack = toStack(compose({
    web: { image: 'node', volumes: [
      { type: 'bind', source: `${host}/app`, target: '/srv', read_only: true },
      { type: 'bind', source: `${host}/one.cfg`, target: '/etc/one.cfg', read_only: true },
      { type: 'volume', source: 'data', target: '/data' },
    ] },
  }), { hostRoot: host, localRoot: local });
  const targets = Object.fromEntries(stack.services.web.configs.map((c) => [c.target, c.source]));
  assert.deepEqual(Object.keys(targets).sort(), ['/etc/one.cfg', '/srv/lib/util.mjs', '/srv/server.mjs']);
  assert.equal(stack.configs[targets['/srv/server.mjs']].file, `${host}/app/server.mjs`, 'the CLI reads the file on the deploying host');
  assert.deepEqual(stack.services.web.volumes, [{ type: 'volume', source: 'data', target: '/data' }], 'named volumes stay');
  assert.notEqual(configName('app/x', 'a'), configName('app/x', 'b'), 'an edited file is a new config');
  assert.ok(`haproxy-lab_${configName('grafana/provisioning/datasources/prometheus.yaml', 'x')}`.length <= 64, 'Swarm names are 64 characters at most');
});

test('a writable bind mount of the lab, a file too large for a config, a cpuset: refused with the reason', () => {
  const { local, host } = checkout();
  const writable = compose({ gen: { image: 'k6', volumes: [{ type: 'bind', source: `${host}/app`, target: '/results' }] } });
  assert.throws(() => toStack(writable, { hostRoot: host, localRoot: local }), (e) => e instanceof StackError && /writable bind mount app/.test(e.message));
  writeFileSync(join(local, 'one.cfg'), 'x'.repeat(CONFIG_MAX_BYTES + 1));
  const large = compose({ web: { image: 'n', volumes: [{ type: 'bind', source: `${host}/one.cfg`, target: '/o', read_only: true }] } });
  assert.throws(() => toStack(large, { hostRoot: host, localRoot: local }), /more than a Swarm config holds/);
  assert.throws(() => toStack(compose({ h: { image: 'h', cpuset: '0' } }), { hostRoot: host }), /cpuset "0" has no Swarm form: set HAPROXY_CPUSET=/);
});

test('ports in host mode on every address, compose-only keys left out, a host path outside the lab kept', () => {
  const { local, host } = checkout();
  const stack = toStack(compose({
    haproxy: {
      image: 'haproxy', entrypoint: null, depends_on: { b: { condition: 'service_healthy' } }, restart: 'unless-stopped',
      ports: [{ mode: 'ingress', host_ip: '127.0.0.1', target: 7000, published: '17000', protocol: 'tcp' }],
      volumes: [{ type: 'bind', source: '/var/run/docker.sock', target: '/var/run/docker.sock', read_only: true }],
      deploy: { resources: { limits: { memory: '1024', cpus: 0 } } },
      sysctls: { 'net.core.somaxconn': '65535' }, ulimits: { nofile: { soft: 10, hard: 10 } },
    },
    certs: { image: 'node', network_mode: 'none', build: { context: '.' } },
  }), { hostRoot: host, localRoot: local });
  const h = stack.services.haproxy;
  assert.deepEqual(h.ports, [{ mode: 'host', target: 7000, published: 17000, protocol: 'tcp' }]);
  for (const key of ['entrypoint', 'depends_on', 'restart']) assert.equal(key in h, false, `${key} is left out`);
  assert.deepEqual(h.deploy.resources.limits, { memory: '1024' }, 'cpus 0 (no limit) is left out');
  assert.deepEqual(h.volumes[0].source, '/var/run/docker.sock');
  assert.deepEqual(h.sysctls, { 'net.core.somaxconn': '65535' });
  assert.deepEqual(stack.services.certs, { image: 'node' });
  assert.deepEqual(stack.networks, { lab: { ipam: {}, driver: 'overlay', attachable: true } });
  assert.deepEqual(stack.volumes, { data: {} }, "compose's project names go: the stack's name prefixes them");
  assert.equal('x-sysctls' in stack, false);
});

test('--without leaves a service out, --scale sets a replicated service\'s tasks; bad ones are refused', () => {
  const { host } = checkout();
  const c = compose({ a: { image: 'a' }, b: { image: 'b' }, g: { image: 'g', deploy: { mode: 'global' } } });
  const stack = toStack(c, { hostRoot: host, without: ['b'], replicas: { a: 3 } });
  assert.deepEqual(Object.keys(stack.services), ['a', 'g']);
  assert.equal(stack.services.a.deploy.replicas, 3);
  assert.throws(() => toStack(c, { hostRoot: host, without: ['nope'] }), /--without nope: compose.yaml has no such service/);
  assert.throws(() => toStack(c, { hostRoot: host, replicas: { g: 2 } }), /a global service's tasks are not counted/);
  assert.throws(() => toStack(c, { hostRoot: host, without: ['a'], replicas: { a: 2 } }), /--scale a: the stack has no such service/);
});

// One step's load tool on a Swarm (scripts/lib/engine-swarm.sh): its own stack
// file, deployed beside the lab's.
const tool = (extra = {}) => ({
  image: 'k6', profiles: ['load'], user: '12345:12345', entrypoint: ['/bin/sh', '/loadgen/run.sh'], command: ['/loadgen/closed.js'],
  environment: { TARGET: 'http://haproxy', VUS: '100', DURATION: null },
  volumes: [], deploy: { placement: { constraints: ['node.labels.haproxy-lab.role != haproxy'] } }, ...extra,
});

test('a load tool runs N tasks once each, numbered by the task slot, its files sent to the collector', () => {
  const { local, host } = checkout();
  const stack = toolStack(compose({ loadgen: tool({ volumes: [
    { type: 'bind', source: `${host}/app`, target: '/loadgen', read_only: true },
    { type: 'bind', source: `${host}/results`, target: '/results' },
  ] }), haproxy: { image: 'haproxy' } }), { hostRoot: host, localRoot: local, service: 'loadgen', replicas: 3, index: 'LOADGEN_INDEX', collector: 'http://collector:7070', collectorToken: 'T' });
  const s = stack.services.loadgen;
  assert.deepEqual(Object.keys(stack.services), ['loadgen'], 'only the tool: the lab\'s services are left as they run');
  assert.deepEqual(s.deploy, { placement: { constraints: ['node.labels.haproxy-lab.role != haproxy'] }, mode: 'replicated', replicas: 3, restart_policy: { condition: 'none' } });
  assert.deepEqual(s.entrypoint, [...SEND_RESULTS, '/bin/sh', '/loadgen/run.sh', '/loadgen/closed.js'], 'the tool\'s own command after send-results.sh');
  assert.equal(s.command, undefined);
  assert.deepEqual(s.environment, { TARGET: 'http://haproxy', VUS: '100', LOADGEN_INDEX: '{{.Task.Slot}}', COLLECTOR_URL: 'http://collector:7070', COLLECTOR_TOKEN: 'T' }, 'an unset variable left out; the run\'s token for the collector');
  assert.equal(s.user, '12345:12345', 'its own user, as on one host');
  assert.deepEqual(s.volumes, [{ type: 'tmpfs', target: '/results' }], 'the results folder is another machine\'s: one in memory, sent');
  assert.equal(s.configs.length, 2, 'its scripts as configs');
});

test('a tool compose names no command for is refused (send-results.sh must go before one)', () => {
  const { local, host } = checkout();
  const args = { hostRoot: host, localRoot: local, service: 'vegeta', replicas: 1, index: 'VEGETA_INDEX', collector: 'http://collector:7070' };
  const stack = toolStack(compose({ vegeta: tool({ entrypoint: undefined, command: ['node', '/loadgen/vegeta/attack.mjs'] }) }), args);
  assert.deepEqual(stack.services.vegeta.entrypoint, [...SEND_RESULTS, 'node', '/loadgen/vegeta/attack.mjs']);
  assert.throws(() => toolStack(compose({ vegeta: tool({ entrypoint: undefined, command: undefined }) }), args), /vegeta: compose names no command/);
  assert.throws(() => toolStack(compose({}), args), /vegeta: compose config has no such service/);
});

test('a file of the lab replaces the volume a tool reads it from (the CA, in HAProxy\'s node\'s volume alone)', () => {
  const { local, host } = checkout();
  const stack = toolStack(compose({ holder: tool({ volumes: [{ type: 'volume', source: 'data', target: '/data', read_only: true }] }) }), {
    hostRoot: host, localRoot: local, service: 'holder', replicas: 1, index: 'HOLDER_INDEX', collector: 'http://collector:7070',
    files: { '/data/one.cfg': `${host}/one.cfg` },
  });
  const s = stack.services.holder;
  assert.equal(s.volumes, undefined, 'the volume at the file\'s folder goes');
  assert.deepEqual(s.configs, [{ source: configName('one.cfg', 'cfg'), target: '/data/one.cfg' }]);
  assert.deepEqual(stack.configs[configName('one.cfg', 'cfg')], { file: `${host}/one.cfg` });
  assert.deepEqual(stack.volumes, {}, 'no volume the tool does not mount');
  assert.throws(() => toolStack(compose({ holder: tool() }), { hostRoot: host, localRoot: local, service: 'holder', replicas: 1, index: 'HOLDER_INDEX', collector: 'http://c', files: { '/x': '/etc/passwd' } }), /not a file of the lab/);
});
