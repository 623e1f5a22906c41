// Shared by the e2e checks (tests/e2e/checks/*.test.mjs), which the bash
// tests run in the lab's node image with the repository mounted at /lab and
// their inputs in the environment (tests/e2e.sh, e2e_check).
import assert from 'node:assert/strict';
import test from 'node:test';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
  test(`${s.scenario}: HAProxy was sampled every second while the load ran`, () => {
    const gaps = sampleGaps();
    assert.ok(Object.keys(gaps).length > 0, `${runDir()}/steps/*/*-samples.txt: expected HAProxy's samples, found none`);
    const late = Object.entries(gaps).filter(([, gap]) => gap > MOST_SAMPLE_GAP_MS);
    const shown = late.slice(0, 4).map(([name, gap]) => `${name} ${gap} ms`).join(', ');
    assert.equal(late.length, 0, `the longest gap between two samples: expected at most ${MOST_SAMPLE_GAP_MS} ms, found ${late.length} instance(s) over: ${shown}${late.length > 4 ? ', …' : ''}`);
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

// A sampler reads every HAProxy process once a second in one long-lived
// process (scripts/probes/haproxy-sockets.mjs), not an exec per sample, which a big
// ramp delays by many seconds. 3.5 s leaves a busy machine its jitter.
const MOST_SAMPLE_GAP_MS = 3500;

// sampleGaps(): { "STEP/INSTANCE": the longest time between two samples, ms }
// over every step's INSTANCE-samples.txt (its at_ms column).
export function sampleGaps() {
  const gaps = {};
  const steps = join(runDir(), 'steps');
  for (const step of existsSync(steps) ? readdirSync(steps) : []) {
    for (const file of readdirSync(join(steps, step)).filter((f) => f.endsWith('-samples.txt') && f !== 'cpu-samples.txt')) {
      const at = readFileSync(join(steps, step, file), 'utf8').trim().split('\n').slice(1)
        .map((line) => line.split(' ')[5]).filter((field) => /^\d+$/.test(field)).map(Number);
      if (at.length < 2) continue;
      gaps[`${step}/${file.replace(/-samples\.txt$/, '')}`] = Math.max(...at.slice(1).map((t, i) => t - at[i]));
    }
  }
  return gaps;
}
