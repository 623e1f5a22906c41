// The guard on the scenarios' published figures and tolerances
// (tests/lib/scenario-figures.mjs, run by tests/static-scenarios.sh): what
// changes a scenario's digest and what does not, and the line a changed
// scenario gives on a copy of the lab.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIXTURE, check, digest } from '../../../tests/lib/scenario-figures.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const shipped = (name) => JSON.parse(fs.readFileSync(path.join(root, 'scenarios', `${name}.json`), 'utf8'));
const made = [];
after(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// changed NAME CHANGE: scenario NAME with CHANGE applied.
const changed = (name, change) => { const s = structuredClone(shipped(name)); change(s); return s; };

test('a tolerance, a published figure, a wall\'s expectation, a model or a reading\'s threshold changes the digest', () => {
  const sweep = digest(shipped('maxconn-sweep'));
  assert.notEqual(digest(changed('maxconn-sweep', (s) => { s.steps[0].expect.successful = '±4%'; })), sweep, 'a step\'s tolerance');
  assert.notEqual(digest(changed('maxconn-sweep', (s) => { s.steps[4].published.successful = 901; })), sweep, 'a published figure');
  const connections = digest(shipped('connections'));
  assert.notEqual(digest(changed('connections', (s) => { s.connections.past_the_wall.expect.haproxy_conns_peak = '±2%of:wall'; })), connections, 'past the wall');
  assert.notEqual(digest(changed('connections', (s) => { s.readings.find((r) => r.kind === 'breakdown').drain_at_least = 0.8; })), connections, 'a reading\'s threshold');
  const timeout = digest(shipped('backend-timeout'));
  assert.notEqual(digest(changed('backend-timeout', (s) => { s.model.rate_x_timeout = 'RATE * 2'; })), timeout, 'the model a ±N%of: compares with');
});

test('notes, labels, loads and the order of keys leave the digest as it is', () => {
  const sweep = shipped('maxconn-sweep');
  const same = changed('maxconn-sweep', (s) => {
    s.notes.push('another note');
    s.steps[0].label = 'renamed';
    s.load.env.DURATION = '31s';
    s.steps[1] = Object.fromEntries(Object.entries(s.steps[1]).reverse());
  });
  assert.equal(digest(same), digest(sweep));
});

test('a changed scenario fails the guard, naming it, both digests and the e2e tests that run it', () => {
  const lab = fs.mkdtempSync(path.join(os.tmpdir(), 'scenario-figures-'));
  made.push(lab);
  for (const shared of ['lessons', 'tests']) fs.symlinkSync(path.join(root, shared), path.join(lab, shared));
  fs.cpSync(path.join(root, 'scenarios'), path.join(lab, 'scenarios'), { recursive: true });
  assert.deepEqual(check(lab), [], 'the lab as it is');
  const before = digest(shipped('maxconn-sweep'));
  const after = changed('maxconn-sweep', (s) => { s.steps[0].expect.successful = '±4%'; });
  fs.writeFileSync(path.join(lab, 'scenarios/maxconn-sweep.json'), JSON.stringify(after));
  fs.writeFileSync(path.join(lab, 'scenarios/new.json'), JSON.stringify(shipped('oom')));
  const problems = check(lab);
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.match(problems[0], new RegExp(`^scenarios/maxconn-sweep\\.json: its published figures or tolerances changed: digest expected ${before}, found ${digest(after)}: `
    + `update ${FIXTURE} \\("maxconn-sweep": "${digest(after)}"\\) and, in the same change, the e2e test that runs it: .*test_slow_08_maxconn_sweep_reproduces_the_article \\(tests/e2e-closed\\.sh, tests/e2e/checks/verdicts\\.test\\.mjs\\)`));
  assert.match(problems[1], /^scenarios\/new\.json: a scenario the fixture does not know, digest [0-9a-f]{64}: update .*none found/);
});
