// A scenario run on the practice Swarm (E2E_RUN, scripts/scenario.sh ...
// --swarm) against the same scenario on one host (E2E_ONE_HOST): the same
// steps, each with the same verdict, and every load-generator replica ran on
// a node other than HAProxy's (E2E_HAPROXY_NODE), to its end, exit 0
// (DIR/SERVICE-tasks.txt: "SLOT NODE STATE EXIT"), every other node
// (E2E_CLIENT_NODES) running some.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { env, runDir, summary, testFinished } from './lib.mjs';

const swarm = summary();
const oneHost = JSON.parse(readFileSync(join(env('E2E_ONE_HOST'), 'summary.json'), 'utf8'));
const haproxyNode = env('E2E_HAPROXY_NODE');
testFinished(swarm, { verdicts: true });

test(`${swarm.scenario}: the same steps, each with the one host's verdict`, () => {
  const verdicts = (s) => Object.fromEntries(s.rows.map((r) => [r.id, r.verdict]));
  assert.deepEqual(verdicts(swarm), verdicts(oneHost), `verdicts per step on the Swarm (${runDir()}) and on one host (${env('E2E_ONE_HOST')})`);
});

test(`${swarm.scenario}: every load-generator replica ran on another node than HAProxy's (${haproxyNode}), to its end`, () => {
  const steps = readdirSync(join(runDir(), 'steps'));
  const tasks = steps.flatMap((step) => readdirSync(join(runDir(), 'steps', step)).filter((f) => f.endsWith('-tasks.txt'))
    .flatMap((f) => readFileSync(join(runDir(), 'steps', step, f), 'utf8').split('\n').filter((l) => l && !l.startsWith('#'))
      .map((l) => { const [slot, node, state, exit] = l.split(/\s+/); return { step, slot, node, state, exit }; })));
  assert.ok(tasks.length >= steps.length, `replicas recorded in steps/*/*-tasks.txt: expected one a step at least, found ${tasks.length}`);
  assert.deepEqual(tasks.filter((t) => t.node === haproxyNode || t.state !== 'complete' || t.exit !== '0'), [],
    `replicas on HAProxy's node, not complete or not exit 0 (of ${JSON.stringify(tasks)})`);
  assert.deepEqual([...new Set(tasks.map((t) => t.node))].sort(), env('E2E_CLIENT_NODES').split(' ').sort(), 'the nodes that ran replicas: every node but HAProxy\'s');
});
