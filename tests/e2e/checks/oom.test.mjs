// oom --quick (E2E_RUN): every verdict passed (the scenario's: the trap's OOM
// kill, the fix holding every connection). The trap step's report quotes
// HAProxy's own words from its log, which holds no terminal escape byte
// (read from the engine, whatever Compose displays).
import assert from 'node:assert/strict';
import test from 'node:test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runDir, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test("HAProxy's logs hold no escape byte", () => {
  const steps = readdirSync(join(runDir(), 'steps'));
  const escaped = steps.filter((step) => readFileSync(join(runDir(), 'steps', step, 'haproxy-log.txt'), 'latin1').includes('\x1b'));
  assert.deepEqual(escaped, [], `steps whose haproxy-log.txt has an ESC byte: expected none of ${steps.join(', ')}`);
});

test("the report quotes HAProxy: the worker killed (code 137)", () => {
  const said = readFileSync(join(runDir(), 'report.md'), 'utf8').split('\n').filter((l) => l.startsWith('- HAProxy said:'));
  assert.ok(said.some((l) => /exited with code 137/.test(l)),
    `report.md's "- HAProxy said:" lines: expected one with the worker's exit code 137, found ${JSON.stringify(said)}`);
});
