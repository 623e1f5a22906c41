// The log readers on HAProxy's log as Compose 2.26's "docker compose logs"
// displays it (every line behind the terminal sequence ESC[2K, whatever
// --no-color or TTY) and as the engine stores it: the same terminations,
// alerts and reloads from both. Run folders recorded through Compose 2.26
// before the runner read logs from the engine hold the first kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { logLines, parseAlerts, parseReloads, parseTerminations } from '../evidence/parsers.mjs';

const plain = fs.readFileSync(new URL('./fixtures/haproxy-log.txt', import.meta.url), 'utf8');
const ERASE_LINE = '\x1b[2K';
const compose226 = plain.split('\n').map((l) => (l === '' ? l : ERASE_LINE + l)).join('\n');
const ALERTS = [
  '[WARNING]  (1) : Former worker (9) exited with code 0 (Exit)',
  '[ALERT]    (1) : Current worker (23) exited with code 137 (Killed)',
  '[ALERT]    (1) : exit-on-failure: killing every processes with SIGTERM',
  '[WARNING]  (1) : All workers exited. Exiting... (137)',
];

test('the 2.26-style log has an escape sequence on every line (what the readers must see through)', () => {
  const lines = compose226.split('\n').filter(Boolean);
  assert.equal(lines.filter((l) => l.startsWith(ERASE_LINE)).length, lines.length);
});

test('terminations: the same from the 2.26-style log as from the plain one', () => {
  assert.deepEqual(parseTerminations(plain), { SD: 2, CD: 1 });
  assert.deepEqual(parseTerminations(compose226), { SD: 2, CD: 1 });
});

test("alerts: HAProxy's own words, the same from both, with no escape byte", () => {
  assert.deepEqual(parseAlerts(plain), ALERTS);
  assert.deepEqual(parseAlerts(compose226), ALERTS);
});

test('reloads the master logged: the same from both', () => {
  assert.equal(parseReloads(plain), 2);
  assert.equal(parseReloads(compose226), 2);
});

test('logLines drops colour and cursor sequences, keeps the text and CRLF-free lines', () => {
  assert.deepEqual(logLines('\x1b[2K\x1b[31m[ALERT]\x1b[0m x\r\nplain'), ['[ALERT] x', 'plain']);
  assert.deepEqual(logLines(null), ['']);
});
