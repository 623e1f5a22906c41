// The full maxconn-sweep (E2E_RUN) against the article (Chaidas 2016): the
// successful hits of each step within 3% of 180/360/540/720/900 (hits =
// maxconn x 9), failures on every step where maxconn < the 100 clients and
// none on the last.
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s, { verdicts: true });

test('5 steps, maxconn 20 to 100', () => {
  assert.deepEqual(s.rows.map((r) => r.id), ['maxconn-20', 'maxconn-40', 'maxconn-60', 'maxconn-80', 'maxconn-100'], 'steps of the run');
});

test('successful hits per step within 3% of the article', () => {
  const found = s.rows.map((r) => ({
    step: r.id,
    published: r.published.successful,
    measured: r.measured?.successful,
    within3pct: Math.abs(r.measured?.successful - r.published.successful) <= 0.03 * r.published.successful,
  }));
  assert.deepEqual(found, found.map((f) => ({ ...f, within3pct: true })), 'successful hits per step vs the article ±3%');
});

test('failures exactly where maxconn < clients', () => {
  const found = s.rows.map((r) => `${r.id}: ${r.measured?.failed > 0 ? 'some failed' : 'none failed'}`);
  assert.deepEqual(
    found,
    ['maxconn-20: some failed', 'maxconn-40: some failed', 'maxconn-60: some failed', 'maxconn-80: some failed', 'maxconn-100: none failed'],
    `failed requests per step (found ${JSON.stringify(perStep(s, 'failed'))}) where maxconn < the 100 clients, and only there`,
  );
});
