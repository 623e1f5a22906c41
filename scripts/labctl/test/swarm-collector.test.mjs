// The runner's mailbox on a Swarm (scripts/labctl/swarm/collector.mjs): what
// load-generator replicas on other nodes send is kept whole, under the path
// they name, and nothing else.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { collector, containerLines, keptPath, MAX_TOTAL_BYTES } from '../swarm/collector.mjs';

const TOKEN = 'run-token-0123456789abcdef';

// started T [TOKEN]: a collector on a fresh folder, collecting for a run
// whose token is TOKEN (none: no run).
function started(t, token = TOKEN, limits = {}) {
  const out = mkdtempSync(join(tmpdir(), 'collector-'));
  const tokenFile = join(out, '.token');
  if (token) writeFileSync(tokenFile, `${token}\n`);
  const server = collector(out, undefined, { tokenFile, ...limits }).listen(0, '127.0.0.1');
  t.after(() => server.close());
  return new Promise((resolve) => server.on('listening', () => resolve({ out, port: server.address().port })));
}

// kept OUT → every file kept under OUT but the token, sorted.
function kept(out) {
  return readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== '.token')
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(out.length + 1)).sort();
}

function send(port, method, path, body, token = TOKEN, headers = {}) {
  return new Promise((resolve, reject) => {
    const auth = token ? { authorization: `Bearer ${token}` } : {};
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { ...auth, ...headers } }, (res) => {
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
  assert.deepEqual(kept(out), [], 'nothing kept');
  assert.equal(keptPath('/connections/2026/steps/01-level-10pct/holder-1.json'), 'connections/2026/steps/01-level-10pct/holder-1.json');
});

test('hostile uploads are refused, and the collector stays up with what it kept intact', async (t) => {
  const { out, port } = await started(t);
  const first = '/run/steps/01/loadgen-1.json';
  assert.equal((await send(port, 'PUT', first, 'first')).status, 204);
  assert.equal((await send(port, 'PUT', '/run/d/x', 'x')).status, 204);
  const refusals = [
    ['no token', 'PUT', '/run/a', 'a', null, 401],
    ['another token', 'PUT', '/run/a', 'a', 'not-the-run', 401],
    ['the same path again', 'PUT', first, 'second', TOKEN, 409],
    ['a file below a kept file', 'PUT', `${first}/b`, 'b', TOKEN, 409],
    ['a file where a kept folder is', 'PUT', '/run/d', 'd', TOKEN, 409],
    ['the token\'s own name', 'PUT', '/.token', 'mine', TOKEN, 400],
    ['a traversal', 'PUT', '/run/../../etc/passwd', 'x', TOKEN, 400],
    ['an encoded traversal', 'PUT', '/run/%2e%2e/%2e%2e/x', 'x', TOKEN, 400],
  ];
  for (const [what, method, path, body, token, status] of refusals) {
    const found = await send(port, method, path, body, token);
    assert.equal(found.status, status, `${what} (${method} ${path}): expected ${status}, found ${found.status} ${found.text}`);
  }
  // A body declared over the total: refused from its headers alone.
  const declared = await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(
      `PUT /run/big HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: ${MAX_TOTAL_BYTES + 1}\r\n\r\n`));
    socket.once('data', (data) => { resolve(String(data).split(' ')[1]); socket.destroy(); });
    socket.on('error', reject);
  });
  assert.equal(declared, '413', 'a body declared over the total');
  assert.deepEqual(await send(port, 'GET', '/healthz'), { status: 200, text: 'ok\n' }, 'healthy after the refusals');
  assert.deepEqual(kept(out), ['run/d/x', 'run/steps/01/loadgen-1.json'], 'what is kept after the refusals');
  assert.equal(readFileSync(join(out, first.slice(1)), 'utf8'), 'first', 'the first upload byte for byte');
  assert.equal(readFileSync(join(out, '.token'), 'utf8').trim(), TOKEN, 'the token as the runner wrote it');
});

test('a streamed body over what is left of the total is cut with 413, and only what was kept before stays', async (t) => {
  const { out, port } = await started(t, TOKEN, { maxTotalBytes: 3 * 1024 * 1024 });
  assert.equal((await send(port, 'PUT', '/run/first', Buffer.alloc(2 * 1024 * 1024, 65))).status, 204, 'a first 2 MB');
  const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: '/run/stream', headers: { authorization: `Bearer ${TOKEN}` } });
  let status = null;
  const answered = new Promise((resolve) => req.on('response', (res) => { status = res.statusCode; res.resume(); resolve(status); }));
  req.on('error', () => {});
  const chunk = Buffer.alloc(1024 * 1024, 120);
  for (let sent = 0; sent <= 8 && status === null && !req.destroyed; sent += 1) {
    if (!req.write(chunk)) await new Promise((resolve) => { req.once('drain', resolve); setTimeout(resolve, 200); });
  }
  req.end();
  assert.equal(await answered, 413, 'a body over what is left of 3 MB');
  assert.deepEqual(kept(out), ['run/first'], 'only the first upload kept');
  assert.deepEqual(readdirSync(out).filter((n) => n.startsWith('.partial')), [], 'no partial file left');
});

test('with no run collecting, every upload is refused with 401', async (t) => {
  const { out, port } = await started(t, null);
  assert.equal((await send(port, 'PUT', '/run/a', 'a')).status, 401);
  assert.equal((await send(port, 'PUT', '/run/a', 'a', '')).status, 401);
  assert.deepEqual(kept(out), [], 'nothing kept');
});

test('GET /resolve?name= asks every node\'s exporter and gives one line per node', async (t) => {
  const exporter = http.createServer((req, res) => res.end(req.url === '/resolve?name=haproxy' ? '10.0.1.7\n' : '-\n')).listen(0, '127.0.0.1');
  await new Promise((resolve) => exporter.on('listening', resolve));
  t.after(() => exporter.close());
  const out = mkdtempSync(join(tmpdir(), 'collector-'));
  const server = collector(out, `localhost:${exporter.address().port}`, { tokenFile: join(out, '.token') }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.on('listening', resolve));
  t.after(() => server.close());
  assert.deepEqual(await send(server.address().port, 'GET', '/resolve?name=haproxy'), { status: 200, text: '127.0.0.1 10.0.1.7\n' });
  assert.equal((await send(server.address().port, 'GET', '/resolve?name=a%20b')).status, 405, 'a name that is no host name');
});

test('GET /healthz answers ok; another method 405', async (t) => {
  const { port } = await started(t);
  assert.deepEqual(await send(port, 'GET', '/healthz'), { status: 200, text: 'ok\n' });
  assert.equal((await send(port, 'DELETE', '/x')).status, 405);
  assert.equal(existsSync('/x'), false);
});

test('an exporter\'s scrape becomes one line per container: CPU in ns, memory (the working set), allowance, "-" for what it lacks', () => {
  const l = (name, service) => `name="${name}",image="node:24",service="${service}"`;
  const text = [
    '# HELP container_memory_working_set_bytes x', '# TYPE container_memory_working_set_bytes gauge',
    `container_memory_working_set_bytes{${l('haproxy-lab-loadgen-1', 'loadgen')}} 52428800`,
    `container_memory_working_set_bytes{${l('haproxy-lab-backend-slow-2', 'backend-slow')}} 1000`,
    // The usage with the page cache: not the runner's figure.
    `container_memory_usage_bytes{${l('haproxy-lab-loadgen-1', 'loadgen')}} 99999999`,
    `container_cpu_usage_seconds_total{${l('haproxy-lab-loadgen-1', 'loadgen')}} 1.5`,
    `container_cpu_allowance_cores{${l('haproxy-lab-loadgen-1', 'loadgen')}} 2`,
  ].join('\n');
  assert.deepEqual(containerLines(text, 1700), ['1700 haproxy-lab-loadgen-1 1500000000 52428800 2', '1700 haproxy-lab-backend-slow-2 - 1000 -']);
});
