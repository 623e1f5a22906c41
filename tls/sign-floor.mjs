// This machine's sign times with Node's crypto (one core): the floor of a
// full TLS handshake's server cost, when HAProxy's image has no openssl to
// ask (the official one). Prints NAME=value lines for tls-floor.env.
//   node tls/sign-floor.mjs [SECONDS]
import crypto from 'node:crypto';

// usPerSign KEY SECONDS: mean µs of one SHA-256 signature over SECONDS.
function usPerSign(key, seconds) {
  const data = crypto.randomBytes(32);
  let n = 0;
  const t0 = process.hrtime.bigint();
  const end = t0 + BigInt(Math.round(seconds * 1e9));
  let now = t0;
  while (now < end) {
    for (let i = 0; i < 20; i++) crypto.sign('sha256', data, key);
    n += 20;
    now = process.hrtime.bigint();
  }
  return Number(now - t0) / 1000 / n;
}

const seconds = Number(process.argv[2] ?? 2);
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
console.log(`rsa2048_sign_us=${usPerSign(rsa, seconds).toFixed(1)}`);
console.log(`ecdsap256_sign_us=${usPerSign(ec, seconds).toFixed(1)}`);
console.log(`floor_tool=Node ${process.version} crypto.sign`);
console.log(`floor_library=OpenSSL ${process.versions.openssl}`);
