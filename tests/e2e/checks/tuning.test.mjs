// tuning --quick (E2E_RUN): every step ran on the listening socket it asked
// for (fe_main's backlog 128, read back with ss), and the accept queue was
// measured: at maxconn 2000 it fills and the kernel drops SYNs that the
// clients retransmit; at maxconn 5000 HAProxy takes more than 2000 at once.
import assert from 'node:assert/strict';
import test from 'node:test';
import { column, perStep, summary, testFinished } from './lib.mjs';

const s = summary();
const [m2000, , m5000] = s.rows.map((r) => r.measured ?? {});
testFinished(s);

test('fe_main backlog read back with ss after each step: 128', () => {
  assert.deepEqual(column(s, 'backlog'), s.rows.map(() => 128), `fe_main backlog per step (${JSON.stringify(perStep(s, 'backlog'))})`);
});

// Capped: the kernel admits backlog + 1 (129), a racing CPU one or two more.
// That it was full is the listen overflows' proof (the next test: the kernel
// counts one only when the queue is full). The sampler reads the queue through
// docker exec, about every 2 s on a busy CI machine, and can miss the full
// moments: one CI run sampled 0, 0, 123 (HAProxy still accepting, 1546
// connections), 116 (2000 connections, before the next SYN retry wave), 0.
// So the sampled longest queue must be most of the backlog, and never above it.
test('accept queue filled and capped at maxconn 2000 (backlog 128)', () => {
  const longest = m2000.accept_queue_max;
  assert.ok(longest >= 96 && longest <= 132, `longest accept queue sampled at maxconn 2000: expected 96 (three quarters of the backlog) to 132 (backlog 128 + 1, a racing CPU one or two more), found ${longest}`);
});

test('listen overflows and client SYN retransmits at maxconn 2000', () => {
  const found = { listen_overflows: m2000.listen_overflows, syn_retrans: m2000.syn_retrans };
  assert.ok(found.listen_overflows > 0 && found.syn_retrans > 0, `at maxconn 2000: expected listen overflows > 0 and SYN retransmits > 0, found ${JSON.stringify(found)}`);
});

// What maxconn changes is HAProxy's own: at 2000 it holds 2000 sessions at most
// and counts maxconn reached, at 5000 it takes more than 2000 at once and never
// reaches it. Those counters hold on any machine. How long the clients' connects
// took does not: a connect completes when the kernel puts it in the accept
// queue, not when HAProxy takes it, so it depends on when the queue had room.
// A CI run on a slower machine gave maxconn 5000 195 connects of 2 s or more
// against maxconn 2000's 341; another gave maxconn 2000 only 2 (710 at 1 s).
// The SYN-timing reading shows them; only the counters are asserted.
test('HAProxy capped at maxconn 2000 (sessions 2000, maxconn reached), not at 5000', () => {
  const found = (m) => ({ max_sessions: m.max_sessions, maxconn_reached: m.maxconn_reached });
  assert.ok(m2000.max_sessions === 2000 && m2000.maxconn_reached > 0,
    `at maxconn 2000: expected max_sessions 2000 and maxconn_reached > 0, found ${JSON.stringify(found(m2000))}`);
  // Over 2000, not 2500: on a slow machine the first requests end (3 s) before
  // the last clients' SYN retries get in (one CI run peaked at 2305).
  assert.ok(m5000.max_sessions > 2000 && m5000.maxconn_reached === 0,
    `at maxconn 5000: expected max_sessions over 2000 (more than maxconn 2000 allowed) and maxconn_reached 0, found ${JSON.stringify(found(m5000))}`);
});
