// make-certs.mjs: the certificates parse, chain to the CA, carry the names and key types asked
// for, serve a real TLS 1.3 handshake, are kept when valid and replaced (all of them) otherwise.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { CERTS, ensureCertificates, derInteger, derLength, derOid, derTime, derNamedBits } from '../make-certs.mjs';

const SCRIPT = fileURLToPath(new URL('../make-certs.mjs', import.meta.url));
const OPENSSL = '/usr/bin/openssl';
const DAY = 24 * 3600 * 1000;
const FILES = ['ca.crt', 'ca.key', 'rsa.pem', 'ecdsa.pem'];
const KINDS = ['rsa', 'ecdsa'];
const tmpDirs = [];
let dir; // one shared, generated set for the read-only tests

const show = (v) => JSON.stringify(v);
function eq(actual, expected, what) {
  assert.deepEqual(actual, expected, `${what}: expected ${show(expected)}, found ${show(actual)}`);
}

function tmpDir() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'make-certs-'));
  tmpDirs.push(d);
  return d;
}

function run(...args) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The test's own split of an HAProxy crt file, independent of the module's.
function readPem(d, file) {
  const text = fs.readFileSync(path.join(d, file), 'utf8');
  const cert = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/)?.[0];
  const key = text.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/)?.[0];
  assert.ok(cert && key, `${file}: expected a CERTIFICATE then a PRIVATE KEY block, found ${show(text.slice(0, 60))}...`);
  assert.ok(text.indexOf(cert) < text.indexOf(key), `${file}: expected the certificate before the key`);
  return { text, cert, key, x509: new crypto.X509Certificate(cert), privateKey: crypto.createPrivateKey(key) };
}

const readCa = (d) => new crypto.X509Certificate(fs.readFileSync(path.join(d, 'ca.crt')));
const snapshot = (d) => Object.fromEntries(FILES.map((f) => [f, fs.readFileSync(path.join(d, f)).toString('base64')]));
const quiet = (d, opts) => ensureCertificates(d, opts);

before(() => {
  dir = tmpDir();
  const r = quiet(dir);
  assert.ok(r.created, `first run: expected created, found ${show(r)}`);
});
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

test('X509Certificate parses all three certificates, with the expected subjects', () => {
  const ca = readCa(dir);
  eq(ca.subject, 'CN=haproxy-lab CA', 'CA subject');
  eq(ca.issuer, 'CN=haproxy-lab CA', 'CA issuer (self-signed)');
  for (const kind of KINDS) {
    const { x509 } = readPem(dir, CERTS[kind].file);
    eq(x509.subject, 'CN=haproxy', `${kind} subject`);
    eq(x509.issuer, 'CN=haproxy-lab CA', `${kind} issuer`);
  }
});

test('the CA is self-signed; both server certificates are issued by and verify against it', () => {
  const ca = readCa(dir);
  assert.ok(ca.checkIssued(ca) && ca.verify(ca.publicKey), 'expected ca.crt to verify against its own key');
  eq(ca.publicKey.asymmetricKeyType, 'ec', 'CA key type');
  for (const kind of KINDS) {
    const { x509 } = readPem(dir, CERTS[kind].file);
    assert.ok(x509.checkIssued(ca), `${kind}: expected checkIssued(ca) true, found false`);
    assert.ok(x509.verify(ca.publicKey), `${kind}: expected the signature to verify with the CA key`);
    const other = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey;
    assert.ok(!x509.verify(other), `${kind}: expected verify() false with an unrelated key`);
  }
});

test('server keys: RSA-2048 and ECDSA P-256', () => {
  const rsa = readPem(dir, 'rsa.pem').x509.publicKey;
  eq([rsa.asymmetricKeyType, rsa.asymmetricKeyDetails.modulusLength], ['rsa', 2048], 'rsa.pem key type, bits');
  const ec = readPem(dir, 'ecdsa.pem').x509.publicKey;
  eq([ec.asymmetricKeyType, ec.asymmetricKeyDetails.namedCurve], ['ec', 'prime256v1'], 'ecdsa.pem key type, curve');
});

test('subjectAltName holds the shared names and the type-specific one', () => {
  for (const kind of KINDS) {
    const { x509 } = readPem(dir, CERTS[kind].file);
    const expected = [...CERTS[kind].dns.map((d) => `DNS:${d}`), ...CERTS[kind].ip.map((a) => `IP Address:${a}`)].join(', ');
    eq(x509.subjectAltName, expected, `${kind} subjectAltName`);
    for (const name of ['haproxy', 'localhost', `${kind}.haproxy`]) {
      eq(x509.checkHost(name), name, `${kind} checkHost(${name})`);
    }
    eq(x509.checkIP('127.0.0.1'), '127.0.0.1', `${kind} checkIP(127.0.0.1)`);
    const wrong = kind === 'rsa' ? 'ecdsa.haproxy' : 'rsa.haproxy';
    eq(x509.checkHost(wrong), undefined, `${kind} checkHost(${wrong}) (the other type's name)`);
  }
  eq(CERTS.rsa.sni, 'rsa.haproxy', 'CERTS.rsa.sni');
  eq(CERTS.ecdsa.sni, 'ecdsa.haproxy', 'CERTS.ecdsa.sni');
});

test('each key matches its certificate (checkPrivateKey)', () => {
  const ca = readCa(dir);
  const caKey = crypto.createPrivateKey(fs.readFileSync(path.join(dir, 'ca.key')));
  assert.ok(ca.checkPrivateKey(caKey), 'expected ca.key to match ca.crt');
  for (const kind of KINDS) {
    const { x509, privateKey } = readPem(dir, CERTS[kind].file);
    assert.ok(x509.checkPrivateKey(privateKey), `${kind}: expected its key to match its certificate`);
    assert.ok(!x509.checkPrivateKey(caKey), `${kind}: expected the CA key not to match`);
  }
});

test('CA flag: ca.crt is a CA, the server certificates are not', () => {
  eq(readCa(dir).ca, true, 'ca.crt .ca');
  for (const kind of KINDS) eq(readPem(dir, CERTS[kind].file).x509.ca, false, `${kind} .ca`);
});

test('extended key usage is serverAuth only', () => {
  // Node's X509Certificate.keyUsage is the extendedKeyUsage list.
  for (const kind of KINDS) {
    eq(readPem(dir, CERTS[kind].file).x509.keyUsage, ['1.3.6.1.5.5.7.3.1'], `${kind} keyUsage (EKU)`);
  }
});

test('serials are positive, 16 bytes and distinct', () => {
  const serials = [readCa(dir), ...KINDS.map((k) => readPem(dir, CERTS[k].file).x509)].map((c) => c.serialNumber);
  for (const s of serials) {
    assert.match(s, /^[0-7][0-9A-F]{31}$/, `serial: expected 32 hex digits, top bit clear, found ${s}`);
  }
  eq(new Set(serials).size, 3, `distinct serials among ${show(serials)}`);
});

test('validity follows the injected clock: now-1h to now+10y (CA), now+397d (servers)', () => {
  const d = tmpDir();
  const now = new Date('2031-05-06T07:08:09.500Z');
  quiet(d, { now });
  const from = 'May  6 06:08:09 2031 GMT';
  eq([readCa(d).validFrom, readCa(d).validTo], [from, 'May  6 07:08:09 2041 GMT'], 'CA validity');
  for (const kind of KINDS) {
    const { x509 } = readPem(d, CERTS[kind].file);
    eq([x509.validFrom, x509.validTo], [from, 'Jun  6 07:08:09 2032 GMT'], `${kind} validity`);
  }
});

test('file modes: ca.key 0600, the rest 0644; no temp files left', () => {
  const modes = Object.fromEntries(FILES.map((f) => [f, (fs.statSync(path.join(dir, f)).mode & 0o777).toString(8)]));
  eq(modes, { 'ca.crt': '644', 'ca.key': '600', 'rsa.pem': '644', 'ecdsa.pem': '644' }, 'modes');
  eq(fs.readdirSync(dir).sort(), [...FILES].sort(), 'directory listing');
});

// A TLS 1.3 handshake against a server using the pem, trusting only ca.crt, SNI picking the name.
function handshake(pem, servername, ca) {
  return new Promise((resolve, reject) => {
    const server = tls.createServer({ key: pem.key, cert: pem.cert, minVersion: 'TLSv1.3' }, (s) => s.end());
    server.listen(0, '127.0.0.1', () => {
      const opts = { host: '127.0.0.1', port: server.address().port, ca, servername, minVersion: 'TLSv1.3' };
      const socket = tls.connect(opts, () => {
        const peer = socket.getPeerCertificate();
        const result = { authorized: socket.authorized, error: socket.authorizationError, protocol: socket.getProtocol(), peer };
        socket.end();
        server.close(() => resolve(result));
      });
      socket.on('error', (err) => server.close(() => reject(err)));
    });
  });
}

for (const kind of KINDS) {
  test(`TLS 1.3 handshake with ${kind}.pem, SNI ${CERTS[kind].sni}, trusting only ca.crt`, async () => {
    const pem = readPem(dir, CERTS[kind].file);
    const r = await handshake(pem, CERTS[kind].sni, fs.readFileSync(path.join(dir, 'ca.crt')));
    eq([r.authorized, r.error ?? null], [true, null], 'authorized, authorizationError');
    eq(r.protocol, 'TLSv1.3', 'protocol');
    // getPeerCertificate().pubkey: the SubjectPublicKeyInfo for RSA, the bare EC point for ECDSA.
    const spki = pem.x509.publicKey.export({ type: 'spki', format: 'der' });
    const expected = kind === 'rsa' ? spki : spki.subarray(-65);
    eq(r.peer.pubkey.toString('hex'), expected.toString('hex'), 'peer public key');
    eq([r.peer.bits, r.peer.asn1Curve], kind === 'rsa' ? [2048, undefined] : [256, 'prime256v1'], 'peer key bits, curve');
    eq(r.peer.fingerprint256, pem.x509.fingerprint256, 'peer certificate fingerprint');
  });
}

test('a second run keeps the files byte for byte and prints one "kept" line', () => {
  const d = tmpDir();
  const first = run(d);
  eq([first.status, first.stderr], [0, ''], 'first run status, stderr');
  eq(first.stdout, `certificates created in ${d}: ca.crt, rsa.pem (RSA-2048), ecdsa.pem (ECDSA P-256)\n`, 'first run output');
  const before = snapshot(d);
  const inodes = FILES.map((f) => fs.statSync(path.join(d, f)).ino);
  const second = run(d);
  eq(second.status, 0, 'second run status');
  assert.match(second.stdout, /^certificates kept in .+ \(valid until \d{4}-\d\d-\d\dT[\d:.]+Z\)\n$/, `second run: expected one "kept" line, found ${show(second.stdout)}`);
  eq(snapshot(d), before, 'file contents after the second run');
  eq(FILES.map((f) => fs.statSync(path.join(d, f)).ino), inodes, 'inodes (files not rewritten)');
});

for (const file of FILES) {
  test(`${file} deleted: all four regenerated`, () => {
    const d = tmpDir();
    quiet(d);
    const old = snapshot(d);
    fs.rmSync(path.join(d, file));
    const r = quiet(d);
    eq([r.created, r.reason], [true, `missing ${file}`], 'created, reason');
    const now = snapshot(d);
    eq(FILES.filter((f) => now[f] === old[f]), [], 'files left unchanged');
  });
}

test('a server certificate from another CA, or a garbled file: all regenerated', () => {
  const d = tmpDir();
  const other = tmpDir();
  quiet(d);
  quiet(other);
  fs.copyFileSync(path.join(other, 'rsa.pem'), path.join(d, 'rsa.pem'));
  eq([quiet(d).created, quiet(d).created], [true, false], 'after a foreign rsa.pem: created, then kept');
  fs.writeFileSync(path.join(d, 'ecdsa.pem'), 'garbage\n');
  const r = quiet(d);
  assert.ok(r.created && /unreadable/.test(r.reason), `after garbling ecdsa.pem: expected created/unreadable, found ${show(r)}`);
});

test('near expiry: kept at +360 days (37 left), regenerated at +380 days (17 left)', () => {
  const d = tmpDir();
  const start = Date.now();
  quiet(d, { now: new Date(start) });
  const old = snapshot(d);
  const kept = quiet(d, { now: new Date(start + 360 * DAY) });
  eq(kept.created, false, '+360 days: created');
  eq(snapshot(d), old, '+360 days: files');
  const later = new Date(start + 380 * DAY);
  const r = quiet(d, { now: later });
  eq(r.created, true, '+380 days: created');
  assert.match(r.reason, /expires/, `+380 days: expected an "expires" reason, found ${show(r.reason)}`);
  const renewedTo = new Date(readPem(d, 'rsa.pem').x509.validTo).getTime();
  assert.ok(renewedTo > later.getTime() + 390 * DAY, `renewed rsa.pem: expected validTo about +397 days from the clock, found ${new Date(renewedTo).toISOString()}`);
});

test('CLI errors: one "make-certs: ..." line and a non-zero exit', () => {
  const missing = path.join(tmpDir(), 'nope');
  for (const [args, pattern] of [[[], /^make-certs: usage: node tls\/make-certs\.mjs DIR\n$/], [[missing], /^make-certs: .*nope: no such directory\n$/], [['a', 'b'], /^make-certs: usage/]]) {
    const r = run(...args);
    assert.notEqual(r.status, 0, `args ${show(args)}: expected a non-zero exit, found ${r.status}`);
    assert.match(r.stderr, pattern, `args ${show(args)}: expected stderr ${pattern}, found ${show(r.stderr)}`);
    eq(r.stdout, '', `args ${show(args)}: stdout`);
  }
  eq(fs.existsSync(missing), false, 'the missing directory was not created');
});

test('importing the module does not run the command', () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${show(SCRIPT)}); console.log('imported')`], { encoding: 'utf8' });
  eq([r.status, r.stdout, r.stderr], [0, 'imported\n', ''], 'status, stdout, stderr');
});

test('DER helpers: lengths, integers, OIDs, times, named bits', () => {
  const hex = (b) => b.toString('hex');
  eq([hex(derLength(5)), hex(derLength(200)), hex(derLength(300))], ['05', '81c8', '82012c'], 'derLength');
  eq([hex(derInteger(2)), hex(derInteger(128)), hex(derInteger(Buffer.from([0, 0, 1])))], ['020102', '02020080', '020101'], 'derInteger');
  eq(hex(derOid('1.2.840.10045.4.3.2')), '06082a8648ce3d040302', 'derOid ecdsa-with-SHA256');
  eq(hex(derTime(new Date('2049-12-31T23:59:59Z'))), hex(Buffer.concat([Buffer.from([0x17, 13]), Buffer.from('491231235959Z')])), 'UTCTime 2049');
  eq(hex(derTime(new Date('2050-01-01T00:00:00Z'))), hex(Buffer.concat([Buffer.from([0x18, 15]), Buffer.from('20500101000000Z')])), 'GeneralizedTime 2050');
  eq([hex(derNamedBits([0])), hex(derNamedBits([0, 2])), hex(derNamedBits([5, 6]))], ['03020780', '030205a0', '03020106'], 'keyUsage bits');
});

test('openssl verifies the chain and prints the certificates', (t) => {
  if (!fs.existsSync(OPENSSL)) {
    t.skip(`${OPENSSL} not found`);
    return;
  }
  const ca = path.join(dir, 'ca.crt');
  const openssl = (...args) => spawnSync(OPENSSL, args, { encoding: 'utf8' });
  for (const kind of KINDS) {
    const certFile = path.join(tmpDir(), `${kind}.crt`);
    fs.writeFileSync(certFile, readPem(dir, CERTS[kind].file).cert);
    const v = openssl('verify', '-x509_strict', '-purpose', 'sslserver', '-verify_hostname', CERTS[kind].sni, '-CAfile', ca, certFile);
    eq([v.status, v.stdout.trim()], [0, `${certFile}: OK`], `openssl verify ${kind} (stderr ${show(v.stderr)})`);
    const text = openssl('x509', '-in', certFile, '-noout', '-text');
    eq(text.status, 0, `openssl x509 -text ${kind} (stderr ${show(text.stderr)})`);
    for (const line of ['X509v3 Basic Constraints: critical', 'CA:FALSE', 'X509v3 Key Usage: critical', 'TLS Web Server Authentication', 'Signature Algorithm: ecdsa-with-SHA256']) {
      assert.ok(text.stdout.includes(line), `openssl x509 -text ${kind}: expected ${show(line)} in\n${text.stdout}`);
    }
  }
  const caText = openssl('x509', '-in', ca, '-noout', '-text');
  eq(caText.status, 0, 'openssl x509 -text ca.crt');
  assert.ok(/CA:TRUE/.test(caText.stdout) && /Certificate Sign, CRL Sign/.test(caText.stdout), `ca.crt: expected CA:TRUE and Certificate Sign, CRL Sign in\n${caText.stdout}`);
});
