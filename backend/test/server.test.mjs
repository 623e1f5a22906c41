// Settings parsing, and server.mjs run as a real process (as the container does).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, loadConfig, parseNonNegativeInt } from '../app.mjs';

const SERVER = fileURLToPath(new URL('../server.mjs', import.meta.url));

test('parseNonNegativeInt accepts plain digits only', () => {
  assert.equal(parseNonNegativeInt('X', '0'), 0);
  assert.equal(parseNonNegativeInt('X', '42'), 42);
  assert.equal(parseNonNegativeInt('X', '007'), 7);
  assert.equal(parseNonNegativeInt('X', '10', 10), 10);
  for (const bad of ['abc', '-5', '1.5', '1e3', '', ' 7', '+7', '0x10', '99999999999999999999']) {
    assert.throws(() => parseNonNegativeInt('X', bad), { message: `X must be a non-negative integer (got ${JSON.stringify(bad)})` });
  }
  assert.throws(() => parseNonNegativeInt('X', '11', 10), { message: 'X must be a non-negative integer <= 10 (got "11")' });
});

test('loadConfig: defaults, values, and errors naming the variable', () => {
  assert.deepEqual(loadConfig({}), { ...DEFAULTS, replica: os.hostname() });
  assert.deepEqual(loadConfig({ PORT: '', SLOW_MS: '' }), { ...DEFAULTS, replica: os.hostname() }); // empty = unset
  const c = loadConfig({
    PORT: '9000', HOST: '127.0.0.1', SLOW_MS: '10', SERVER_TIMEOUT_MS: '120000', REQUEST_TIMEOUT_MS: '5',
    HEADERS_TIMEOUT_MS: '6', KEEPALIVE_TIMEOUT_MS: '7', MAX_SLEEP_MS: '8', SHUTDOWN_GRACE_MS: '9',
    SHUTDOWN_DRAIN_MS: '11', REPLICA: 'r1',
  });
  assert.deepEqual(c, {
    port: 9000, host: '127.0.0.1', slowMs: 10, serverTimeoutMs: 120000, requestTimeoutMs: 5,
    headersTimeoutMs: 6, keepAliveTimeoutMs: 7, maxSleepMs: 8, shutdownGraceMs: 9, shutdownDrainMs: 11, replica: 'r1',
  });
  assert.throws(() => loadConfig({ SLOW_MS: 'abc' }), { message: 'SLOW_MS must be a non-negative integer (got "abc")' });
  assert.throws(() => loadConfig({ KEEPALIVE_TIMEOUT_MS: '-1' }), { message: /^KEEPALIVE_TIMEOUT_MS must be/ });
  assert.throws(() => loadConfig({ PORT: '70000' }), { message: 'PORT must be a non-negative integer <= 65535 (got "70000")' });
  assert.throws(() => loadConfig({ REPLICA: 'a\tb' }), { message: /^REPLICA must be printable ASCII/ });
});

function run(env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [SERVER], { env: { ...process.env, ...env }, timeout: 10000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, signal: err?.signal, stdout, stderr }),
    );
  });
}

test('server.mjs exits 2 with one line on stderr for a bad setting', async () => {
  const bad = await run({ SLOW_MS: 'abc' });
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, 'backend: SLOW_MS must be a non-negative integer (got "abc")\n');
  assert.equal(bad.stdout, '');
  const negative = await run({ SERVER_TIMEOUT_MS: '-5' });
  assert.equal(negative.code, 2);
  assert.equal(negative.stderr, 'backend: SERVER_TIMEOUT_MS must be a non-negative integer (got "-5")\n');
});

test('server.mjs logs its start, serves, and exits 0 after SIGTERM', async (t) => {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', REPLICA: 'spawned', SLOW_MS: '200', SHUTDOWN_DRAIN_MS: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 10000); // never hang the suite
  t.after(() => clearTimeout(killer));
  const exited = once(child, 'exit');
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));

  while (!stdout.includes('\n')) await once(child.stdout, 'data');
  const m = /^backend spawned listening on :(\d+) \(slow=200ms .*\)\n/.exec(stdout);
  assert.ok(m, `start line: ${stdout}`);
  const base = `http://127.0.0.1:${m[1]}`;

  const res = await fetch(`${base}/fast`);
  assert.equal(await res.text(), "I'm FAST!!!!");
  assert.equal(res.headers.get('x-replica'), 'spawned');

  const slow = fetch(`${base}/slow?ms=300`).then((r) => r.text());
  // Signal only once the server is working on it.
  while (!/^backend_requests_in_flight 1$/m.test(await (await fetch(`${base}/metrics`)).text())) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  child.kill('SIGTERM');
  while (!stdout.includes('got SIGTERM')) await once(child.stdout, 'data');
  // Draining: still served, but the health check fails and asks to close.
  const during = await fetch(`${base}/healthz`);
  assert.equal(during.status, 503);
  assert.equal(during.headers.get('connection'), 'close');
  assert.equal(await slow, "I'm slooooow"); // the in-flight request still completes
  const [code] = await exited;
  assert.equal(code, 0, stderr);
  assert.match(stdout.split('\n')[1], /^backend spawned got SIGTERM: draining \d+ in-flight requests on \d+ connections \(still accepting for 1000ms, then grace 10000ms\)$/);
  assert.equal(stderr, '');
});
