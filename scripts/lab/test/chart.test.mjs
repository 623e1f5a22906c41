// Tests of chart.mjs on hand-made report objects (the shape buildReport returns).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeXml, niceTicks, renderChart } from '../report/chart.mjs';
import { checkTags } from './xml.mjs';


// Text outside tags holds no raw "<" or "&" that is not an entity.
function textIsEscaped(xml) {
  return xml.split(/<[^>]*>/).every((t) => !/[<>]|&(?!(amp|lt|gt|quot|apos);)/.test(t));
}

const row = (x, hits, failed, published) => ({
  id: `s${x}`, label: `step ${x}`, x,
  measured: { hits_per_sec: hits, failed },
  published: published === undefined ? {} : { hits_per_sec: published },
});

const report = (rows, extra = {}) => ({ scenario: 'maxconn-sweep', x: { name: 'maxconn', label: 'global maxconn' }, rows, ...extra });

test('checkTags catches unbalanced markup', () => {
  assert.deepEqual(checkTags('<svg><g></g><line/></svg>'), { root: 'svg', ok: true });
  assert.equal(checkTags('<svg><g></svg>').ok, false);
  assert.equal(checkTags('<svg></svg><svg></svg>').root.length, 2);
});

test('niceTicks: round steps from 0 past the maximum', () => {
  assert.deepEqual(niceTicks(33.3), [0, 10, 20, 30, 40]);
  assert.deepEqual(niceTicks(6), [0, 2, 4, 6]);
  assert.deepEqual(niceTicks(0.9), [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(niceTicks(0), [0, 1]);
  assert.deepEqual(niceTicks(3, { integer: true }), [0, 1, 2, 3]);
  assert.deepEqual(niceTicks(1234), [0, 500, 1000, 1500]);
});

test('measured line, published dashed line with hollow points, failure bars, legend', () => {
  const svg = renderChart(report([row(20, 6, 400, 6), row(60, 20, 100, 18), row(100, 33.3, 0, 33)]));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.ok(textIsEscaped(svg));
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="640" height="400"/);
  assert.match(svg, />maxconn-sweep: global maxconn vs hits\/sec and failures</);
  assert.match(svg, /<polyline class="measured" points="[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+"/);
  assert.match(svg, /<polyline class="published"[^>]*stroke-dasharray/);
  assert.equal((svg.match(/<circle [^>]*fill="none"/g) ?? []).length, 3); // hollow published points
  assert.equal((svg.match(/<rect class="failed"/g) ?? []).length, 3);
  for (const label of ['>20<', '>60<', '>100<', '>hits/sec published<', '>hits/sec measured<', '>failed requests<']) {
    assert.ok(svg.includes(label), label);
  }
  // Left axis ticks 0..40, right axis ticks 0..400.
  assert.ok(svg.includes('>40</text>') && svg.includes('>400</text>'));
});

test('no published values: no dashed line and no published legend', () => {
  const svg = renderChart(report([row(1, 10, 0), row(2, 12, 3)]));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.doesNotMatch(svg, /class="published"/);
  assert.doesNotMatch(svg, /stroke-dasharray/);
  assert.doesNotMatch(svg, /hits\/sec published/);
  assert.match(svg, /class="measured"/);
});

test('steps not run are skipped; text is escaped', () => {
  const notRun = { id: 'late', label: 'late', x: 'never-ran', measured: null, published: { hits_per_sec: 5 } };
  const svg = renderChart(report([row('a<b', 10, 1), notRun], { scenario: 'R&D "lab"', incomplete: 'stopped' }));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.ok(textIsEscaped(svg));
  assert.doesNotMatch(svg, /never-ran/);
  assert.match(svg, />a&lt;b</);
  assert.match(svg, /R&amp;D &quot;lab&quot;: global maxconn vs hits\/sec and failures \(incomplete\)/);
  assert.equal((svg.match(/<rect class="failed"/g) ?? []).length, 1);
});

test('no step ran: still a valid, labelled chart', () => {
  const svg = renderChart(report([{ id: 'a', label: 'a', x: 1, measured: null, published: {} }]));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.match(svg, /no step ran/);
  assert.doesNotMatch(svg, /<polyline/);
});

test('many steps get slanted tick labels', () => {
  const rows = Array.from({ length: 12 }, (_, i) => row(i + 1, i * 10, i));
  const svg = renderChart(report(rows));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.match(svg, /rotate\(-30 /);
});

test('escapeXml', () => {
  assert.equal(escapeXml(`<a & 'b' "c">`), '&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;');
});
