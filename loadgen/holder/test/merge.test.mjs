// mergeSummaries(): sums, reasons, samples aligned by wall clock, missing
// inputs, the common hold window; and merge.mjs as a command.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mergeSummaries } from '../merge.mjs';
import { LATENCY_BOUNDS } from '../lib.mjs';

const MERGE = fileURLToPath(new URL('../merge.mjs', import.meta.url));
const T0 = 1_700_000_000_000;

// A replica summary; samples from open counts, one a second from t=0.
function summary(index, { start = T0, open, ok = 0, failures = {}, rampUp = 2, hold = 4, peak, lat = [1, 2], memory } = {}) {
  const failed = Object.values(failures).reduce((a, c) => a + c, 0);
  const counts = new Array(LATENCY_BOUNDS.length).fill(0);
  counts[0] = lat[0];
  counts[1] = lat[1];
  return {
    tool: 'holder', version: 1, testid: 'x', index, replicas: 3, target: 'http://haproxy:8080', path: '/slow',
    planned: ok + failed, started_at_ms: start, ended_at_ms: start + open.length * 1000, ramp_up: rampUp, hold, ramp_down: 1,
    opened: ok + failed, connected: ok, ok, failed, failures, interrupted: false, peak_open: peak ?? Math.max(...open),
    latency_ms: { bounds: LATENCY_BOUNDS, counts }, late_ms: { bounds: LATENCY_BOUNDS, counts: [...counts].reverse() }, bytes_received: 10,
    memory: memory ?? { rss_start: 1000, rss_peak: 5000, rss_at_peak_open: 4000, heap_used_at_peak_open: 100 },
    nofile: 1024 * index,
    samples: open.map((o, t) => ({ t, open: o, opened_total: o, ok_total: t, failed_total: 0, rss_bytes: 100 })),
  };
}

test('sums counts, merges failure reasons and latency histograms', () => {
  const m = mergeSummaries([
    summary(2, { open: [0, 5], ok: 5, failures: { ECONNREFUSED: 2, timeout: 1 } }),
    summary(1, { open: [0, 3], ok: 3, failures: { timeout: 4 } }),
  ]);
  assert.deepEqual([m.tool, m.merged, m.replicas, m.inputs, m.missing], ['holder', true, [1, 2], 2, 0]);
  assert.deepEqual([m.planned, m.opened, m.connected, m.ok, m.failed, m.bytes_received], [15, 15, 8, 8, 7, 20]);
  assert.deepEqual(m.failures, { ECONNREFUSED: 2, timeout: 5 });
  assert.deepEqual(m.latency_ms.counts.slice(0, 3), [2, 4, 0]);
  assert.deepEqual(m.late_ms.counts.slice(-3), [0, 4, 2]);
  assert.deepEqual(m.memory, { rss_start: 2000, rss_peak: 10000, rss_at_peak_open: 8000, heap_used_at_peak_open: 200 });
  assert.equal(m.bytes_per_connection, Math.round(6000 / 8)); // sum(rss growth) / sum(peak_open)
  assert.equal(m.nofile, 1024);
});

test('samples aligned by wall clock; a replica missing a second counts with its last values', () => {
  const m = mergeSummaries([
    summary(1, { start: T0, open: [0, 10, 20, 20, 0] }),
    // Starts 2.4 s later (its t=0 is merged t=2), and has no sample for its t=1.
    { ...summary(2, { start: T0 + 2400, open: [0, 7, 7, 0] }), samples: [0, 2, 3].map((t) => ({ t, open: [0, 7, 7, 0][t], opened_total: 7, ok_total: 0, failed_total: 0, rss_bytes: 50 })) },
  ]);
  assert.equal(m.started_at_ms, T0);
  assert.equal(m.ended_at_ms, T0 + 2400 + 4000);
  assert.deepEqual(m.samples.map((s) => s.t), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(m.samples.map((s) => s.open), [0, 10, 20, 20 + 0, 0 + 7, 0 + 0]);
  assert.deepEqual(m.samples.map((s) => s.rss_bytes), [100, 100, 150, 150, 150, 150]);
  assert.equal(m.peak_open, 20);
});

test('hold window: from the latest replica to be fully open to the earliest ramping down', () => {
  // Replica 1: ramp-up 2, hold 4 -> its window is t 3..5. Replica 2 starts 1 s
  // later -> 4..6 in merged time. Common: 4..5.
  const m = mergeSummaries([
    summary(1, { open: [0, 5, 10, 10, 10, 10, 10, 5, 0] }),
    summary(2, { start: T0 + 1000, open: [0, 2, 4, 4, 4, 3, 0] }),
  ]);
  assert.deepEqual(m.hold_window, { from_t: 4, to_t: 5, min_open: 14, max_open: 14 });
  // Lower counts just outside the common window do not count.
  assert.deepEqual(m.samples.slice(2, 7).map((s) => s.open), [12, 14, 14, 14, 13]);
});

test('null, invalid and non-holder inputs are skipped and counted as missing', () => {
  const m = mergeSummaries([null, summary(3, { open: [0, 1], ok: 1 }), 'garbage', { tool: 'k6' }]);
  assert.deepEqual([m.inputs, m.missing, m.replicas, m.ok], [1, 3, [3], 1]);
  const none = mergeSummaries([null]);
  assert.deepEqual([none.inputs, none.missing, none.ok, none.samples, none.hold_window, none.bytes_per_connection], [0, 1, 0, [], null, null]);
});

test('merge.mjs: files in, merged JSON out; unreadable files count as missing', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'merge-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'holder-1.json'), JSON.stringify(summary(1, { open: [0, 4], ok: 4 })));
  fs.writeFileSync(path.join(dir, 'holder-2.json'), JSON.stringify(summary(2, { open: [0, 6], ok: 6 })));
  fs.writeFileSync(path.join(dir, 'bad.json'), '{"tool": "hol');
  const files = ['holder-1.json', 'holder-2.json', 'bad.json', 'nope.json'].map((f) => path.join(dir, f));
  const { stdout, stderr } = await new Promise((resolve, reject) => {
    execFile(process.execPath, [MERGE, ...files], (err, out, errOut) => (err ? reject(err) : resolve({ stdout: out, stderr: errOut })));
  });
  const m = JSON.parse(stdout);
  assert.deepEqual([m.ok, m.inputs, m.missing, m.peak_open], [10, 2, 2, 10]);
  assert.equal(stderr, 'merge: 2 of 4 inputs missing or invalid\n');
});

test('paced holders: the common hold starts when the slowest ramp was done and ends at the first planned end with the slack', () => {
  const paced = (index, start, done) => ({
    ...summary(index, { start, open: [0, 5, 9, 10, 10, 10, 10, 10, 10, 10], ok: 10, rampUp: 2, hold: 4 }),
    max_unconfirmed: 50, ramp_slack: 3, ramp_done_s: done,
  });
  const m = mergeSummaries([paced(1, T0, 2.5), paced(2, T0 + 1000, 3.2)]);
  // Replica 2 started 1 s later and was done 3.2 s after its start: 4.2 s, +1 → 5.2 → from 6.
  // Ends: ramp_up 2 + slack 3 + hold 4 - 1 = 8 s after replica 1's start.
  assert.deepEqual([m.hold_window.from_t, m.hold_window.to_t], [6, 8]);
  assert.equal(m.ramp_done_s, 4.2);
  assert.deepEqual([m.ramp_slack, m.max_unconfirmed], [3, 50]);
  // One holder never had all its connections in: no ramp end, its hold at the latest start.
  const never = mergeSummaries([paced(1, T0, null)]);
  assert.equal(never.ramp_done_s, null);
  assert.equal(never.hold_window.from_t, 6); // ramp_up 2 + slack 3 + 1
});
