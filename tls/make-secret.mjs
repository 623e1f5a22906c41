// make-secret.mjs FILE: a random secret (32 hex characters) in FILE, made once: a later start
// keeps it. Grafana's admin password (GF_SECURITY_ADMIN_PASSWORD__FILE): anonymous visitors are
// Viewers, and what writes (the runner's annotations) authenticates with it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeAtomic } from './make-certs.mjs';

const SECRET = /^[0-9a-f]{32}$/;

// ensureSecret FILE → a message: FILE kept if it holds a secret, else made (readable by every
// user: the volume is mounted only where the secret is used, by users of several uids).
export function ensureSecret(file) {
  let current = null;
  try {
    current = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code !== 'ENOENT') throw new Error(`${file}: ${err.code}`);
  }
  if (current !== null && SECRET.test(current)) return `secret kept in ${file}`;
  try {
    writeAtomic(path.dirname(file), path.basename(file), crypto.randomBytes(16).toString('hex'), 0o444);
  } catch (err) {
    throw new Error(`${file}: ${err.code ?? err.message}`);
  }
  return `secret made in ${file}`;
}

export function main(args = process.argv.slice(2)) {
  try {
    if (args.length !== 1 || args[0].startsWith('-')) throw new Error('usage: node tls/make-secret.mjs FILE');
    console.log(ensureSecret(args[0]));
    return 0;
  } catch (err) {
    console.error(`make-secret: ${String(err.message).split('\n')[0]}`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) {
  process.exitCode = main();
}
