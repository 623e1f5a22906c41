// The pacer: settings, its own CPU reading (cgroup v1, v2, else the
// process), and real runs against a local server, plain and TLS: the rate
// kept, kept-alive connections, TLS sessions resumed or not, the
// certificate's key type read back from the handshake.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, ownCpu, percentile, runPacer } from '../lib.mjs';
import { ensureCertificates } from '../../../tls/make-certs.mjs';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'pacer-'));
const dirs = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('settings', () => {
  test('defaults, and the rate shared by the replicas', () => {
    const c = loadConfig({});
    assert.deepEqual([c.tls, c.host, c.port, c.path, c.rate, c.duration, c.keepalive, c.resume, c.connections], [false, 'haproxy', 8080, '/fast', 200, 10, false, true, 10]);
    assert.equal(loadConfig({ RATE: '300', PACER_REPLICAS: '3' }).rate, 100);
    const t = loadConfig({ TARGET: 'https://rsa.haproxy:8443', DURATION: '6s', KEEPALIVE: 'true', TLS_RESUME: 'false' });
    assert.deepEqual([t.tls, t.host, t.port, t.duration, t.keepalive, t.resume], [true, 'rsa.haproxy', 8443, 6, true, false]);
  });

  test('a bad value: one message naming the variable and the value', () => {
    for (const [env, message] of [
      [{ TARGET: 'ftp://x:1' }, 'TARGET must be an http(s)://host:port URL (got "ftp://x:1")'],
      [{ RATE: '-1' }, 'RATE must be a number from 0.1 to 1000000 (got "-1")'],
      [{ KEEPALIVE: 'yes' }, 'KEEPALIVE must be true or false (got "yes")'],
      [{ LOAD_PATH: 'fast' }, 'LOAD_PATH must be a path starting with / (got "fast")'],
    ]) assert.throws(() => loadConfig(env), { message }, JSON.stringify(env));
  });

  test('nearest-rank percentiles', () => {
    assert.deepEqual([percentile([1, 2, 3, 4], 50), percentile([1, 2, 3, 4], 99), percentile([], 50)], [2, 4, null]);
  });
});

describe('its own CPU time', () => {
  test('cgroup v1 cpuacct.usage (ns), v2 cpu.stat usage_usec, else the process', () => {
    const v1 = tmp(); dirs.push(v1);
    fs.mkdirSync(path.join(v1, 'cpuacct'));
    fs.writeFileSync(path.join(v1, 'cpuacct/cpuacct.usage'), '123456789\n');
    assert.deepEqual(ownCpu(v1), { ns: 123456789, source: 'cgroup v1 cpuacct.usage' });
    const v2 = tmp(); dirs.push(v2);
    fs.writeFileSync(path.join(v2, 'cpu.stat'), 'usage_usec 4200\nuser_usec 4000\n');
    assert.deepEqual(ownCpu(v2), { ns: 4200000, source: 'cgroup v2 cpu.stat' });
    assert.equal(ownCpu(path.join(v2, 'none')).source, 'process');
  });
});

describe('real runs against a local server', () => {
  const certs = tmp();
  dirs.push(certs);
  ensureCertificates(certs, { log: () => {} });
  const pem = (name) => fs.readFileSync(path.join(certs, name), 'utf8');
  const serve = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
  const handler = (req, res) => res.end('ok');
  const run = (server, env, ca) => runPacer(loadConfig({ TARGET: `${env.SCHEME}://localhost:${server.address().port}`, RATE: '100', DURATION: '0.5', ...env }), { ca, log: () => {} });

  test('plain, kept alive: every request answered, on at most CONNECTIONS connections, at the rate', async () => {
    let connections = 0;
    const server = await serve(http.createServer(handler).on('connection', () => { connections += 1; }));
    const s = await run(server, { SCHEME: 'http', KEEPALIVE: 'true', CONNECTIONS: '2' }, null);
    server.close();
    assert.deepEqual([s.requests, s.ok, s.failed, s.dropped, s.tls], [50, 50, 0, 0, null]);
    assert.ok(connections <= 2, `connections the server saw: expected at most 2, found ${connections}`);
    assert.ok(s.seconds >= 0.45 && s.seconds < 3, `seconds: ${s.seconds}`);
    assert.ok(s.cpu.ns > 0, `its own CPU: ${JSON.stringify(s.cpu)}`);
  });

  for (const [key, type] of [['rsa', 'rsa 2048'], ['ecdsa', 'ec prime256v1']]) {
    test(`TLS with the ${key} certificate, a connection per request: every session resumed after the primer, or all full without resumption`, async () => {
      const cert = pem(`${key}.pem`).replace(/(-----END CERTIFICATE-----\n)[\s\S]*$/, '$1');
      const server = await serve(https.createServer({ cert, key: pem(`${key}.pem`) }, handler));
      const ca = pem('ca.crt');
      const resumed = await run(server, { SCHEME: 'https', KEEPALIVE: 'false' }, ca);
      const full = await run(server, { SCHEME: 'https', KEEPALIVE: 'false', TLS_RESUME: 'false' }, ca);
      server.close();
      assert.equal(resumed.failed, 0, JSON.stringify(resumed.errors));
      // The primer brought a session back before the clock: every paced
      // connection offered it and the server resumed each one.
      assert.deepEqual([resumed.tls.full, resumed.tls.resumed, resumed.tls.full_offered, resumed.tls.primer?.session], [0, 50, 0, true],
        `full, resumed, full although offered, primer's session: ${JSON.stringify(resumed.tls)}`);
      assert.deepEqual([full.tls.full, full.tls.resumed, full.tls.primer], [50, 0, null], 'full and resumed handshakes without resumption, no primer');
      assert.deepEqual(Object.keys(full.tls.key_types), [type], 'the certificate key type read back');
      assert.deepEqual(Object.keys(full.tls.protocols), ['TLSv1.3']);
    });
  }

  test('TLS, kept alive: handshakes counted per connection as the server saw them, no refused session, no listener added per request', async () => {
    const warnings = [];
    const onWarning = (w) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const seen = { full: 0, resumed: 0 };
    const server = await serve(https.createServer({ cert: pem('ecdsa.pem'), key: pem('ecdsa.pem') }, handler)
      .on('secureConnection', (sock) => { seen[sock.isSessionReused() ? 'resumed' : 'full'] += 1; }));
    // A slow answer holds a connection busy, so kept-alive requests need more than one.
    server.removeAllListeners('request');
    server.on('request', (req, res) => setTimeout(() => res.end('ok'), 30));
    const s = await run(server, { SCHEME: 'https', KEEPALIVE: 'true', CONNECTIONS: '4' }, pem('ca.crt'));
    server.close();
    // Node emits a warning on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    assert.deepEqual([s.ok, s.failed, s.tls.full_offered, s.tls.primer?.session, s.tls.primer?.key_type], [50, 0, 0, true, 'ec prime256v1'], JSON.stringify(s.tls));
    // The server's handshakes less the primer's (one full): the pacer's, one per connection, at most CONNECTIONS.
    assert.deepEqual([s.tls.full, s.tls.resumed], [seen.full - 1, seen.resumed], `pacer's full, resumed against the server's (less the primer's full): ${JSON.stringify(seen)}`);
    assert.ok(s.tls.full + s.tls.resumed >= 1 && s.tls.full + s.tls.resumed <= 4, `handshakes: expected 1 to 4 connections, found ${s.tls.full + s.tls.resumed}`);
    assert.deepEqual(warnings, [], 'process warnings (a session or close listener added per request on a kept-alive socket)');
  });

  test('TLS to a server that refuses resumption: every handshake full, each counted as offered and refused', async () => {
    // No tickets, and Node's server keeps no session cache of its own.
    const server = await serve(https.createServer({ cert: pem('ecdsa.pem'), key: pem('ecdsa.pem'), secureOptions: crypto.constants.SSL_OP_NO_TICKET }, handler));
    const s = await run(server, { SCHEME: 'https', KEEPALIVE: 'false' }, pem('ca.crt'));
    server.close();
    assert.deepEqual([s.failed, s.tls.full, s.tls.resumed, s.tls.full_offered, s.tls.primer?.ok], [0, 50, 0, 50, true],
      `failed, full, resumed, full although offered, primer ok: ${JSON.stringify(s.tls)}`);
  });

  test('TLS to a server the CA did not sign: every request fails, with the reason', async () => {
    const server = await serve(https.createServer({ cert: pem('rsa.pem'), key: pem('rsa.pem') }, handler));
    const other = tmp(); dirs.push(other);
    ensureCertificates(other, { log: () => {} });
    const s = await run(server, { SCHEME: 'https', DURATION: '0.1' }, fs.readFileSync(path.join(other, 'ca.crt')));
    server.close();
    assert.equal(s.ok, 0);
    assert.ok(s.failed > 0 && Object.keys(s.errors).every((e) => /CERT|SIGNATURE|UNABLE|SELF/.test(e)), `errors: ${JSON.stringify(s.errors)}`);
  });
});
