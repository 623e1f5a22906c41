// The "measured vs published" half of the lab: read a results directory
// (evidence/run.mjs), aggregate each step's runs into rows (rows.mjs), judge
// the scenario's expectations (verdicts.mjs), read across the rows
// (readings.mjs) and write summary.json, summary.csv, report.md (format.mjs),
// chart.svg (chart.mjs) and, for steps that held connections,
// chart-time.svg (chart-time.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { renderChart } from './chart.mjs';
import { renderTimeChart } from './chart-time.mjs';
import { readText } from '../evidence/files.mjs';
import { METRICS } from '../core/metrics.mjs';
import { formatTable, toCSV, toMarkdown } from './format.mjs';
import { readingsOf } from './readings.mjs';
import { addRatio, aggregate, compare } from './rows.mjs';
import { judge } from './verdicts.mjs';
import { parseEnv } from '../core/envfile.mjs';

export { readRun } from '../evidence/run.mjs';
export { METRICS, metricLabel } from '../core/metrics.mjs';
export { formatTable };

// The rows of a run: one per step id, its repeated runs together.
function rowsOf(run) {
  const groups = new Map();
  for (const step of run.steps) {
    if (!groups.has(step.id)) groups.set(step.id, []);
    groups.get(step.id).push(step);
  }
  return [...groups.values()].map(aggregate);
}

// buildReport RUN → the report object (also what summary.json holds).
export function buildReport(run) {
  const plan = run.plan;
  const columns = plan.columns ?? ['hits_per_sec'];
  for (const m of columns) if (!METRICS.includes(m)) throw new Error(`columns: unknown metric "${m}"`);
  const rows = rowsOf(run);
  const byId = new Map(rows.map((r) => [r.id, r]));
  if (plan.ratio_to !== null && plan.ratio_to !== undefined) addRatio(rows, byId, plan.ratio_to);
  for (const row of rows) judge(row, byId);
  const report = {
    scenario: plan.scenario,
    description: plan.description ?? '',
    source: plan.source ?? null,
    x: plan.x ?? { name: 'step', label: 'step' },
    columns,
    ratio_to: plan.ratio_to ?? null,
    notes: plan.notes ?? [],
    options: plan.options ?? {},
    incomplete: run.incomplete ?? null,
    limits: limitsOf(plan.preflight),
    ok: rows.every((r) => !r.verdict.startsWith('FAIL')),
    rows,
    comparisons: [],
  };
  report.comparisons = (plan.comparisons ?? []).map((c) => compare(c, byId, report));
  if (run.connectionFloors) report.floors = run.connectionFloors;
  addReadings(report, readingsOf(plan, rows, run), plan.chart ?? null);
  return report;
}

// limitsOf PREFLIGHT: what the preflight read and planned for (connection
// scenarios; null otherwise): each limit, the connections it allows, the one
// that binds first and the next, and the wall a --processes run was sized past.
function limitsOf(p) {
  if (!p?.caps) return null;
  const caps = p.caps.map((c) => ({ limit: c.limit, value: c.value ?? null, allows: c.allows ?? null }));
  const order = [...caps].filter((c) => c.allows !== null).sort((a, b) => a.allows - b.allows);
  return {
    target: p.target, largest: p.largest, binding: p.binding?.limit ?? null,
    next: order.find((c) => c.limit !== p.binding?.limit) ?? null,
    wall: p.wall ?? null, processes: p.limits?.processes ?? null, caps,
  };
}

// summary.json keeps the readings as one list of lines (as it always has),
// and their tables under their titles (docs' generated tables read them);
// report.md gives each reading its heading from readingSections, which
// stays out of the JSON (not enumerable).
function addReadings(report, sections, chart) {
  report.readings = sections.flatMap((s) => s.lines);
  const tables = sections.filter((s) => s.table).map(({ title, table }) => ({ title, table }));
  if (tables.length) report.reading_tables = tables;
  report.chart = chart;
  for (const s of sections) {
    if (s.tipping) report.tipping_point = s.tipping;
    if (s.ok === false && !report.incomplete) report.ok = false;
  }
  Object.defineProperty(report, 'readingSections', { value: sections.map(({ title, lines, table }) => ({ title, lines, table })) });
}

// The configs plan steps point to, keyed by step dir (when the caller gives none).
function readConfigs(dir, report) {
  const configs = {};
  for (const row of report.rows) {
    for (const r of row.per_run) {
      const text = r.config ? readText(path.join(dir, r.config)) : null;
      if (text !== null) configs[r.dir] = text;
    }
  }
  return configs;
}

// What a report writes: chart-time.svg only when a step has a time series.
export const OUTPUTS = ['summary.json', 'summary.csv', 'report.md', 'chart.svg', 'chart-time.svg'];

// versionsOf DIR RUN: what ran, by name: the lab's services as the runner
// read them (versions.env) and each load tool's own, from its evidence.
export function versionsOf(dir, run) {
  const file = path.join(dir, 'versions.env');
  const lab = fs.existsSync(file) ? parseEnv(fs.readFileSync(file, 'utf8')) : {};
  return Object.assign(lab, ...run.steps.map((s) => s.versions ?? {}));
}

// commandIn DIR: the command that made the run, as the planner wrote it in
// run.env ('' when it has none).
export function commandIn(dir) {
  const file = path.join(dir, 'run.env');
  return (fs.existsSync(file) ? parseEnv(fs.readFileSync(file, 'utf8')).command : '') ?? '';
}

// layout VALUE DEPTH: JSON indented down to a row's figures, one per line
// (grep finds "hits_per_sec"), and compact below them and in lists of plain
// values: a 46-step run's figures stay readable and its file small (kept in git).
function layout(value, depth = 0) {
  if (value === null || typeof value !== 'object' || depth >= 4) return JSON.stringify(value);
  const pad = '  '.repeat(depth + 1);
  const end = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (!value.length || value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
    return `[\n${value.map((v) => `${pad}${layout(v ?? null, depth + 1)}`).join(',\n')}\n${end}]`;
  }
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
  if (!entries.length) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${JSON.stringify(k)}: ${layout(v, depth + 1)}`).join(',\n')}\n${end}}`;
}

// summaryJson REPORT: summary.json's text (layout). A step that ran once has
// its figures once: min, max and its one run's copy would repeat them.
export function summaryJson(report) {
  const rows = report.rows.map((row) => (!row.per_run || row.per_run.length > 1 ? row : {
    ...row,
    min: undefined,
    max: undefined,
    per_run: row.per_run.map(({ measured, ...rest }) => rest),
  }));
  return `${layout(JSON.parse(JSON.stringify({ ...report, rows })))}\n`;
}

// writeOutputs DIR REPORT {configs, versions, command} → the names written.
// Only these files are ever (re)written: summary.json, summary.csv,
// report.md, chart.svg and chart-time.svg when a step has a time series (a
// stale one is removed when none has). Everything is rendered first so an
// error leaves no half-written set.
export function writeOutputs(dir, report, extras = {}) {
  const configs = extras.configs ?? readConfigs(dir, report);
  const timeChart = renderTimeChart(report);
  const texts = {
    'summary.json': summaryJson(report),
    'summary.csv': toCSV(report),
    'report.md': toMarkdown(report, { ...extras, configs }),
    'chart.svg': renderChart(report),
    ...(timeChart === null ? {} : { 'chart-time.svg': timeChart }),
  };
  if (timeChart === null) fs.rmSync(path.join(dir, 'chart-time.svg'), { force: true });
  for (const [name, content] of Object.entries(texts)) fs.writeFileSync(path.join(dir, name), content);
  return Object.keys(texts);
}
