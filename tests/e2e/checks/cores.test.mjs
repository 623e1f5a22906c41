// cores --quick (E2E_RUN): HAProxy on 1, 2, … cores of its own, as many as
// the machine fits beside a client as big: each step's cpuset read back as
// its core count, one scaling line per step, and the plan's one line on
// what it left out (on a machine under 4 cores, everything but 1 core).
import assert from 'node:assert/strict';
import test from 'node:test';
import { perStep, summary, testFinished } from './lib.mjs';

const s = summary();
testFinished(s);

test('each step ran HAProxy on as many cores of its own as it names, read back from its cpuset', () => {
  const allowances = perStep(s, 'haproxy_allowance');
  assert.deepEqual(allowances, Object.fromEntries(s.rows.map((r) => [r.id, r.cores])), 'haproxy_allowance: expected each step\'s cores');
  const busy = perStep(s, 'haproxy_core_busy_pct');
  assert.ok(Object.values(busy).every((b) => Number.isFinite(b) && b > 0), `haproxy_core_busy_pct: expected a reading on every step, found ${JSON.stringify(busy)}`);
});

test('one scaling line per step, and the plan says in one line why the others are left out', () => {
  const lines = s.readings.filter((l) => /^HAProxy on \d+ cores?: [\d,]+ requests\/s, [\d,]+ per core; its cores \d+% busy/.test(l));
  assert.equal(lines.length, s.rows.length, `scaling lines: expected ${s.rows.length}, found ${JSON.stringify(s.readings)}`);
  const planned = s.rows.map((r) => r.cores);
  if (Math.max(...planned) < 8) {
    assert.ok(s.notes.some((n) => /^This machine runs HAProxy on [\d, ]+ cores? only: .* Docker sees \d+ \(docker info's NCPU\)\.$/.test(n)),
      `notes: expected the line on the steps left out, found ${JSON.stringify(s.notes)}`);
  }
});
