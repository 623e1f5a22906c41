// The runner's mailbox on a Swarm (scripts/lab/swarm/collector.mjs): what
// load-generator replicas on other nodes send is kept whole, under the path
// they name, and nothing else.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { collector, containerLines, keptPath } from '../swarm/collector.mjs';

function started(t) {
  const out = mkdtempSync(join(tmpdir(), 'collector-'));
  const server = collector(out).listen(0, '127.0.0.1');
  t.after(() => server.close());
  return new Promise((resolve) => server.on('listening', () => resolve({ out, port: server.address().port })));
}

function send(port, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('three 100 KB summaries sent at once are each kept whole under their path', async (t) => {
  const { out, port } = await started(t);
  const body = (i) => `{"replica":${i},"pad":"${String(i).repeat(100000)}"}`;
  const answers = await Promise.all([1, 2, 3].map((i) => send(port, i === 2 ? 'PUT' : 'POST', `/tuning/20261128T000000Z/steps/01-baseline/loadgen-${i}.json`, body(i))));
  assert.deepEqual(answers.map((a) => a.status), [204, 204, 204]);
  const dir = join(out, 'tuning/20261128T000000Z/steps/01-baseline');
  assert.deepEqual(readdirSync(dir).sort(), ['loadgen-1.json', 'loadgen-2.json', 'loadgen-3.json'], 'no partial file left');
  for (const i of [1, 2, 3]) assert.equal(readFileSync(join(dir, `loadgen-${i}.json`), 'utf8'), body(i), `loadgen-${i}.json byte for byte`);
});

test('a path out of the folder, empty segments or other characters are refused with 400, nothing written', async (t) => {
  const { out, port } = await started(t);
  for (const path of ['/../etc/passwd', '/a/../../x', '/a//b', '/a/b%20c', '/', '/.hidden', '/a/%2e%2e/b']) {
    const { status } = await send(port, 'PUT', path, 'x');
    assert.equal(status, 400, `PUT ${path}: expected 400, found ${status}`);
  }
  assert.deepEqual(readdirSync(out), [], 'nothing kept');
  assert.equal(keptPath('/connections/2026/steps/01-level-10pct/holder-1.json'), 'connections/2026/steps/01-level-10pct/holder-1.json');
});

test('GET /healthz answers ok; another method 405', async (t) => {
  const { port } = await started(t);
  assert.deepEqual(await send(port, 'GET', '/healthz'), { status: 200, text: 'ok\n' });
  assert.equal((await send(port, 'DELETE', '/x')).status, 405);
  assert.equal(existsSync('/x'), false);
});

test('an exporter\'s scrape becomes one line per container: CPU in ns, memory, allowance, "-" for what it lacks', () => {
  const text = [
    '# HELP container_memory_usage_bytes x', '# TYPE container_memory_usage_bytes gauge',
    'container_memory_usage_bytes{service="loadgen",container="haproxy-lab-loadgen-1"} 52428800',
    'container_memory_usage_bytes{service="backend-slow",container="haproxy-lab-backend-slow-2"} 1000',
    'container_cpu_usage_seconds_total{service="loadgen",container="haproxy-lab-loadgen-1"} 1.5',
    'container_cpu_allowance_cores{service="loadgen",container="haproxy-lab-loadgen-1"} 2',
  ].join('\n');
  assert.deepEqual(containerLines(text, 1700), ['1700 haproxy-lab-loadgen-1 1500000000 52428800 2', '1700 haproxy-lab-backend-slow-2 - 1000 -']);
});
