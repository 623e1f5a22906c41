// The runner's cost per step from a run's docker calls (scripts/step-cost.sh's log).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { costTable, parseCalls, stepCost } from '../run/step-cost.mjs';

const id = (c) => c.repeat(64);
// Two steps: each applies its config, starts and waits for the tool, removes it.
const log = [
  `1000 50 compose --profile load ps -q`, // before the first step: not counted
  `2000 200 exec -i ${id('a')} bash -c cat > /var/lib/haproxy/candidate.cfg && haproxy -c`,
  `2300 700 compose --profile load up -d --no-deps --scale loadgen=1 loadgen`,
  `3100 9000 wait ${id('b')}`,
  `3150 100 exec -i ${id('c')} cat /proc/net/netstat`,
  `12500 60 rm -f ${id('b')}`,
  `12700 200 exec -i ${id('a')} bash -c cat > /var/lib/haproxy/candidate.cfg && haproxy -c`,
  `12950 150 exec -i ${id('a')} bash -c cat > /var/lib/haproxy/candidate.cfg && haproxy -c`, // a second container
  `13200 8000 wait ${id('d')} ${id('e')}`,
  `21500 100 rm -f ${id('d')} ${id('e')}`,
  `21700 300 exec -i ${id('a')} ln -sfn /usr/local/etc/haproxy/haproxy.cfg /var/lib/haproxy/live.cfg`, // after: not counted
].join('\n');

test('each step from its config to its tool removed, the tool waited for apart', () => {
  assert.deepEqual(stepCost(parseCalls(log)), [
    { step: 1, wallMs: 10560, toolMs: 9000, fixedMs: 1560, calls: 5 },
    { step: 2, wallMs: 8900, toolMs: 8000, fixedMs: 900, calls: 4 },
  ]);
});

test('the table ends with the mean fixed cost and the calls', () => {
  const lines = costTable(parseCalls(log)).split('\n');
  assert.equal(lines.at(-2), 'fixed cost per step: 1.23 s on average (0.90-1.56 s), over 2 steps');
  assert.equal(lines.at(-1), 'docker calls: 11 in the run (5 a step); the run\'s docker activity spans 21.00 s');
});

test('a line not of the shim is named', () => {
  assert.throws(() => parseCalls('hello world\n'), /not a "START_MS DURATION_MS ARGS" line: hello world/);
});

test('a run with no step says so', () => {
  assert.equal(costTable(parseCalls('1 2 ps -q\n')), 'no step found (no config applied and load tool removed in these calls)');
});
