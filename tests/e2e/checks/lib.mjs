// Shared by the e2e checks (tests/e2e/checks/*.test.mjs), which the bash
// tests run in the lab's node image with the repository mounted at /lab and
// their inputs in the environment (tests/e2e.sh, e2e_check).
import assert from 'node:assert/strict';
import test from 'node:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// env NAME: a required input of the check.
export function env(name) {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this check through e2e_check (tests/e2e.sh)`);
  return value;
}

// The run folder E2E_RUN names (results/<scenario>/<time>) and its summary.json.
export const runDir = () => env('E2E_RUN');
export const summary = () => JSON.parse(readFileSync(join(runDir(), 'summary.json'), 'utf8'));
export const incompleteMarker = () => existsSync(join(runDir(), 'INCOMPLETE'));

// column(s, name): each step's measured NAME ("no data" for a step without).
export const column = (s, name) => s.rows.map((r) => (r.measured ? r.measured[name] : 'no data'));

// perStep(s, name): { step id: measured NAME }, what a failed assertion shows.
export const perStep = (s, name) => Object.fromEntries(s.rows.map((r) => [r.id, r.measured ? r.measured[name] : 'no data']));

// The run finished (no INCOMPLETE marker, summary.json not marked) and every
// step has data; with verdicts: true, every verdict passed as well (what
// scripts/scenario.sh's exit 0 says).
export function testFinished(s, { verdicts = false } = {}) {
  test(`${s.scenario}: the run finished, every step has data`, () => {
    assert.equal(incompleteMarker(), false, `${runDir()}/INCOMPLETE: expected none, found one`);
    assert.equal(s.incomplete, null, `summary.json's incomplete: expected null, found ${JSON.stringify(s.incomplete)}`);
    assert.deepEqual(s.rows.filter((r) => !r.measured).map((r) => r.id), [], 'steps without data: expected none');
  });
  if (!verdicts) return;
  test(`${s.scenario}: every verdict passed`, () => {
    const failed = s.rows.flatMap((r) =>
      Object.entries(r.verdicts ?? {})
        .filter(([, v]) => !v.ok && !v.info)
        .map(([name, v]) => `${r.id} ${name}: ${v.text}`),
    );
    assert.equal(s.ok, true, `summary.json's ok: expected true, found ${s.ok}; failed verdicts: ${failed.join('; ') || 'none in the steps'}`);
  });
}
