// tuning --quick (E2E_RUN): every step ran on the listening socket it asked
// for (fe_main's backlog 128, read back with ss), and the accept queue was
// measured: at maxconn 2000 it fills and the kernel drops SYNs that the
// clients retransmit; at maxconn 5000 far fewer.
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

// At maxconn 5000 no client waits for a slot; a few SYNs of the 1 s burst
// may still overflow the 128 backlog while a busy CPU delays HAProxy's
// accepts (0 to 262 seen here), far fewer than the 371 clients x 2 drops
// at maxconn 2000.
test('at maxconn 5000 under half of maxconn 2000 overflows and retransmits', () => {
  const found = s.rows.map((r) => [r.id, r.measured?.listen_overflows, r.measured?.syn_retrans]);
  assert.ok(
    m5000.listen_overflows * 2 < m2000.listen_overflows && m5000.syn_retrans * 2 < m2000.syn_retrans,
    `[step, listen overflows, SYN retransmits]: expected those of ${s.rows[2]?.id} under half of ${s.rows[0]?.id}'s, found ${JSON.stringify(found)}`,
  );
});
