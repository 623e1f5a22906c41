// make-certs.mjs: the certificates parse, chain to the CA, carry the names and key types asked
// for, serve a real TLS 1.3 handshake, are kept when valid and replaced (all of them) otherwise.
// The CA's key is never stored; the CA issues only end-entity certificates for the servers' names;
// the key files are 0400 and owned as asked; --ca-dir gets ca.crt and nothing else.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import {
  CERTS, ensureCertificates, derInteger, derLength, derOid, derTime, derNamedBits, nameConstraints,
  buildCertificate, caExtensions, serverExtensions,
} from '../make-certs.mjs';

const SCRIPT = fileURLToPath(new URL('../make-certs.mjs', import.meta.url));
const OPENSSL = '/usr/bin/openssl';
const DAY = 24 * 3600 * 1000;
const FILES = ['ca.crt', 'rsa.pem', 'ecdsa.pem'];
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

test('each server key matches its certificate (checkPrivateKey)', () => {
  for (const kind of KINDS) {
    const { x509, privateKey } = readPem(dir, CERTS[kind].file);
    assert.ok(x509.checkPrivateKey(privateKey), `${kind}: expected its key to match its certificate`);
  }
});

test('the CA key is stored nowhere: no ca.key, no private key matching ca.crt in any file', () => {
  const d = tmpDir();
  const caDir = tmpDir();
  eq(run('--ca-dir', caDir, d).status, 0, 'run status');
  const ca = readCa(d);
  for (const out of [d, caDir]) {
    eq(fs.existsSync(path.join(out, 'ca.key')), false, `${out}/ca.key exists`);
    for (const file of fs.readdirSync(out)) {
      const keys = fs.readFileSync(path.join(out, file), 'utf8').match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/g) ?? [];
      const matching = keys.filter((k) => ca.checkPrivateKey(crypto.createPrivateKey(k)));
      eq(matching.length, 0, `${file}: private keys matching ca.crt`);
    }
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

test('validity follows the injected clock: now-1h to now+397d, the CA no longer than the servers', () => {
  const d = tmpDir();
  const now = new Date('2031-05-06T07:08:09.500Z');
  quiet(d, { now });
  const from = 'May  6 06:08:09 2031 GMT';
  eq([readCa(d).validFrom, readCa(d).validTo], [from, 'Jun  6 07:08:09 2032 GMT'], 'CA validity');
  for (const kind of KINDS) {
    const { x509 } = readPem(d, CERTS[kind].file);
    eq([x509.validFrom, x509.validTo], [from, 'Jun  6 07:08:09 2032 GMT'], `${kind} validity`);
  }
});

const modeOf = (file) => (fs.statSync(file).mode & 0o777).toString(8);

test('file modes: key files 0400, ca.crt 0644; no temp files left', () => {
  const modes = Object.fromEntries(FILES.map((f) => [f, modeOf(path.join(dir, f))]));
  eq(modes, { 'ca.crt': '644', 'rsa.pem': '400', 'ecdsa.pem': '400' }, 'modes');
  eq(fs.readdirSync(dir).sort(), [...FILES].sort(), 'directory listing');
});

test('--ca-dir holds ca.crt only, the same bytes as DIR\'s, also when the set is kept or remade', () => {
  const d = tmpDir();
  const caDir = tmpDir();
  const first = run('--ca-dir', caDir, d);
  eq([first.status, first.stderr], [0, ''], 'first run status, stderr');
  assert.match(first.stdout, new RegExp(`; ca\\.crt also in ${caDir}\n$`), `first run output: ${show(first.stdout)}`);
  const same = () => fs.readFileSync(path.join(caDir, 'ca.crt')).equals(fs.readFileSync(path.join(d, 'ca.crt')));
  eq(fs.readdirSync(caDir), ['ca.crt'], 'CA dir listing after creation');
  eq([same(), modeOf(path.join(caDir, 'ca.crt'))], [true, '644'], 'CA dir ca.crt: same as DIR\'s, mode');
  const freshCaDir = tmpDir();
  eq(run('--ca-dir', freshCaDir, d).status, 0, 'kept run into an empty CA dir: status');
  eq(fs.readdirSync(freshCaDir), ['ca.crt'], 'empty CA dir listing after a kept run');
  assert.ok(fs.readFileSync(path.join(freshCaDir, 'ca.crt')).equals(fs.readFileSync(path.join(d, 'ca.crt'))), 'kept run: expected DIR\'s ca.crt in the CA dir');
  fs.rmSync(path.join(d, 'rsa.pem'));
  eq(run('--ca-dir=' + caDir, d).status, 0, 'remaking run: status');
  eq([fs.readdirSync(caDir), same()], [['ca.crt'], true], 'CA dir after remaking: listing, same as DIR\'s');
});

test('--key-owner UID:GID: the key files get that owner, ca.crt keeps the caller\'s', () => {
  const uid = process.getuid();
  const gid = process.getgid();
  const d = tmpDir();
  const r = run('--key-owner', `${uid}:${gid}`, d);
  eq([r.status, r.stderr], [0, ''], 'status, stderr');
  const owners = (dd) => Object.fromEntries(FILES.map((f) => [f, `${fs.statSync(path.join(dd, f)).uid}:${fs.statSync(path.join(dd, f)).gid}`]));
  const self = `${uid}:${gid}`;
  eq(owners(d), { 'ca.crt': self, 'rsa.pem': self, 'ecdsa.pem': self }, 'owners');
  if (uid !== 0) return; // giving files away needs root
  const other = '4321:8765';
  const e = tmpDir();
  eq(run('--key-owner', other, e).status, 0, 'run as root with another owner: status');
  eq(owners(e), { 'ca.crt': '0:0', 'rsa.pem': other, 'ecdsa.pem': other }, 'owners as root');
  const before = snapshot(e);
  eq(run('--key-owner', '99:99', e).status, 0, 'kept run with a new owner: status');
  eq([owners(e), snapshot(e)], [{ 'ca.crt': '0:0', 'rsa.pem': '99:99', 'ecdsa.pem': '99:99' }, before], 'kept with a new owner: owners, contents');
});

test('--key-owner refused by the system: one "make-certs: ..." line, no key file or temp file left', () => {
  const d = tmpDir();
  fs.chmodSync(d, 0o777);
  // As root, run as nobody; either way, giving a file to root needs root.
  const asNobody = process.getuid() === 0 ? { uid: 65534, gid: 65534 } : {};
  const r = spawnSync(process.execPath, [SCRIPT, '--key-owner', '0:0', d], { encoding: 'utf8', ...asNobody });
  eq(r.status, 1, `status (stderr ${show(r.stderr)})`);
  assert.match(r.stderr, /^make-certs: .+rsa\.pem: cannot chown to 0:0 \(EPERM\); --key-owner needs root\n$/, `stderr ${show(r.stderr)}`);
  eq(fs.readdirSync(d).filter((f) => f !== 'ca.crt'), [], 'files other than ca.crt');
});

// The certs service's privileges: root with every capability dropped but these (compose's
// cap_drop: [ALL] and cap_add). setpriv empties the bounding set, which limits what exec grants.
const SETPRIV = '/usr/bin/setpriv';
function runWithCaps(caps, ...args) {
  const r = spawnSync(SETPRIV, [`--bounding-set=-all${caps.map((c) => `,+${c}`).join('')}`, process.execPath, SCRIPT, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('as root with only CHOWN and DAC_READ_SEARCH: made, kept, given to a new owner; without DAC_READ_SEARCH one clear line', (t) => {
  if (process.getuid() !== 0 || !fs.existsSync(SETPRIV)) return t.skip('needs root and setpriv');
  const d = tmpDir();
  const caps = ['chown', 'dac_read_search'];
  const owners = () => FILES.map((f) => `${f} ${fs.statSync(path.join(d, f)).uid}:${fs.statSync(path.join(d, f)).gid} ${modeOf(path.join(d, f))}`);
  const first = runWithCaps(caps, '--key-owner', '99:99', d);
  eq([first.status, first.stderr], [0, ''], 'first run status, stderr');
  eq(owners(), ['ca.crt 0:0 644', 'rsa.pem 99:99 400', 'ecdsa.pem 99:99 400'], 'after the first run');
  const before = snapshot(d);
  const inodes = FILES.map((f) => fs.statSync(path.join(d, f)).ino);
  const kept = runWithCaps(caps, '--key-owner', '99:99', d);
  eq([kept.status, /^certificates kept/.test(kept.stdout)], [0, true], `second run (${show(kept.stdout + kept.stderr)})`);
  eq([snapshot(d), FILES.map((f) => fs.statSync(path.join(d, f)).ino)], [before, inodes], 'second run: contents, inodes');
  const moved = runWithCaps(caps, '--key-owner', '101:102', d);
  eq([moved.status, /^certificates kept/.test(moved.stdout)], [0, true], `new owner run (${show(moved.stdout + moved.stderr)})`);
  eq([owners(), snapshot(d)], [['ca.crt 0:0 644', 'rsa.pem 101:102 400', 'ecdsa.pem 101:102 400'], before], 'new owner: owners, contents');
  const blind = runWithCaps(['chown'], '--key-owner', '101:102', d);
  eq(blind.status, 1, `without DAC_READ_SEARCH: status (${show(blind.stdout)})`);
  assert.match(blind.stderr, /^make-certs: .+\.pem: not readable \(EACCES\); key files of another owner need CAP_DAC_READ_SEARCH\n$/, `without DAC_READ_SEARCH: stderr ${show(blind.stderr)}`);
  eq(snapshot(d), before, 'without DAC_READ_SEARCH: contents');
});

test('a ca.key found in DIR: the whole set made again, ca.key removed', () => {
  const d = tmpDir();
  quiet(d);
  const old = snapshot(d);
  fs.writeFileSync(path.join(d, 'ca.key'), 'a stored CA key\n');
  const r = quiet(d);
  eq([r.created, r.reason], [true, 'ca.key present (a stored CA key)'], 'created, reason');
  eq(fs.readdirSync(d).sort(), [...FILES].sort(), 'directory listing');
  const now = snapshot(d);
  eq(FILES.filter((f) => now[f] === old[f]), [], 'files left unchanged');
});

// A CA made with the module's own pieces, its key kept: to sign what the module never would.
// issue: a server cert+key PEM for names; issueCa: a CA certificate under this one, as a testCa.
function testCa(extensions = caExtensions, { subject = 'haproxy-lab CA', issuer = null } = {}) {
  const ecKey = () => crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const key = ecKey();
  const notBefore = new Date(Date.now() - 3600 * 1000);
  const notAfter = new Date(Date.now() + 100 * DAY);
  const signer = issuer ?? { subject, privateKey: key.privateKey };
  const cert = buildCertificate({
    issuer: signer.subject, subject, notBefore, notAfter,
    publicKey: key.publicKey, extensions: extensions(key.publicKey), signingKey: signer.privateKey,
  });
  const issue = (names, kind = 'ecdsa') => {
    const leaf = kind === 'rsa' ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }) : ecKey();
    return buildCertificate({
      issuer: subject, subject: 'haproxy', notBefore, notAfter, publicKey: leaf.publicKey,
      extensions: serverExtensions(leaf.publicKey, key.publicKey, names), signingKey: key.privateKey,
    }) + leaf.privateKey.export({ type: 'pkcs8', format: 'pem' });
  };
  const issueCa = (sub) => testCa(caExtensions, { subject: sub, issuer: { subject, privateKey: key.privateKey } });
  return { cert, issue, issueCa };
}

test('a set whose CA lacks the name constraints (no ca.key): made again', () => {
  const d = tmpDir();
  const ca = testCa((pub) => caExtensions(pub).slice(0, -1));
  fs.writeFileSync(path.join(d, 'ca.crt'), ca.cert);
  for (const kind of KINDS) fs.writeFileSync(path.join(d, CERTS[kind].file), ca.issue(CERTS[kind], kind));
  const r = quiet(d);
  eq([r.created, r.reason], [true, 'ca.crt: extensions differ from those made here'], 'created, reason');
  assert.ok(quiet(d).created === false, 'expected the remade set to be kept');
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
  test(`${file} deleted: all three regenerated`, () => {
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
  const usage = /^make-certs: usage: node tls\/make-certs\.mjs \[--key-owner UID:GID\] \[--ca-dir CADIR\] DIR\n$/;
  const d = tmpDir();
  const cases = [
    [[], usage], [['a', 'b'], usage], [['--bogus', d], usage], [[d, '--ca-dir'], usage],
    [[missing], /^make-certs: .*nope: no such directory\n$/],
    [['--ca-dir', missing, d], /^make-certs: .*nope: no such directory\n$/],
    [['--key-owner', 'haproxy', d], /^make-certs: --key-owner: expected UID:GID \(numbers\), found "haproxy"\n$/],
  ];
  for (const [args, pattern] of cases) {
    const r = run(...args);
    assert.notEqual(r.status, 0, `args ${show(args)}: expected a non-zero exit, found ${r.status}`);
    assert.match(r.stderr, pattern, `args ${show(args)}: expected stderr ${pattern}, found ${show(r.stderr)}`);
    eq(r.stdout, '', `args ${show(args)}: stdout`);
  }
  eq(fs.existsSync(missing), false, 'the missing directory was not created');
  eq(fs.readdirSync(d), [], 'nothing written after a refused command line');
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
  // SEQUENCE { [0] { SEQUENCE { dNSName "a" }, SEQUENCE { iPAddress 127.0.0.1/255.255.255.255 } } }
  eq(hex(nameConstraints({ dns: ['a'], ip: ['127.0.0.1'] })), '3013a0113003820161300a87087f000001ffffffff', 'nameConstraints');
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

const opensslOut = (...args) => spawnSync(OPENSSL, args, { encoding: 'utf8' });

test('CA: critical basicConstraints CA:TRUE pathlen:0, critical nameConstraints of the servers\' names only', (t) => {
  eq(readCa(dir).ca, true, 'X509Certificate .ca');
  if (!fs.existsSync(OPENSSL)) return t.skip(`${OPENSSL} not found`);
  const r = opensslOut('x509', '-in', path.join(dir, 'ca.crt'), '-noout', '-ext', 'basicConstraints,nameConstraints');
  eq(r.status, 0, `openssl x509 -ext (stderr ${show(r.stderr)})`);
  const names = [...new Set(KINDS.flatMap((k) => CERTS[k].dns))].map((n) => `DNS:${n}`);
  const ips = [...new Set(KINDS.flatMap((k) => CERTS[k].ip))].map((a) => `IP:${a}/255.255.255.255`);
  const expected = [
    'X509v3 Basic Constraints: critical', 'CA:TRUE, pathlen:0',
    'X509v3 Name Constraints: critical', 'Permitted:', ...names, ...ips,
  ];
  eq(r.stdout.split('\n').map((l) => l.trim()).filter(Boolean), expected, 'openssl -ext basicConstraints,nameConstraints');
});

test('server key usage: Digital Signature only, for RSA too', (t) => {
  if (!fs.existsSync(OPENSSL)) return t.skip(`${OPENSSL} not found`);
  for (const kind of KINDS) {
    const r = opensslOut('x509', '-in', path.join(dir, CERTS[kind].file), '-noout', '-ext', 'keyUsage');
    eq(r.stdout.split('\n').map((l) => l.trim()).filter(Boolean), ['X509v3 Key Usage: critical', 'Digital Signature'], `${kind} keyUsage`);
  }
});

test('openssl refuses a certificate from such a CA outside its name constraints, or a sub-CA under it', (t) => {
  if (!fs.existsSync(OPENSSL)) return t.skip(`${OPENSSL} not found`);
  const d = tmpDir();
  const ca = testCa();
  fs.writeFileSync(path.join(d, 'ca.crt'), ca.cert);
  const write = (pem) => {
    const file = path.join(d, `${crypto.randomBytes(4).toString('hex')}.pem`);
    fs.writeFileSync(file, pem);
    return file;
  };
  const verify = (pem, ...more) => {
    const r = opensslOut('verify', ...more, '-purpose', 'sslserver', '-CAfile', path.join(d, 'ca.crt'), write(pem));
    return { status: r.status, out: r.stdout + r.stderr };
  };
  const inside = verify(ca.issue(CERTS.rsa, 'rsa'), '-x509_strict');
  eq([inside.status, /: OK\n$/.test(inside.out)], [0, true], `inside the constraints (${show(inside.out)})`);
  for (const names of [{ dns: ['evil.example'], ip: [] }, { dns: ['haproxy'], ip: ['10.0.0.1'] }]) {
    const r = verify(ca.issue(names), '-x509_strict');
    assert.notEqual(r.status, 0, `${show(names)}: expected openssl verify to fail, found ${show(r.out)}`);
    assert.match(r.out, /permitted subtree violation/, `${show(names)}: expected a name-constraint error, found ${show(r.out)}`);
  }
  // Not -x509_strict here: the sub-CA has no authorityKeyIdentifier, which strict mode refuses first.
  const sub = ca.issueCa('sub CA');
  const below = verify(sub.issue(CERTS.rsa), '-untrusted', write(sub.cert));
  assert.notEqual(below.status, 0, `below a sub-CA: expected openssl verify to fail, found ${show(below.out)}`);
  assert.match(below.out, /path length constraint exceeded/, `below a sub-CA: expected a path length error, found ${show(below.out)}`);
});
