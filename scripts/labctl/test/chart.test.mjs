// Tests of chart.mjs and chart-time.mjs on hand-made report objects (the
// shape buildReport returns), of the time series they draw from
// (evidence/series.mjs) and of summary.json, which carries it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderChart } from '../report/chart.mjs';
import { renderTimeChart } from '../report/chart-time.mjs';
import { summaryJson } from '../report/report.mjs';
import { PLOT_LEFT, PLOT_RIGHT, escapeXml, logTicks, niceTicks, tickLabel } from '../report/svg.mjs';
import { MAX_POINTS, holdsConnections, seriesOf, thin } from '../evidence/series.mjs';
import { checkTags } from './xml.mjs';

// Text outside tags holds no raw "<" or "&" that is not an entity.
function textIsEscaped(xml) {
  return xml.split(/<[^>]*>/).every((t) => !/[<>]|&(?!(amp|lt|gt|quot|apos);)/.test(t));
}

const row = (x, hits, failed, published, more = {}) => ({
  id: `s${x}`, label: `step ${x}`, x,
  measured: { hits_per_sec: hits, failed },
  published: published === undefined ? {} : { hits_per_sec: published },
  ...more,
});

const r = (v) => Math.round(v * 10) / 10;
const report = (rows, extra = {}) => ({ scenario: 'maxconn-sweep', x: { name: 'maxconn', label: 'global maxconn' }, rows, ...extra });

// The centres of a series' markers, [x, y] each, in drawing order (squares: their centres).
function markers(svg, cls) {
  const circles = [...svg.matchAll(new RegExp(`<circle class="${cls}-point" cx="([\\d.-]+)" cy="([\\d.-]+)"`, 'g'))].map((m) => [Number(m[1]), Number(m[2])]);
  const squares = [...svg.matchAll(new RegExp(`<rect class="${cls}-point" x="([\\d.-]+)" y="([\\d.-]+)"`, 'g'))].map((m) => [Number(m[1]) + 3.5, Number(m[2]) + 3.5]);
  return [...circles, ...squares];
}

// Text elements of a class: [{x, y, label}].
const texts = (svg, cls) => [...svg.matchAll(new RegExp(`<text x="([\\d.-]+)" y="([\\d.-]+)"[^>]*class="${cls}"[^>]*>([^<]*)<`, 'g'))]
  .map((m) => ({ x: Number(m[1]), y: Number(m[2]), label: m[3] }));

// Where each X would sit if the marker at the first X sits at X0 and the
// last at X1, to scale: what the markers are checked against.
function assertToScale(found, values, what) {
  const [a, b] = [found[0], found[found.length - 1]];
  const [va, vb] = [values[0], values[values.length - 1]];
  const expected = values.map((v) => a + ((v - va) / (vb - va)) * (b - a));
  found.forEach((x, i) => assert.ok(Math.abs(x - expected[i]) <= 0.2,
    `${what}: step ${i} (x ${values[i]}) expected at ${expected[i].toFixed(1)} px to scale, found at ${x}; all: ${found.join(', ')}`));
}

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

test('logTicks: the decades around the values, two at least', () => {
  assert.deepEqual(logTicks(7.66, 874), [1, 10, 100, 1000]);
  assert.deepEqual(logTicks(0.81, 95), [0.1, 1, 10, 100]);
  assert.deepEqual(logTicks(100, 1000), [100, 1000]);
  assert.deepEqual(logTicks(3000, 5000), [1000, 10000]);
  assert.deepEqual(logTicks(0, 5), [1, 10], 'no positive value: a default decade');
});

test('tickLabel: k and M past 10,000', () => {
  assert.deepEqual([0, 2500, 10000, 250000, 1500000, 0.1].map(tickLabel), ['0', '2500', '10k', '250k', '1.5M', '0.1']);
});

test('measured line, published dashed line with hollow points, failure bars, legend', () => {
  const svg = renderChart(report([row(20, 6, 400, 6), row(60, 20, 100, 18), row(100, 33.3, 0, 33)]));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.ok(textIsEscaped(svg));
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="640" height="\d+"/);
  assert.match(svg, />maxconn-sweep: global maxconn vs hits\/sec and failures</);
  assert.match(svg, /<polyline class="measured" points="[\d.]+,[\d.]+ [\d.]+,[\d.]+ [\d.]+,[\d.]+"/);
  assert.match(svg, /<polyline class="published"[^>]*stroke-dasharray/);
  assert.equal(markers(svg, 'published').length, 3);
  assert.equal((svg.match(/<circle class="published-point"[^>]*fill="none"/g) ?? []).length, 3, 'hollow published points');
  assert.equal((svg.match(/<rect class="bar"/g) ?? []).length, 3);
  for (const label of ['>20<', '>60<', '>100<', '>hits/sec published<', '>hits/sec measured<', '>failed requests<']) {
    assert.ok(svg.includes(label), label);
  }
  // Left axis ticks 0..40, right axis ticks 0..400.
  assert.ok(svg.includes('>40</text>') && svg.includes('>400</text>'));
});

test('a numeric x is drawn to scale: positions in proportion to the values, round ticks from 0', () => {
  const xs = [250, 500, 1000, 2000, 9000];
  const svg = renderChart(report(xs.map((x) => row(x, x / 2, 0)), { x: { name: 'rate', label: 'offered requests/sec' } }));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  const found = markers(svg, 'measured').map(([x]) => x);
  assert.equal(found.length, xs.length, `one marker per step, found ${found.length}`);
  assertToScale(found, xs, 'measured');
  // 0 sits where the line through the points says x = 0 is.
  const ticks = texts(svg, 'x-tick');
  assert.deepEqual(ticks.map((t) => t.label), ['0', '2000', '4000', '6000', '8000', '10k'], 'x ticks');
  const zero = found[0] - (250 / (9000 - 250)) * (found[found.length - 1] - found[0]);
  assert.ok(Math.abs(ticks[0].x - zero) <= 0.3, `tick 0 expected at ${zero.toFixed(1)}, found at ${ticks[0].x}`);
  assert.doesNotMatch(svg, /class="x-slot"/, 'no category slots on a numeric axis');
});

test('named steps keep even slots, as does an x mixing numbers and names', () => {
  for (const xs of [['d10', 'd20', 'd150', 'h600t2'], [20, '20 TLS', 60, '60 TLS']]) {
    const svg = renderChart(report(xs.map((x, i) => row(x, 10 + i, 0))));
    const found = markers(svg, 'measured').map(([x]) => x);
    const gaps = found.slice(1).map((x, i) => r(x - found[i]));
    assert.ok(gaps.every((g) => Math.abs(g - gaps[0]) <= 0.2), `${xs.join(', ')}: expected equal gaps, found ${gaps.join(', ')}`);
    assert.deepEqual(texts(svg, 'x-slot').map((t) => t.label), xs.map(String));
  }
});

const latencyRow = (x, hits, p50, p99, dropped = 0) => ({
  id: `r${x}`, label: `${x}/s`, x, measured: { hits_per_sec: hits, p50_ms: p50, p99_ms: p99, dropped, failed: 0 }, published: {},
});
const TIPPING = [[250, 250, 1.05, 7.66], [500, 500, 0.81, 26.3], [1000, 994, 1.33, 82.7], [2000, 1783, 12.7, 234], [3000, 1827, 60.9, 874], [9000, 2277, 95, 439]];

test('latency on a log axis: labelled ticks at decades, evenly spaced; p50 and p99 placed by their log', () => {
  const chart = { y: 'p99_ms', y_label: 'p99 latency ms', y2: 'dropped', y2_label: 'dropped requests', y2_title: 'dropped requests' };
  const svg = renderChart(report(TIPPING.map((t) => latencyRow(...t)), { scenario: 'tipping-point', x: { name: 'rate', label: 'offered requests/sec' }, chart }));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.match(svg, />tipping-point: offered requests\/sec vs p50 and p99 latency and dropped requests</);
  // The first panel's axis: 0.1 (p50 0.81) to 1000 (p99 874).
  const decades = texts(svg, 'log-tick');
  const first = decades.slice(0, 5);
  assert.deepEqual(first.map((t) => t.label), ['0.1', '1', '10', '100', '1000'], 'labelled ticks of the first panel');
  const steps = first.slice(1).map((t, i) => r(first[i].y - t.y));
  assert.ok(steps.every((s) => Math.abs(s - steps[0]) <= 0.2), `decades evenly spaced, found steps of ${steps.join(', ')} px`);
  const yOf = (v) => first[1].y - 4 - Math.log10(v) * steps[0]; // a label sits 4 px under its tick
  for (const [cls, k] of [['p99', 3], ['p50', 2]]) {
    const found = markers(svg, cls).slice(0, TIPPING.length);
    assert.equal(found.length, TIPPING.length, `${cls}: a marker per step`);
    found.forEach(([, y], i) => assert.ok(Math.abs(y - yOf(TIPPING[i][k])) <= 0.3,
      `${cls} ${TIPPING[i][k]} ms expected at y ${yOf(TIPPING[i][k]).toFixed(1)}, found ${y}`));
    assert.match(svg, new RegExp(`<polyline class="${cls}" `), `${cls} line`);
  }
  assert.ok(svg.includes('>p99 ms<') && svg.includes('>p50 ms<'), 'legend names p50 and p99');
});

test('a rate offered: a second panel of latency against the rate achieved, to scale', () => {
  const svg = renderChart(report(TIPPING.map((t) => latencyRow(...t)), { scenario: 'tipping-point', x: { name: 'rate', label: 'offered requests/sec' }, chart: { y: 'p99_ms', y2: 'dropped' } }));
  assert.match(svg, />p50 and p99 latency against the rate achieved</);
  assert.match(svg, />achieved hits\/sec/);
  const second = markers(svg, 'p99').slice(TIPPING.length).map(([x]) => x);
  assert.equal(second.length, TIPPING.length, `second panel: a p99 marker per step, found ${second.length}`);
  assertToScale(second, TIPPING.map((t) => t[1]), 'p99 against the rate achieved');
});

test('latency panel only where steps measured latency; a p50 of 0 is left off the log axis', () => {
  const none = renderChart(report([row(20, 6, 0), row(60, 20, 0)]));
  assert.doesNotMatch(none, /class="p99|class="p50|log-tick/, 'no latency measured: no latency panel');
  const rows = [latencyRow(20, 6, 0, 4990), latencyRow(60, 18, 3007, 5005), latencyRow(100, 30, 3022, 3069)];
  const svg = renderChart(report(rows));
  assert.equal(markers(svg, 'p99').length, 3);
  assert.equal(markers(svg, 'p50').length, 2, 'p50 0 ms has no place on a log axis');
  // One decade (1000 to 10k): its 2× and 5× are labelled too.
  assert.deepEqual(texts(svg, 'log-tick').map((t) => t.label), ['1000', '10k']);
  assert.deepEqual(texts(svg, 'log-minor-tick').map((t) => t.label), ['2000', '5000']);
});

test('curves: each on its own stretch of the axis, to scale, a border between', () => {
  const rows = [100, 200, 400].map((x) => row(x, x, 0, undefined, { id: `a${x}`, curve: 'plain-keepalive' }))
    .concat([1000, 5000].map((x) => row(x, x / 10, 0, undefined, { id: `b${x}`, curve: 'tls-full' })));
  const svg = renderChart(report(rows));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.equal((svg.match(/class="curve-border"/g) ?? []).length, 1);
  assert.deepEqual(texts(svg, 'curve-name').map((t) => t.label), ['plain-keepalive', 'tls-full']);
  assert.equal((svg.match(/<polyline class="measured"/g) ?? []).length, 2, 'one line per curve');
  const found = markers(svg, 'measured').map(([x]) => x);
  const border = Number(svg.match(/<line x1="([\d.]+)"[^>]*class="curve-border"/)[1]);
  assert.ok(found.slice(0, 3).every((x) => x < border) && found.slice(3).every((x) => x > border), `curve a left of the border at ${border}, b right of it: ${found.join(', ')}`);
  assertToScale(found.slice(0, 3), [100, 200, 400], 'curve a');
  // Curve b to scale from 0: 1000 is a fifth of the way from 0 to 5000.
  const bTicks = texts(svg, 'x-tick').filter((t) => t.x > border);
  assert.equal(bTicks[0].label, '0');
  const expected = bTicks[0].x + (found[4] - bTicks[0].x) / 5;
  assert.ok(Math.abs(found[3] - expected) <= 0.3, `curve b: 1000 expected at ${expected.toFixed(1)}, found ${found[3]}`);
});

test('--versus twins share their first step\'s slot, in the second build\'s colour, bars side by side', () => {
  const build = (image) => ({ image, haproxy: 'x', ssl_library: 'y' });
  const rows = ['plain keep-alive', 'TLS full RSA'].flatMap((x, i) => [
    row(x, 100 + i, 1, undefined, { id: `s${i}`, build: build('haproxy:3.2') }),
    row(`${x} haproxy:2.6`, 90 + i, 2, undefined, { id: `s${i}-versus`, versus_of: `s${i}`, build: build('haproxy:2.6') }),
  ]);
  const svg = renderChart(report(rows));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  const first = markers(svg, 'measured').map(([x]) => x);
  const twin = markers(svg, 'measured-second').map(([x]) => x);
  assert.equal(first.length, 2);
  assert.deepEqual(twin, first, 'each twin at its first step\'s x');
  assert.deepEqual(texts(svg, 'x-slot').map((t) => t.label), ['plain keep-alive', 'TLS full RSA'], 'one slot per first step, its own label');
  assert.ok(svg.includes('>hits/sec measured, haproxy:3.2<') && svg.includes('>hits/sec measured, haproxy:2.6<'), 'legend names both builds');
  const bars = [...svg.matchAll(/<rect class="bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[1]) + Number(m[2])]);
  assert.equal(bars.length, 4);
  assert.ok(bars[0][1] <= bars[1][0] + 0.1, `first build's bar [${bars[0]}] left of its twin's [${bars[1]}]`);
});

test('bars stay within the plot, however close a step is to its edge', () => {
  const svg = renderChart(report([row(1, 10, 5), row(2, 20, 5), row(1000, 30, 7)]));
  for (const m of svg.matchAll(/<rect class="bar" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)) {
    const [left, right] = [Number(m[1]), Number(m[1]) + Number(m[2])];
    assert.ok(left >= PLOT_LEFT && right <= PLOT_RIGHT, `bar [${left}, ${right}] expected within [${PLOT_LEFT}, ${PLOT_RIGHT}]`);
  }
});

test('category labels: level when they fit, on two lines when that fits, else slanted and never off the chart', () => {
  const level = renderChart(report(['d10', 'd20'].map((x) => row(x, 1, 0))));
  assert.doesNotMatch(level, /<tspan|class="x-slot" transform/);
  const names = ['plain keep-alive', 'plain close', 'TLS keep-alive', 'TLS resumed', 'TLS full ECDSA', 'TLS full RSA'];
  const two = renderChart(report(names.map((x) => row(x, 1, 0))));
  assert.match(two, /<text x="[\d.]+" y="[\d.]+" text-anchor="middle" class="x-slot"><tspan x="[\d.]+" dy="0">plain<\/tspan><tspan x="[\d.]+" dy="13">keep-alive<\/tspan><\/text>/);
  assert.doesNotMatch(two, /class="x-slot" transform/);
  const long = Array.from({ length: 12 }, (_, i) => `a rather long step name number ${i} of twelve`);
  const slanted = renderChart(report(long.map((x) => row(x, 1, 0))));
  assert.deepEqual(checkTags(slanted), { root: 'svg', ok: true });
  const labels = [...slanted.matchAll(/<text x="([\d.]+)" y="[\d.]+" text-anchor="end" class="x-slot" transform="rotate\(-30 [^)]*\)">([^<]*)</g)];
  assert.equal(labels.length, 12, 'slanted labels');
  for (const [, x, label] of labels) {
    const reach = Number(x) - 0.87 * label.length * 6.2;
    assert.ok(reach >= 0, `"${label}" expected to end within the chart, reaches ${reach.toFixed(1)} px`);
  }
  assert.ok(labels.every(([, , label]) => label.endsWith('…')), 'cut labels say so');
});

test('steps not run are skipped; text is escaped', () => {
  const notRun = { id: 'late', label: 'late', x: 'never-ran', measured: null, published: { hits_per_sec: 5 } };
  const svg = renderChart(report([row('a<b', 10, 1), notRun], { scenario: 'R&D "lab"', incomplete: 'stopped' }));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.ok(textIsEscaped(svg));
  assert.doesNotMatch(svg, /never-ran/);
  assert.match(svg, />a&lt;b</);
  assert.match(svg, /R&amp;D &quot;lab&quot;: global maxconn vs hits\/sec and failures \(incomplete\)/);
  assert.equal((svg.match(/<rect class="bar"/g) ?? []).length, 1);
});

test('no step ran: still a valid, labelled chart', () => {
  const svg = renderChart(report([{ id: 'a', label: 'a', x: 1, measured: null, published: {} }]));
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.match(svg, /no step ran/);
  assert.doesNotMatch(svg, /<polyline/);
});

test('escapeXml', () => {
  assert.equal(escapeXml(`<a & 'b' "c">`), '&lt;a &amp; &apos;b&apos; &quot;c&quot;&gt;');
});

test('thin: at most MAX_POINTS, evenly strided, the first and the last kept', () => {
  assert.deepEqual(thin(5), [0, 1, 2, 3, 4]);
  const kept = thin(1091);
  assert.equal(kept.length, MAX_POINTS, `expected ${MAX_POINTS} points, found ${kept.length}`);
  assert.deepEqual([kept[0], kept[kept.length - 1]], [0, 1090]);
  const strides = new Set(kept.slice(1).map((k, i) => k - kept[i]));
  assert.ok([...strides].every((s) => s === 5 || s === 6), `strides of 1091 → 200: 5 or 6, found ${[...strides].join(', ')}`);
});

const holders = (n, started) => ({
  started_at_ms: started,
  samples: Array.from({ length: n }, (_, t) => ({ t, open: Math.min(t, 100) * 10, failed_total: t > n - 3 ? 2 : 0 })),
});
const haproxySamples = (n, started) => Array.from({ length: n }, (_, t) => ({ t, haproxy: t * 10, backend: t * 9, queue: 0, requests: null, at: started + 500 + t * 1000 }));

test('seriesOf: only for steps that hold connections; seconds after the step started; thinned', () => {
  const held = { load: { tool: 'holder' } };
  assert.equal(holdsConnections({ load: { tool: 'k6', env: { RATE: '100' } } }), false);
  assert.equal(holdsConnections({ load: { tool: 'k6', env: { SLEEP_MS: '4000' } } }), true);
  assert.equal(holdsConnections(held), true);
  assert.equal(seriesOf({ load: { tool: 'k6', env: {} } }, null, haproxySamples(10, 0), 0), null, 'a step that holds none: no series');
  const s = seriesOf(held, holders(1000, 12000), haproxySamples(1000, 10000), 10000);
  assert.deepEqual(Object.keys(s), ['clients', 'haproxy']);
  for (const [name, cols] of Object.entries(s)) {
    for (const [k, v] of Object.entries(cols)) assert.equal(v.length, MAX_POINTS, `${name}.${k}: expected ${MAX_POINTS} values, found ${v.length}`);
  }
  assert.deepEqual([s.clients.t[0], s.clients.t[MAX_POINTS - 1]], [2, 1001], 'the holders started 2 s into the step');
  assert.deepEqual([s.haproxy.t[0], s.haproxy.conns[0], s.haproxy.backend[MAX_POINTS - 1]], [0.5, 0, 8991]);
  assert.equal(s.clients.failed[MAX_POINTS - 1], 2);
  // No step start: the earliest sample's time is 0; samples without time stamps keep their own clock.
  assert.equal(seriesOf(held, holders(3, 5000), null, undefined).clients.t[0], 0);
  assert.deepEqual(seriesOf(held, null, [{ t: 7, haproxy: 1, backend: 1, at: null }], undefined).haproxy.t, [7]);
});

test('chart-time.svg: none without a series; one colour per step, lines to scale in time, failures on their own axis', () => {
  assert.equal(renderTimeChart(report([row(1, 1, 0)])), null);
  const rows = [
    { ...row(50000, 1, 0), label: 'level 1', series: seriesOf({ load: { tool: 'holder' } }, holders(101, 0), haproxySamples(101, -500), 0) },
    { ...row(250000, 1, 0), label: 'level 2', series: { haproxy: { t: [0, 100, 200], conns: [0, 5, 0], backend: [0, 5, 0] } } },
  ];
  const svg = renderTimeChart({ ...report(rows), scenario: 'connections' });
  assert.deepEqual(checkTags(svg), { root: 'svg', ok: true });
  assert.match(svg, />connections: connections over time, each step from its start</);
  const lines = [...svg.matchAll(/<polyline class="(\w+)" data-step="(\w+)" points="([^"]+)" fill="none" stroke="([^"]+)"/g)];
  assert.deepEqual(lines.map((m) => `${m[1]}:${m[2]}`), ['open:s50000', 'conns:s50000', 'conns:s250000', 'backend:s50000', 'backend:s250000', 'failed:s50000']);
  assert.notEqual(lines[1][4], lines[2][4], 'each step its own colour');
  const xs = lines[2][3].split(' ').map((p) => Number(p.split(',')[0]));
  assert.deepEqual(xs, [PLOT_LEFT, (PLOT_LEFT + PLOT_RIGHT) / 2, PLOT_RIGHT], 'level 2 at 0, 100 and 200 s on an axis to 200 s');
  assert.match(svg, />failed so far</);
  const calm = renderTimeChart({ ...report([rows[1]]) });
  assert.doesNotMatch(calm, /failed so far/, 'no failures: no failures axis');
});

test('summary.json: a row\'s figures a line each, what is below them compact, the same report read back, the same charts drawn from it', () => {
  const r = report([{ ...row(1, 10, 0), series: { haproxy: { t: [0, 1.5, 3], conns: [0, null, 4], backend: [1, 2, 3] } } }], { ok: true, notes: ['a, b'] });
  const text = summaryJson(r);
  assert.match(text, /\n {6}"series": \{\n {8}"haproxy": \{"t":\[0,1\.5,3\],"conns":\[0,null,4\],"backend":\[1,2,3\]\}\n/);
  assert.match(text, /\n {8}"hits_per_sec": 10,\n/, 'a measured figure on a line of its own');
  assert.match(text, /"notes": \["a, b"\]/, 'a list of strings on one line');
  const back = JSON.parse(text);
  assert.deepEqual(back, r);
  assert.equal(renderChart(back), renderChart(r));
  assert.equal(renderTimeChart(back), renderTimeChart(r));
});
