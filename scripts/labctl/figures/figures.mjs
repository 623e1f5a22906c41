// The docs' measured figures, written from the kept runs' summary.json
// (scripts/figures.sh). Two forms, both plain Markdown:
//   a figure: a link to a kept run's report whose title says what it is,
//     [2,502](runs/connections/20261207T130320Z/report.md "level-100pct.ramp_rate | n0")
//     the link's text is written from the expression; the reader sees the
//     figure, linked to the report it comes from;
//   a block: a table of a kept run's, between two comments,
//     <!-- figures: results runs/fullconn/20261127T031346Z -->
//     <!-- figures: table runs/connections/20261207T130320Z Where a connection's CPU goes -->
//     ...written here...
//     <!-- /figures -->
//     "results" is the report's measured-vs-published table, "table TITLE" the
//     table of its reading TITLE.
// An expression is a figure's path in summary.json, or arithmetic (+ - * /,
// parentheses) over paths and numbers. A path's segments go down objects by
// key and arrays by an element's id (or index); one that starts with a step's
// id starts at that step's measured figures: "level-100pct.ramp_rate" is
// rows[id = level-100pct].measured.ramp_rate. Formats: nK (K decimals, with
// thousands separators; the default n0), gK (K significant digits), text.
// A number format of a text (a reading's line, a table's cell) takes its
// first number, or its Nth with @N (n1@2). In a Markdown table's row the
// "|" before the format is written "\|", as a cell's pipe must be: the
// generator writes it so.
// A figure typed outside these forms is flagged (lintFigures).
import fs from 'node:fs';
import path from 'node:path';
import { markdownTable, resultsTable } from '../report/format.mjs';

export class FigureError extends Error {}

// A kept run's folder as a document links it (from README, docs/ or lessons/).
const RUN = String.raw`((?:\.\.\/)*(?:docs\/)?runs\/[a-z0-9-]+\/\d{8}T\d{6}Z)`;
const LINK = new RegExp(String.raw`\[([^\]\n]*)\]\(${RUN}\/report\.md "([^"\n]+)"\)`, 'g');
const BLOCK = new RegExp(String.raw`(<!-- figures: (results|table) ${RUN}(?: ([^\n]*?))? -->\n)([\s\S]*?)(<!-- \/figures -->)`, 'g');

// summaryOf DOCDIR RUNPATH CACHE → the kept run's summary.json, parsed once.
function summaryOf(docDir, runPath, cache) {
  const file = path.join(docDir, runPath, 'summary.json');
  if (!cache.has(file)) {
    if (!fs.existsSync(file)) throw new FigureError(`${path.join(docDir, runPath)}: no summary.json (is the run kept? scripts/keep-run.sh)`);
    cache.set(file, JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return cache.get(file);
}

// resolve SUMMARY PATH → the value at PATH (see the top).
export function resolve(summary, dotted) {
  const segments = dotted.split('.');
  let at = summary;
  if (!(segments[0] in summary) && summary.rows?.some((r) => r.id === segments[0])) {
    const id = segments.shift();
    at = summary.rows.find((r) => r.id === id).measured;
  }
  for (const seg of segments) {
    if (Array.isArray(at)) at = at.find((e) => e?.id === seg || e?.title === seg) ?? (/^\d+$/.test(seg) ? at[Number(seg)] : undefined);
    else at = at !== null && typeof at === 'object' ? at[seg] : undefined;
    if (at === undefined) throw new FigureError(`"${dotted}": no "${seg}" there`);
  }
  return at;
}

// evaluate SUMMARY EXPR → a number or a string: paths, numbers, + - * / ( ).
export function evaluate(summary, expr) {
  const tokens = expr.match(/\d+(?:\.\d+)?(?![\w-])|[A-Za-z_][\w.:-]*|[-+*/()]/g) ?? [];
  if (tokens.join('') !== expr.replace(/\s+/g, '')) throw new FigureError(`"${expr}": not an expression of paths, numbers and + - * / ( )`);
  let i = 0;
  const primary = () => {
    const t = tokens[i++];
    if (t === '(') {
      const v = sum();
      if (tokens[i++] !== ')') throw new FigureError(`"${expr}": a "(" is not closed`);
      return v;
    }
    if (t === '-') return -primary();
    if (t === undefined) throw new FigureError(`"${expr}": ends too soon`);
    return /^\d/.test(t) ? Number(t) : resolve(summary, t);
  };
  const number = (v) => {
    if (typeof v !== 'number') throw new FigureError(`"${expr}": arithmetic on ${JSON.stringify(v)}, not a number`);
    return v;
  };
  const product = () => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') v = tokens[i++] === '*' ? number(v) * number(primary()) : number(v) / number(primary());
    return v;
  };
  const sum = () => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? number(v) + number(product()) : number(v) - number(product());
    return v;
  };
  const v = sum();
  if (i !== tokens.length) throw new FigureError(`"${expr}": "${tokens[i]}" is not expected there`);
  return v;
}

// format VALUE FORMAT → the figure's text.
export function format(raw, fmt = 'n0') {
  if (raw === null) throw new FigureError('the figure is null in summary.json: not measured');
  if (fmt === 'text') return String(raw);
  const m = /^([ng])(\d)(?:@([1-9]\d*))?$/.exec(fmt);
  if (!m) throw new FigureError(`format "${fmt}": use nK (K decimals), gK (K significant digits), either with @N (a text's Nth number), or text`);
  let value = raw;
  if (typeof raw === 'string') {
    const nth = [...raw.matchAll(/-?\d[\d,]*(?:\.\d+)?/g)][Number(m[3] ?? 1) - 1];
    if (!nth) throw new FigureError(`"${raw}" has no number ${m[3] ?? 1}`);
    value = Number(nth[0].replace(/,/g, ''));
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new FigureError(`${JSON.stringify(raw)} is not a number to write`);
  const digits = Number(m[2]);
  const v = m[1] === 'g' ? Number(value.toPrecision(Math.max(1, digits))) : value;
  const decimals = m[1] === 'n' ? digits : Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(v) || 1)));
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

// blockLines SUMMARY KIND ARG → the block's Markdown lines.
function blockLines(summary, kind, arg) {
  if (kind === 'results') return resultsTable(summary);
  const found = (summary.reading_tables ?? []).find((t) => t.title === arg);
  if (!found) throw new FigureError(`no reading table "${arg}" (it has: ${(summary.reading_tables ?? []).map((t) => t.title).join(', ') || 'none'})`);
  return markdownTable(found.table);
}

const lineAt = (text, index) => text.slice(0, index).split('\n').length;

// writeFigures FILE TEXT → {text, errors}: TEXT with every figure and block
// written from the runs it names (FILE's folder: where its links start).
export function writeFigures(file, text) {
  const docDir = path.dirname(file);
  const cache = new Map();
  const errors = [];
  const fail = (index, err) => {
    if (!(err instanceof FigureError)) throw err;
    errors.push(`${file}:${lineAt(text, index)}: ${err.message}`);
  };
  let out = text.replace(BLOCK, (whole, open, kind, runPath, arg, _body, close, index) => {
    try {
      return `${open}${blockLines(summaryOf(docDir, runPath, cache), kind, arg).join('\n')}\n${close}`;
    } catch (err) {
      fail(index, err);
      return whole;
    }
  });
  out = out.replace(LINK, (whole, shown, runPath, title, index, all) => {
    const [expr, fmt] = title.split(/\\?\|/).map((s) => s.trim());
    // In a table's row a bare "|" ends the cell, even inside a link's title
    // (GitHub's tables): there the format comes after "\|".
    const inTable = all.slice(all.lastIndexOf('\n', index) + 1).startsWith('|');
    const written = fmt ? `${expr} ${inTable ? '\\|' : '|'} ${fmt}` : expr;
    try {
      return `[${format(evaluate(summaryOf(docDir, runPath, cache), expr), fmt || undefined)}](${runPath}/report.md "${written}")`;
    } catch (err) {
      fail(index, err);
      return whole;
    }
  });
  return { text: out, errors };
}

// A measured figure: a number and a unit only measurements have.
const TYPED = /(?<![\w./#:-])\d[\d,]*(?:\.\d+)?[kM]?\s?(?:µs|ms\b|KB\b|%|×|\/s\b|\/sec\b| a second\b| per second\b)/g;

// lintFigures FILE TEXT → ["FILE:LINE: ..."]: figures typed outside the
// generated forms, outside another generator's block (<!-- NAME: made by
// ... --> ... <!-- /NAME -->, e.g. scripts/test-table.sh's from the kept CI
// runs), outside code, and outside a span marked as not measured
// (<span title="typed: WHY">...</span>: the article's figure, a setting).
export function lintFigures(file, text) {
  const blanked = text
    .replace(BLOCK, (w) => w.replace(/[^\n]/g, ' '))
    .replace(/<!-- ([a-z][a-z-]*): made by [^\n]*?-->[\s\S]*?<!-- \/\1 -->/g, (w) => w.replace(/[^\n]/g, ' '))
    .replace(/```[\s\S]*?```/g, (w) => w.replace(/[^\n]/g, ' '))
    .replace(LINK, (w) => w.replace(/[^\n]/g, ' '))
    .replace(/<span title="typed: [^"\n]+">[\s\S]*?<\/span>/g, (w) => w.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (w) => w.replace(/[^\n]/g, ' '))
    .replace(/<!--[\s\S]*?-->/g, (w) => w.replace(/[^\n]/g, ' '));
  return [...blanked.matchAll(TYPED)].map((m) => `${file}:${lineAt(blanked, m.index)}: "${m[0].trim()}" is typed: write it as a figure from a kept run (docs/results.md, "Generated figures"), or mark what is not measured <span title="typed: WHY">`);
}

// rowRunFindings FILE TEXT HEADING → ["FILE:LINE: ..."]: in the table under
// HEADING (README's measured table), each row's figures come from runs the row
// links to: a reader checks a row against its own reports.
export function rowRunFindings(file, text, heading) {
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  if (start === -1) return [`${file}: no heading "${heading}"`];
  const out = [];
  for (let i = start + 1; i < lines.length && !lines[i].startsWith('## '); i += 1) {
    if (!lines[i].startsWith('| ')) continue;
    const runs = (re) => new Set([...lines[i].matchAll(re)].map((m) => m[1]));
    const figures = runs(new RegExp(String.raw`\]\(${RUN}\/report\.md "`, 'g'));
    const linked = runs(new RegExp(String.raw`\]\(${RUN}\/report\.md\)`, 'g'));
    for (const run of figures) if (!linked.has(run)) out.push(`${file}:${i + 1}: a figure from ${run}, which the row does not link: link its report in the row`);
  }
  return out;
}
