// make-certs.mjs [--key-owner UID:GID] [--ca-dir CADIR] DIR: a lab CA and two HAProxy server
// certificates (RSA-2048 and ECDSA P-256) in DIR; the CA certificate alone also in CADIR, for clients
// that must trust it but have no business near the keys. The CA's private key exists only in memory
// while it signs the two certificates: nothing can be signed with it later, so a leaked volume
// yields the two server keys and never a way to mint more.
// Only Node built-ins: the node:alpine images this runs in have neither openssl nor npm packages,
// and Node's crypto can make keys and sign but not build certificates, so the X.509 v3 structures
// are encoded here in ASN.1 DER (RFC 5280) and the TBSCertificate is signed with crypto.sign.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
const SERVER_DAYS = 397; // the longest lifetime browsers accept for server certificates
const MIN_REMAINING_DAYS = 30; // renew well before expiry, so a long-running lab never sees one
const KEY_MODE = 0o400; // the files holding private keys: their owner (HAProxy's user) reads them

export const CA = Object.freeze({ cert: 'ca.crt', commonName: 'haproxy-lab CA' });
// A CA key on disk could sign more certificates: where one is found, the set is made again and
// the file removed.
export const STORED_CA_KEY = 'ca.key';
export const SERVER_CN = 'haproxy';

// Names per certificate; the type-specific name lets a client pick RSA or ECDSA by SNI.
export const CERTS = Object.freeze({
  rsa: Object.freeze({
    file: 'rsa.pem', label: 'RSA-2048', sni: 'rsa.haproxy',
    dns: Object.freeze(['haproxy', 'localhost', 'rsa.haproxy']), ip: Object.freeze(['127.0.0.1']),
  }),
  ecdsa: Object.freeze({
    file: 'ecdsa.pem', label: 'ECDSA P-256', sni: 'ecdsa.haproxy',
    dns: Object.freeze(['haproxy', 'localhost', 'ecdsa.haproxy']), ip: Object.freeze(['127.0.0.1']),
  }),
});

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  subjectAltName: '2.5.29.17',
  nameConstraints: '2.5.29.30',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

// keyUsage bit numbers (RFC 5280 4.2.1.3).
const KU = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 };

// ---- ASN.1 DER encoding ----------------------------------------------------------------------

export function derLength(n) {
  if (n < 0x80) return Buffer.from([n]);
  const bytes = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag, ...contents) {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

// INTEGER from a non-negative number or big-endian bytes: minimal, with a 0 byte where the top
// bit would otherwise make it negative.
export function derInteger(value) {
  const hex = Buffer.isBuffer(value) ? '' : BigInt(value).toString(16);
  let bytes = Buffer.isBuffer(value) ? value : Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0 && !(bytes[i + 1] & 0x80)) i++;
  bytes = bytes.subarray(i);
  if (bytes[0] & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(0x02, bytes);
}

export function derOid(dotted) {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const out = [40 * first + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

export const derSequence = (...items) => tlv(0x30, ...items);
export const derSet = (...items) => tlv(0x31, ...items);
export const derUtf8 = (s) => tlv(0x0c, Buffer.from(s, 'utf8'));
export const derOctetString = (bytes) => tlv(0x04, bytes);
export const derBitString = (bytes, unusedBits = 0) => tlv(0x03, Buffer.from([unusedBits]), bytes);
export const derExplicit = (n, inner) => tlv(0xa0 | n, inner);
const DER_TRUE = tlv(0x01, Buffer.from([0xff]));

// UTCTime up to 2049, GeneralizedTime after, as RFC 5280 4.1.2.5 requires; whole seconds, UTC.
export function derTime(date) {
  const digits = date.toISOString().slice(0, 19).replace(/[-T:]/g, ''); // YYYYMMDDHHMMSS
  const year = date.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'));
  return tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

// A named-bit BIT STRING: DER drops trailing zero bits and counts them as unused.
export function derNamedBits(bits) {
  const bytes = Buffer.alloc(Math.floor(Math.max(...bits) / 8) + 1);
  for (const b of bits) bytes[b >> 3] |= 0x80 >> (b & 7);
  const last = bytes[bytes.length - 1];
  let unused = 0;
  while (unused < 7 && !(last & (1 << unused))) unused++;
  return derBitString(bytes, unused);
}

// Minimal reader, enough to find the key bits inside a SubjectPublicKeyInfo.
function readTlv(buf, pos) {
  let len = buf[pos + 1];
  let start = pos + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    len = buf.readUIntBE(start, n);
    start += n;
  }
  return { tag: buf[pos], start, end: start + len };
}

// ---- certificate pieces ----------------------------------------------------------------------

const name = (cn) => derSequence(derSet(derSequence(derOid(OID.commonName), derUtf8(cn))));
const SIG_ALG = derSequence(derOid(OID.ecdsaWithSHA256)); // ECDSA: parameters absent

// Key identifier: SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2, method 1).
export function keyIdentifier(publicKey) {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const outer = readTlv(spki, 0);
  const algorithm = readTlv(spki, outer.start);
  const bits = readTlv(spki, algorithm.end);
  return crypto.createHash('sha1').update(spki.subarray(bits.start + 1, bits.end)).digest();
}

// Extension: critical is DEFAULT FALSE, so DER leaves it out unless true.
function extension(oid, value, critical = false) {
  return derSequence(derOid(oid), ...(critical ? [DER_TRUE] : []), derOctetString(value));
}

function ipBytes(ip) {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${ip}`);
  }
  return Buffer.from(parts);
}

// GeneralName: dNSName [2] and iPAddress [7] are IMPLICIT, hence primitive context tags.
const dnsName = (d) => tlv(0x82, Buffer.from(d, 'ascii'));
const ipAddress = (bytes) => tlv(0x87, bytes);

function subjectAltName({ dns, ip }) {
  return derSequence(...dns.map(dnsName), ...ip.map((a) => ipAddress(ipBytes(a))));
}

// Every name some server certificate carries, each once.
export function serverNames() {
  const all = Object.values(CERTS);
  return { dns: [...new Set(all.flatMap((c) => c.dns))], ip: [...new Set(all.flatMap((c) => c.ip))] };
}

// NameConstraints (RFC 5280 4.2.1.10) permitting only the servers' names. A dNSName subtree also
// admits the names below it (haproxy admits x.haproxy), the tightest a DNS constraint can be; an
// iPAddress subtree is address then mask, here each address alone (/32). permittedSubtrees [0]
// is IMPLICIT, so its tag replaces the SEQUENCE OF; GeneralSubtree's minimum (DEFAULT 0) and
// maximum (absent) are left out.
export function nameConstraints({ dns, ip }) {
  const hostMask = Buffer.from([255, 255, 255, 255]);
  const subtrees = [
    ...dns.map((d) => derSequence(dnsName(d))),
    ...ip.map((a) => derSequence(ipAddress(Buffer.concat([ipBytes(a), hostMask])))),
  ];
  return derSequence(tlv(0xa0, ...subtrees));
}

// pathLenConstraint 0: the CA issues server certificates only, never another CA.
export function caExtensions(publicKey) {
  return [
    extension(OID.basicConstraints, derSequence(DER_TRUE, derInteger(0)), true),
    extension(OID.keyUsage, derNamedBits([KU.keyCertSign, KU.cRLSign]), true),
    extension(OID.subjectKeyIdentifier, derOctetString(keyIdentifier(publicKey))),
    extension(OID.nameConstraints, nameConstraints(serverNames()), true),
  ];
}

// digitalSignature only, RSA too: keyEncipherment serves static-RSA key exchange, which neither
// TLS 1.3 nor HAProxy's TLS 1.2 cipher list (ECDHE and DHE only, Mozilla intermediate) offers.
export function serverExtensions(publicKey, caPublicKey, names) {
  return [
    extension(OID.basicConstraints, derSequence(), true), // cA DEFAULT FALSE: empty sequence
    extension(OID.keyUsage, derNamedBits([KU.digitalSignature]), true),
    extension(OID.extKeyUsage, derSequence(derOid(OID.serverAuth))),
    extension(OID.subjectKeyIdentifier, derOctetString(keyIdentifier(publicKey))),
    extension(OID.authorityKeyIdentifier, derSequence(tlv(0x80, keyIdentifier(caPublicKey)))),
    extension(OID.subjectAltName, subjectAltName(names)),
  ];
}

// 16 random bytes, top bit cleared (positive) and the next one set, so DER keeps all 16.
export function randomSerial() {
  const bytes = crypto.randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes;
}

// The [3] EXPLICIT extensions field, as it appears inside a TBSCertificate.
const extensionsField = (extensions) => derExplicit(3, derSequence(...extensions));

// Builds, signs (ecdsa-with-SHA256) and returns the certificate as PEM.
export function buildCertificate({ issuer, subject, notBefore, notAfter, publicKey, extensions, signingKey }) {
  if (signingKey.asymmetricKeyType !== 'ec') throw new Error('the signing key must be ECDSA (ecdsa-with-SHA256)');
  const tbs = derSequence(
    derExplicit(0, derInteger(2)), // version v3
    derInteger(randomSerial()),
    SIG_ALG,
    name(issuer),
    derSequence(derTime(notBefore), derTime(notAfter)),
    name(subject),
    publicKey.export({ type: 'spki', format: 'der' }),
    extensionsField(extensions),
  );
  const signature = crypto.sign('sha256', tbs, signingKey); // DER ECDSA-Sig-Value by default
  return new crypto.X509Certificate(derSequence(tbs, SIG_ALG, derBitString(signature))).toString();
}

// ---- generation and checking -----------------------------------------------------------------

const second = (ms) => new Date(Math.floor(ms / 1000) * 1000);

function newKey(kind) {
  return kind === 'rsa'
    ? crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
    : crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

const pkcs8 = (privateKey) => privateKey.export({ type: 'pkcs8', format: 'pem' });

// Everything in memory: { 'ca.crt': pem, 'rsa.pem': cert+key, 'ecdsa.pem': ... }. The CA's key
// is dropped on return. The CA has the servers' validity: it signs only these two certificates,
// and is made again with them: a longer life would vouch for nothing more.
export function generateCertificates({ now = new Date() } = {}) {
  const t = now.getTime();
  const notBefore = second(t - HOUR); // an hour of slack for clocks a little behind
  const notAfter = second(t + SERVER_DAYS * DAY);
  const ca = newKey('ec');
  const files = {
    [CA.cert]: buildCertificate({
      issuer: CA.commonName, subject: CA.commonName, notBefore, notAfter,
      publicKey: ca.publicKey, extensions: caExtensions(ca.publicKey), signingKey: ca.privateKey,
    }),
  };
  for (const [kind, names] of Object.entries(CERTS)) {
    const key = newKey(kind);
    files[names.file] = buildCertificate({
      issuer: CA.commonName, subject: SERVER_CN, notBefore, notAfter,
      publicKey: key.publicKey, extensions: serverExtensions(key.publicKey, ca.publicKey, names),
      signingKey: ca.privateKey,
    }) + pkcs8(key.privateKey); // HAProxy's crt file: certificate first, then its key
  }
  return files;
}

// Splits a cert+key PEM file (either order) into its two blocks.
export function splitPem(text) {
  const cert = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/);
  const key = text.match(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n?/);
  if (!cert || !key) throw new Error('expected a CERTIFICATE and a PRIVATE KEY block');
  return { cert: cert[0], key: key[0] };
}

function readServer(dir, names) {
  const { cert, key } = splitPem(fs.readFileSync(path.join(dir, names.file), 'utf8'));
  return { cert: new crypto.X509Certificate(cert), key: crypto.createPrivateKey(key), names };
}

// Why the files in dir cannot be kept, or { ok: true, validUntil } (the earliest expiry).
export function checkCertificates(dir, { now = new Date() } = {}) {
  if (fs.existsSync(path.join(dir, STORED_CA_KEY))) return { ok: false, reason: `${STORED_CA_KEY} present (a stored CA key)` };
  const wanted = [CA.cert, ...Object.values(CERTS).map((c) => c.file)];
  const missing = wanted.filter((f) => !fs.existsSync(path.join(dir, f)));
  if (missing.length) return { ok: false, reason: `missing ${missing.join(', ')}` };
  try {
    const caCert = new crypto.X509Certificate(fs.readFileSync(path.join(dir, CA.cert)));
    const all = [{ cert: caCert, key: null, names: null }, ...Object.values(CERTS).map((c) => readServer(dir, c))];
    const problem = all.map((p) => certProblem(p, caCert, now)).find(Boolean);
    if (problem) return { ok: false, reason: problem };
    const expiries = all.map((p) => new Date(p.cert.validTo).getTime());
    return { ok: true, validUntil: new Date(Math.min(...expiries)) };
  } catch (err) {
    // Not a reason to make the set again (it would be, on every start): the key files belong to
    // another user, and root without CAP_DAC_READ_SEARCH cannot read them.
    if (err.code === 'EACCES') throw new Error(`${err.path}: not readable (EACCES); key files of another owner need CAP_DAC_READ_SEARCH`);
    return { ok: false, reason: `unreadable: ${err.message}` };
  }
}

// One certificate's problem as a string, or null; names and key are null for the CA itself. The
// extensions must be the ones made here, byte for byte (they depend only on the keys and names),
// so a set made with other constraints, usages or names is made again.
function certProblem({ cert, key, names }, caCert, now) {
  const file = names ? names.file : CA.cert;
  if (key && !cert.checkPrivateKey(key)) return `${file}: key does not match the certificate`;
  if (cert.ca !== (names === null)) return `${file}: CA flag is ${cert.ca}`;
  if (!cert.checkIssued(caCert) || !cert.verify(caCert.publicKey)) return `${file}: not issued by ${CA.cert}`;
  const expected = names ? serverExtensions(cert.publicKey, caCert.publicKey, names) : caExtensions(cert.publicKey);
  if (!cert.raw.includes(extensionsField(expected))) return `${file}: extensions differ from those made here`;
  if (new Date(cert.validFrom) > now) return `${file}: not valid before ${cert.validFrom}`;
  const remaining = new Date(cert.validTo).getTime() - now.getTime();
  if (remaining < MIN_REMAINING_DAYS * DAY) return `${file}: expires ${cert.validTo}`;
  const lacking = names ? [...names.dns.filter((d) => !cert.checkHost(d)), ...names.ip.filter((a) => !cert.checkIP(a))] : [];
  return lacking.length ? `${file}: lacks ${lacking.join(', ')}` : null;
}

// ---- files -----------------------------------------------------------------------------------

// chown needs root (or the file's owner giving it to itself): one line saying so if refused.
function chownTo(target, { uid, gid }, shownAs) {
  try {
    fs.chownSync(target, uid, gid);
  } catch (err) {
    throw new Error(`${shownAs}: cannot chown to ${uid}:${gid} (${err.code ?? err.message}); --key-owner needs root`);
  }
}

// Temp file in the same directory, then rename: readers never see a half-written file, nor one
// with a mode or owner ({ uid, gid }, if given) it is not meant to have.
export function writeAtomic(dir, file, content, mode, owner = null) {
  const tmp = path.join(dir, `.${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  try {
    fs.writeFileSync(tmp, content, { mode, flag: 'wx' });
    fs.chmodSync(tmp, mode); // the umask may have narrowed the mode given above
    if (owner) chownTo(tmp, owner, path.join(dir, file));
    fs.renameSync(tmp, path.join(dir, file));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

function assertWritableDir(dir) {
  let stat;
  try {
    stat = fs.statSync(dir);
  } catch {
    throw new Error(`${dir}: no such directory`);
  }
  if (!stat.isDirectory()) throw new Error(`${dir}: not a directory`);
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new Error(`${dir}: not writable`);
  }
}

// A kept key file whose mode or owner differs from what is asked now (HAProxy's uid may have
// changed) is rewritten, same bytes: chmod of a file given to another user needs CAP_FOWNER,
// a new file of our own needs nothing more than the chown writeAtomic does anyway.
function protectKeyFiles(dir, owner) {
  for (const c of Object.values(CERTS)) {
    const stat = fs.statSync(path.join(dir, c.file));
    const ownerOk = !owner || (stat.uid === owner.uid && stat.gid === owner.gid);
    if ((stat.mode & 0o777) === KEY_MODE && ownerOk) continue;
    writeAtomic(dir, c.file, fs.readFileSync(path.join(dir, c.file)), KEY_MODE, owner);
  }
}

// caDir's ca.crt follows dir's; rewritten only when it differs.
function copyCaCert(dir, caDir) {
  const pem = fs.readFileSync(path.join(dir, CA.cert));
  const target = path.join(caDir, CA.cert);
  if (fs.existsSync(target) && fs.readFileSync(target).equals(pem)) return;
  writeAtomic(caDir, CA.cert, pem, 0o644);
}

// Keeps valid certificates byte for byte; otherwise replaces all three files with a new CA, so
// the servers' certificates always come from the CA beside them. Only the server files hold keys:
// KEY_MODE, owned by keyOwner ({ uid, gid }) when given. ca.crt is public: 0644 in dir (for
// "docker compose cp haproxy:/etc/haproxy-certs/ca.crt ."), and in caDir when given.
export function ensureCertificates(dir, { now = new Date(), caDir = null, keyOwner = null } = {}) {
  assertWritableDir(dir);
  if (caDir !== null) assertWritableDir(caDir);
  const check = checkCertificates(dir, { now });
  const alsoIn = caDir === null ? '' : `; ${CA.cert} also in ${caDir}`;
  if (check.ok) {
    protectKeyFiles(dir, keyOwner);
    if (caDir !== null) copyCaCert(dir, caDir);
    return { created: false, validUntil: check.validUntil, message: `certificates kept in ${dir} (valid until ${check.validUntil.toISOString()})${alsoIn}` };
  }
  const files = generateCertificates({ now });
  writeAtomic(dir, CA.cert, files[CA.cert], 0o644);
  for (const c of Object.values(CERTS)) writeAtomic(dir, c.file, files[c.file], KEY_MODE, keyOwner);
  fs.rmSync(path.join(dir, STORED_CA_KEY), { force: true });
  if (caDir !== null) copyCaCert(dir, caDir);
  const list = Object.values(CERTS).map((c) => `${c.file} (${c.label})`).join(', ');
  return { created: true, reason: check.reason, message: `certificates created in ${dir}: ${CA.cert}, ${list}${alsoIn}` };
}

const USAGE = 'usage: node tls/make-certs.mjs [--key-owner UID:GID] [--ca-dir CADIR] DIR';

// "UID:GID", both numeric: the container that chowns has no user database for HAProxy's names.
export function parseOwner(text) {
  const match = /^(\d+):(\d+)$/.exec(text);
  if (!match) throw new Error(`--key-owner: expected UID:GID (numbers), found ${JSON.stringify(text)}`);
  return { uid: Number(match[1]), gid: Number(match[2]) };
}

// args → { dir, caDir, keyOwner }, or a usage error.
export function parseCli(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args, allowPositionals: true, strict: true,
      options: { 'key-owner': { type: 'string' }, 'ca-dir': { type: 'string' } },
    });
  } catch {
    throw new Error(USAGE);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || positionals[0].startsWith('-')) throw new Error(USAGE);
  const keyOwner = values['key-owner'] === undefined ? null : parseOwner(values['key-owner']);
  return { dir: positionals[0], caDir: values['ca-dir'] ?? null, keyOwner };
}

export function main(args = process.argv.slice(2)) {
  try {
    const { dir, caDir, keyOwner } = parseCli(args);
    console.log(ensureCertificates(dir, { caDir, keyOwner }).message);
    return 0;
  } catch (err) {
    console.error(`make-certs: ${String(err.message).split('\n')[0]}`);
    return 1;
  }
}

// Run only as a command, not when imported by tests. realpath: Node resolves the main module's
// symlinks, so import.meta.url names the real file.
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  process.exitCode = main();
}
