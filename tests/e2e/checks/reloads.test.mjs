// Reloads the e2e tests made (tests/e2e-reloads.sh), judged on HAProxy's
// log as the engine stored it, read by the runner's own log reader:
//   E2E_LOG      HAProxy's log of the reloads (a file under the repository)
//   E2E_RELOADS  the reloads HAProxy's master counted meanwhile (show proc)
import assert from 'node:assert/strict';
import test from 'node:test';
import { readFileSync } from 'node:fs';
import { parseReloads } from '../../../scripts/labctl/evidence/parsers.mjs';
import { env } from './lib.mjs';

const log = readFileSync(env('E2E_LOG'), 'utf8');
const counted = Number(env('E2E_RELOADS'));

test(`HAProxy's log says ${counted} reloads succeeded, as its master counted`, () => {
  assert.equal(parseReloads(log), counted,
    `"Loading success" lines in ${env('E2E_LOG')}: expected ${counted} (the master's count), found ${parseReloads(log)}`);
});

test('the log as stored holds no terminal escape byte', () => {
  const escaped = log.split('\n').filter((l) => l.includes('\x1b'));
  assert.deepEqual(escaped.slice(0, 3), [], `lines with an ESC byte in ${env('E2E_LOG')}: expected none, found ${escaped.length}`);
});
