// The docs' generated figures (scripts/labctl/figures/figures.mjs): figure
// links and table blocks written from a kept run's summary.json, and the
// lint of figures typed by hand.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { evaluate, format, lintFigures, resolve, rowRunFindings, writeFigures } from '../figures/figures.mjs';

const tmpDirs = [];
after(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const summary = {
  scenario: 'demo',
  columns: ['hits_per_sec'],
  limits: { binding: 'open files', largest: 507870 },
  floors: { haproxy: { us_per_req: 50.3 } },
  rows: [
    { id: 'level-10pct', label: '10%', published: { hits_per_sec: null }, measured: { hits_per_sec: 319.7646, ramp_rate: 3571 }, verdict: 'pass' },
    { id: 'level-100pct', label: 'the target', published: { hits_per_sec: 30 }, measured: { hits_per_sec: 456.9, ramp_rate: 2502, haproxy_us_per_conn: 205.273 }, verdict: 'pass' },
  ],
  reading_tables: [{ title: 'Where a connection\'s CPU goes', table: [['part', 'µs'], ['HAProxy', '205']] }],
};

// A docs folder with one kept run's summary.json (SUMMARY) and DOC in it.
function docs(doc, s = summary) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'figures-'));
  tmpDirs.push(root);
  fs.mkdirSync(path.join(root, 'docs/runs/demo/20261207T130320Z'), { recursive: true });
  fs.writeFileSync(path.join(root, 'docs/runs/demo/20261207T130320Z/summary.json'), JSON.stringify(s));
  fs.writeFileSync(path.join(root, 'docs/results.md'), doc);
  return path.join(root, 'docs/results.md');
}

describe('a figure\'s expression', () => {
  test('a path: a step\'s id starts at its measured figures; arrays by id, title or index', () => {
    assert.equal(resolve(summary, 'level-100pct.ramp_rate'), 2502);
    assert.equal(resolve(summary, 'rows.level-10pct.published.hits_per_sec'), null);
    assert.equal(resolve(summary, 'limits.largest'), 507870);
    assert.equal(resolve(summary, 'reading_tables.0.table.1.1'), '205');
    assert.throws(() => resolve(summary, 'level-100pct.nope'), /"level-100pct\.nope": no "nope" there/);
  });

  test('arithmetic over paths and numbers, with precedence and parentheses', () => {
    assert.equal(evaluate(summary, 'level-100pct.haproxy_us_per_conn / floors.haproxy.us_per_req'), 205.273 / 50.3);
    assert.equal(evaluate(summary, '(level-10pct.ramp_rate - level-100pct.ramp_rate) * 2 + 1'), (3571 - 2502) * 2 + 1);
    assert.equal(evaluate(summary, 'limits.binding'), 'open files');
    assert.throws(() => evaluate(summary, 'limits.binding * 2'), /arithmetic on "open files", not a number/);
    assert.throws(() => evaluate(summary, '(limits.largest'), /a "\(" is not closed/);
  });

  test('formats: decimals with thousands separators, significant digits, text', () => {
    assert.deepEqual([format(2502), format(2502.6, 'n0'), format(319.7646, 'n1'), format(4.0810, 'n2')], ['2,502', '2,503', '319.8', '4.08']);
    assert.deepEqual([format(205.273, 'g3'), format(12.44, 'g3'), format(0.06312, 'g2'), format(61234, 'g3')], ['205', '12.4', '0.063', '61,200']);
    assert.equal(format('open files', 'text'), 'open files');
    assert.deepEqual([format('205 (4.1×)', 'g3'), format('205 (4.1×)', 'n1@2'), format('1,190 held', 'n0')], ['205', '4.1', '1,190']);
    assert.throws(() => format('205 (4.1×)', 'n0@3'), /has no number 3/);
    assert.throws(() => format(null), /null in summary\.json: not measured/);
    assert.throws(() => format(1, 'x1'), /format "x1": use nK/);
  });
});

describe('writing a document\'s figures', () => {
  const doc = [
    'Opened at [9,999](runs/demo/20261207T130320Z/report.md "level-100pct.ramp_rate"), HAProxy at',
    '[1](runs/demo/20261207T130320Z/report.md "level-100pct.haproxy_us_per_conn / floors.haproxy.us_per_req | n1")× its floor.',
    '',
    '<!-- figures: results runs/demo/20261207T130320Z -->',
    'old table',
    '<!-- /figures -->',
    '<!-- figures: table runs/demo/20261207T130320Z Where a connection\'s CPU goes -->',
    '<!-- /figures -->',
    '',
  ].join('\n');

  test('each figure and table written from the run it names', () => {
    const file = docs(doc);
    const { text, errors } = writeFigures(file, doc);
    assert.deepEqual(errors, []);
    assert.match(text, /^Opened at \[2,502\]\(runs\/demo\/20261207T130320Z\/report\.md "level-100pct\.ramp_rate"\), HAProxy at$/m);
    assert.match(text, /^\[4\.1\]\(runs\/demo\/20261207T130320Z\/report\.md "[^"]+"\)× its floor\.$/m);
    assert.match(text, /-->\n\| step \| hits\/sec published \| hits\/sec measured \| verdict \|\n\| --- \| ---: \| ---: \| --- \|\n\| 10% \| - \| 319\.8 \| pass \|\n\| the target \| 30\.0 \| 456\.9 \| pass \|\n<!-- \/figures -->/);
    assert.match(text, /goes -->\n\| part \| µs \|\n\| --- \| ---: \|\n\| HAProxy \| 205 \|\n<!-- \/figures -->/);
    assert.equal(writeFigures(file, text).text, text, 'written twice: the same text');
  });

  test('in a table\'s cell the format follows an escaped pipe, kept as it was', () => {
    const cell = '| 10% | [1](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec \\| n1") |\n';
    const { text, errors } = writeFigures(docs(cell), cell);
    assert.deepEqual(errors, []);
    assert.equal(text, '| 10% | [319.8](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec \\| n1") |\n');
  });

  test('in a table\'s row the format comes after "\\|", so the link stays in its cell', () => {
    const row = '| a | [1](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec | n1") |\n';
    const line = '[1](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec \\| n1")\n';
    assert.equal(writeFigures(docs(row), row).text, '| a | [319.8](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec \\| n1") |\n');
    assert.equal(writeFigures(docs(line), line).text, '[319.8](runs/demo/20261207T130320Z/report.md "level-10pct.hits_per_sec | n1")\n');
  });

  test('a changed summary.json changes the figures written: the check finds the document stale', () => {
    const written = writeFigures(docs(doc), doc).text;
    const changed = structuredClone(summary);
    changed.rows[1].measured.ramp_rate = 2400;
    const again = writeFigures(docs(written, changed), written).text;
    assert.notEqual(again, written);
    assert.match(again, /Opened at \[2,400\]/);
  });

  test('a figure that cannot be written is named with its line, and left as it was', () => {
    const bad = 'x\n[7](runs/demo/20261207T130320Z/report.md "level-100pct.nope")\n[8](runs/demo/20261129T000000Z/report.md "a.b")\n';
    const { text, errors } = writeFigures(docs(bad), bad);
    assert.equal(text, bad);
    assert.equal(errors.length, 2);
    assert.match(errors[0], /results\.md:2: "level-100pct\.nope": no "nope" there$/);
    assert.match(errors[1], /results\.md:3: .*20261129T000000Z: no summary\.json \(is the run kept\? scripts\/keep-run\.sh\)$/);
  });
});

describe('figures typed by hand', () => {
  test('flagged with their line; not inside a figure, a block, another generator\'s block, code or a span marked as typed', () => {
    const text = [
      'HAProxy took 205 µs and the ramp 2,502/s.',
      '[205](runs/demo/20261207T130320Z/report.md "level-100pct.haproxy_us_per_conn") µs, `sleep 3000 ms`',
      '<span title="typed: the article\'s">31.5k requests/s and 16k/s</span>, 3 s steps, maxconn 20',
      '<!-- figures: results runs/demo/20261207T130320Z -->',
      '| 50% | 12 ms |',
      '<!-- /figures -->',
      '```',
      'p99 12 ms',
      '```',
      'a 4.1× cost',
      '<!-- test-time: made by scripts/test-table.sh from the kept CI runs; do not edit -->',
      'signed RSA-2048 in 250.5–273.0 µs',
      '<!-- /test-time -->',
      '<!-- other: not a generator\'s block -->',
      'took 12 ms',
      '<!-- /other -->',
    ].join('\n');
    const found = lintFigures('doc.md', text);
    assert.deepEqual(found.map((f) => f.replace(/ is typed.*/, '')), ['doc.md:1: "205 µs"', 'doc.md:1: "2,502/s"', 'doc.md:10: "4.1×"', 'doc.md:15: "12 ms"']);
  });
});

describe('README\'s measured table', () => {
  test('a row\'s figure from a run the row does not link is named', () => {
    const fig = (run) => `[1](docs/runs/demo/${run}/report.md "a.b")`;
    const text = [
      '## Measured', '', '| q | measured | run |', '| --- | --- | --- |',
      `| a | ${fig('20261207T130320Z')} | [run](docs/runs/demo/20261207T130320Z/report.md) |`,
      `| b | ${fig('20261207T130320Z')} and ${fig('20261129T000000Z')} | [run](docs/runs/demo/20261207T130320Z/report.md) |`,
      '## Next', `| c | ${fig('20261129T000000Z')} | |`,
    ].join('\n');
    assert.deepEqual(rowRunFindings('README.md', text, '## Measured'), ['README.md:6: a figure from docs/runs/demo/20261129T000000Z, which the row does not link: link its report in the row']);
    assert.deepEqual(rowRunFindings('README.md', text, '## Gone'), ['README.md: no heading "## Gone"']);
  });
});
