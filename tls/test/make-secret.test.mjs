import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { ensureSecret, main } from '../make-secret.mjs';

function tempDir() { return fs.mkdtempSync(path.join(os.tmpdir(), 'make-secret-')); }

test('a secret is made once: 32 hex characters, mode 0444, kept by a second start', () => {
  const file = path.join(tempDir(), 'admin-password');
  assert.match(ensureSecret(file), /made/);
  const first = fs.readFileSync(file, 'utf8');
  assert.match(first, /^[0-9a-f]{32}$/);
  assert.equal(fs.statSync(file).mode & 0o777, 0o444);
  assert.match(ensureSecret(file), /kept/);
  assert.equal(fs.readFileSync(file, 'utf8'), first);
});

test('a file that holds no secret (empty, or a typed word) is replaced by one', () => {
  const file = path.join(tempDir(), 'admin-password');
  fs.writeFileSync(file, 'admin');
  assert.match(ensureSecret(file), /made/);
  assert.match(fs.readFileSync(file, 'utf8'), /^[0-9a-f]{32}$/);
});

test('two secrets differ', () => {
  const dir = tempDir();
  ensureSecret(path.join(dir, 'a'));
  ensureSecret(path.join(dir, 'b'));
  assert.notEqual(fs.readFileSync(path.join(dir, 'a'), 'utf8'), fs.readFileSync(path.join(dir, 'b'), 'utf8'));
});

test('no directory: one line, exit 1', () => {
  const errors = [];
  const original = console.error;
  console.error = (line) => errors.push(line);
  try {
    assert.equal(main([path.join(tempDir(), 'missing', 'admin-password')]), 1);
  } finally {
    console.error = original;
  }
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^make-secret: .*admin-password: ENOENT$/);
});
