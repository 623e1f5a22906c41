// The expectation language (core/expectations.mjs) and the metrics registry
// (metrics.mjs): the forms scenario files may use, and the order summary.json
// and summary.csv keep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseExpectation } from '../core/expectations.mjs';
import { CSV_METRICS, CPU_COST_METRICS, LONG_LIVED_METRICS, METRICS, METRIC_TABLE, RUN_METRICS, formatValue, metricLabel } from '../core/metrics.mjs';

describe('parseExpectation', () => {
  test('every form, ~ for informational', () => {
    assert.deepEqual(parseExpectation('±3%'), { info: false, body: '±3%', tolerance: 3, of: null });
    assert.deepEqual(parseExpectation('~±1.5%of:littles_conns'), { info: true, body: '±1.5%of:littles_conns', tolerance: 1.5, of: 'littles_conns' });
    assert.deepEqual(parseExpectation('==0'), { info: false, body: '==0', op: '==', number: 0, ref: null });
    for (const op of ['>=', '<=', '>', '<']) assert.equal(parseExpectation(`${op}-2.5`).number, -2.5);
    assert.deepEqual(parseExpectation('~>step:maxconn-5000'), { info: true, body: '>step:maxconn-5000', op: '>', number: null, ref: 'maxconn-5000' });
    assert.equal(parseExpectation('<step:baseline').op, '<');
    assert.deepEqual(parseExpectation('-1..0.5'), { info: false, body: '-1..0.5', range: [-1, 0.5] });
  });

  test('anything else is an Error naming the expression and the forms', () => {
    for (const bad of ['lots', '3%', '±x%', '>=step:a', '=0', '1..', '~', '', '>step:Upper']) {
      assert.throws(() => parseExpectation(bad), new RegExp(`bad expectation "${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": use ±N%, .*A\\.\\.B`), bad);
    }
  });
});

describe('metrics registry', () => {
  test('summary.json\'s and summary.csv\'s order of metrics', () => {
    assert.deepEqual(RUN_METRICS, [
      'requests', 'successful', 'failed', 'seconds', 'hits_per_sec', 'p50_ms', 'p95_ms', 'p99_ms', 'max_sessions', 'max_queue',
      'errors', 'maxconn_reached', 'listen_overflows', 'backlog', 'accept_queue_max', 'listen_drops', 'syncookies', 'syn_retrans',
      'connects_retried', ...LONG_LIVED_METRICS, ...CPU_COST_METRICS,
    ]);
    assert.deepEqual(METRICS, [...RUN_METRICS, 'cpu', 'ratio']);
    assert.deepEqual(CSV_METRICS, RUN_METRICS.slice(0, 19).filter((m) => m !== 'seconds'));
  });

  test('every metric says what it is and how it is measured', () => {
    for (const [name, m] of Object.entries(METRIC_TABLE)) {
      for (const field of ['label', 'unit', 'about']) assert.ok(typeof m[field] === 'string' && m[field].length > 0, `${name}.${field}`);
      assert.equal(typeof m.count, 'boolean', name);
    }
    assert.equal(metricLabel('ratio', { ratio_to: 'one' }), 'ratio to one');
    assert.equal(metricLabel('bytes_holder'), 'client bytes/conn (RSS)');
    assert.deepEqual([formatValue('bytes_haproxy', 10485.76), formatValue('mean_ms', 503.14), formatValue('ratio', 2)], ['10486', '503.1', '2.00×']);
  });
});
