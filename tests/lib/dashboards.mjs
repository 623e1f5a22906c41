// Lints the provisioned Grafana dashboards against the rules Grafana enforces
// when it provisions them and the rules that keep each panel truthful.
//   node tests/lib/dashboards.mjs [--provisioning DIR] DASHBOARD.json...
// DIR (default grafana/provisioning) holds Grafana's provisioning files: the
// dashboard providers' folders and the datasources' uids come from there.
//
// Grafana's provisioning rules (a dashboard that breaks one is not loaded):
//   - a dashboard's title is never its folder's name ("Dashboard name cannot
//     be the same as folder"); titles are unique; uids are unique, at most 40
//     characters of [A-Za-z0-9_-]
//   - every datasource a panel or target names is a provisioned one
// Truthful panels (each rule a way a panel can mislead its reader):
//   - a series keeps the unit of what it counts: connection counts in a
//     connection unit, rates in a per-second unit (maxconn drawn in req/s);
//     CPU seconds per second are cores, not a rate
//   - a ratio never divides by a count that can be near zero (40 MiB "per
//     connection" between steps): the denominator is filtered, e.g. (x >= 100),
//     or is a limit, never near zero (a container's CPU allowance)
//   - per-server series are joined with lab:haproxy_server_present, so the
//     server-template slots with no replica behind them are not listed
//   - every series has a name: a legendFormat on time series, and table
//     (instant) queries renamed by an organize transformation ("Value #A")
//   - several table queries in one panel are merged into one frame (a bar
//     chart draws one frame: unmerged, it showed one bar)
//   - a selector of load tools' containers (service=~"...") names every load
//     tool's service (the engine's table, scripts/labctl/core/loadtools.mjs): a
//     tool left out would be missing from the figure, silently
// And the house rules: a fixed uid, a title, a description and a unit on each
// panel, rate() over $__rate_interval, label_values() variables, no overlaps.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { LOAD_TOOLS } from '../../scripts/labctl/core/loadtools.mjs';

const UID_MAX = 40;
// Below this many connections a "per connection" ratio is noise.
const MIN_DENOMINATOR = 10;
// Limits a container is given, never near zero: a ratio over one is a share
// of the limit (the exporter reports none it cannot read).
const LIMIT_METRICS = new Set(['container_cpu_allowance_cores']);
// Counters of CPU seconds: their rate is in cores, not per second.
const CPU_SECONDS = /cpu\w*_seconds_total$/;
const LOAD_SERVICES = [...new Set(Object.values(LOAD_TOOLS).map((t) => t.service))];

const problems = [];
const report = (where, text) => problems.push(`${where}: ${text}`);

// --- provisioning files (a small YAML subset: the keys Grafana's files use) --

function yamlValues(dir, key) {
  let files = [];
  try {
    files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  } catch {
    return [];
  }
  const re = new RegExp(`^\\s*(?:-\\s+)?${key}:\\s*(.+?)\\s*$`);
  return files.flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .map((line) => line.match(re)?.[1])
      .filter(Boolean)
      .map((v) => v.replace(/^(["'])(.*)\1$/, '$2')),
  );
}

function readProvisioning(dir) {
  const types = yamlValues(join(dir, 'datasources'), 'type');
  const datasources = yamlValues(join(dir, 'datasources'), 'uid').map((uid, i) => ({ uid, type: types[i] }));
  const folders = yamlValues(join(dir, 'dashboards'), 'folder');
  if (datasources.length === 0) report(dir, 'no provisioned datasource with a uid (datasources/*.yaml)');
  if (folders.length === 0) report(dir, 'no dashboard provider with a folder (dashboards/*.yaml)');
  return { datasources, folders };
}

// --- PromQL, as text -------------------------------------------------------

// The expression with quoted strings and label matchers blanked out, so that
// operators are found only where they are operators.
function code(expr) {
  return expr.replace(/"(?:[^"\\]|\\.)*"/g, (s) => ' '.repeat(s.length)).replace(/\{[^}]*\}/g, (s) => ' '.repeat(s.length));
}

// The balanced "( ... )" starting at i, or the bare operand there.
function operandAt(text, i) {
  while (text[i] === ' ') i += 1;
  const word = text.slice(i).match(/^[\w:]+\s*/)?.[0] ?? '';
  // A bare metric (with its range), or a function call with its arguments.
  if (text[i + word.length] !== '(') return text.slice(i).match(/^[\w:]+(?:\s*\[[^\]]*\])?/)?.[0] ?? '';
  let depth = 0;
  for (let j = i; j < text.length; j += 1) {
    if (text[j] === '(') depth += 1;
    if (text[j] === ')' && --depth === 0) return text.slice(i, j + 1);
  }
  return text.slice(i);
}

function isGuarded(denominator) {
  const inner = denominator.trim().replace(/^\((.*)\)$/s, '$1').trim();
  if (LIMIT_METRICS.has(inner)) return true;
  const filter = inner.match(/>=?\s*([0-9.]+)\s*$/);
  const clamp = inner.match(/^clamp_min\s*\(.*,\s*([0-9.]+)\s*\)$/s);
  const n = Number((filter ?? clamp)?.[1]);
  return Number.isFinite(n) && n >= MIN_DENOMINATOR;
}

const CONNECTION_GAUGE = /(current_sessions|limit_sessions|current_connections|max_connections|open_connections)\b/;
const metricNames = (expr) => [...code(expr).matchAll(/\b([a-zA-Z_:][\w:]*)\s*(?=\{|\[|\)|$|\s)/g)].map((m) => m[1]);

// What a query's values are: "rate" (per second), "connections", or unknown.
function kindOf(expr) {
  const c = code(expr);
  // A quantile of a rate is in the histogram's unit, not per second.
  if (/\bhistogram_quantile\s*\(/.test(c)) return undefined;
  // CPU seconds per second (alone, or over a CPU allowance) are cores.
  const rated = [...c.matchAll(/\b(?:i?rate|deriv)\s*\(\s*([\w:]+)/g)].map((m) => m[1]);
  if (rated.length > 0 && rated.every((name) => CPU_SECONDS.test(name))) return undefined;
  // A rate divided by a rate (resumed ÷ all handshakes, CPU seconds ÷
  // requests) is not per second any more.
  if (c.split('/').filter((part) => /\b(i?rate|deriv)\s*\(/.test(part)).length >= 2) return undefined;
  if (/\b(i?rate|deriv)\s*\(/.test(c) || /:rate\w*\b/.test(c)) return 'rate';
  if (c.includes('/')) return undefined;
  const names = metricNames(expr).filter((n) => /_/.test(n));
  if (names.length > 0 && names.every((n) => CONNECTION_GAUGE.test(n))) return 'connections';
  return undefined;
}

const UNIT_OK = {
  rate: (u) => /^(reqps|rps|ops|wps|cps|pps|Bps|bps|binBps|decbytes\/s)$|\/s(ec)?$|ps$/.test(u ?? ''),
  connections: (u) => /conn/.test(u ?? ''),
};

// The unit Grafana gives a target's series: an override that matches its
// name (legendFormat) or its query, else the panel's default.
function unitOf(panel, target) {
  let unit = panel.fieldConfig?.defaults?.unit;
  for (const o of panel.fieldConfig?.overrides ?? []) {
    const m = o.matcher ?? {};
    const hit =
      (m.id === 'byName' && m.options === target.legendFormat) ||
      (m.id === 'byFrameRefID' && m.options === target.refId) ||
      (m.id === 'byRegexp' && new RegExp(m.options).test(target.legendFormat ?? ''));
    const u = hit && (o.properties ?? []).find((p) => p.id === 'unit');
    if (u) unit = u.value;
  }
  return unit;
}

// --- rules -----------------------------------------------------------------

function checkDatasource(where, ds, datasources) {
  if (!ds || !datasources.some((p) => p.uid === ds.uid && (!p.type || p.type === ds.type))) {
    report(where, `datasource ${JSON.stringify(ds)} is not a provisioned one (${datasources.map((p) => `${p.type}/${p.uid}`).join(', ')})`);
  }
}

function checkExpr(where, expr) {
  if (typeof expr !== 'string' || expr.trim() === '') return report(where, 'no expr');
  for (const m of expr.matchAll(/\b(rate|irate|increase)\s*\([^[]*\[([^\]]+)\]/g)) {
    if (m[2] !== '$__rate_interval' && m[2] !== '$__range') {
      report(where, `${m[1]}(...[${m[2]}]) should use [$__rate_interval]`);
    }
  }
  const c = code(expr);
  for (const m of c.matchAll(/\//g)) {
    const denominator = operandAt(c, m.index + 1);
    if (!isGuarded(denominator)) {
      report(where, `divides by ${expr.slice(m.index + 1).trim().slice(0, denominator.length + 1).trim()}, which can be near zero: filter it, e.g. (... >= 100), and say so in the description`);
    }
  }
  for (const [, alternatives] of expr.matchAll(/\bservice=~"([^"]*)"/g)) {
    const named = alternatives.split('|');
    const missing = LOAD_SERVICES.filter((s) => !named.includes(s));
    if (named.some((s) => LOAD_SERVICES.includes(s)) && missing.length > 0) {
      report(where, `selects load tools' containers (service=~"${alternatives}") but not ${missing.join(', ')}: name every load tool's service (scripts/labctl/core/loadtools.mjs)`);
    }
  }
  if (/\bhaproxy_server_\w+/.test(c) && !/\blab:haproxy_server_present\b/.test(c)) {
    const by = c.match(/^\s*(?:sum|max|min|avg|count)\s+by\s*\(([^)]*)\)/)?.[1];
    if (by === undefined || /\bserver\b/.test(by)) {
      report(where, 'lists every server-template slot, also those with no replica behind them: join with "and on (backend, server) lab:haproxy_server_present"');
    }
  }
  return undefined;
}

function checkNames(where, panel) {
  const tables = (panel.targets ?? []).filter((t) => t.instant === true || t.format === 'table');
  for (const t of (panel.targets ?? []).filter((x) => !tables.includes(x))) {
    const legend = (t.legendFormat ?? '').trim();
    if (legend === '' || legend === '__auto' || legend === '{{__name__}}') {
      report(`${where} target ${t.refId}`, 'no legendFormat: its series would be named after its labels or "Value"');
    }
    const kind = kindOf(t.expr ?? '');
    const unit = unitOf(panel, t);
    if (kind && !UNIT_OK[kind](unit)) {
      report(`${where} target ${t.refId}`, `"${t.legendFormat || t.refId}" counts ${kind === 'rate' ? 'per second' : 'connections'} but is drawn in unit "${unit}": give it ${kind === 'rate' ? 'a per-second unit' : 'a connection unit (e.g. "suffix: conn")'} in an override`);
    }
  }
  if (tables.length === 0) return;
  const tx = panel.transformations ?? [];
  if (tables.length > 1 && !tx.some((x) => x.id === 'merge' || x.id === 'joinByField')) {
    report(where, `${tables.length} table queries but no merge transformation: a bar chart draws only one of the frames`);
  }
  const renamed = Object.assign({}, ...tx.filter((x) => x.id === 'organize').map((x) => x.options?.renameByName ?? {}));
  for (const t of tables) {
    const field = tables.length > 1 ? `Value #${t.refId}` : 'Value';
    if (!renamed[field]) report(`${where} target ${t.refId}`, `its values are shown as "${field}": rename the field in an organize transformation`);
  }
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function lintDashboard(file, d, provisioning, seen) {
  const { datasources, folders } = provisioning;
  if (!d.uid) report(file, 'no fixed uid');
  else {
    if (seen.uids.has(d.uid)) report(file, `uid "${d.uid}" used by another dashboard`);
    if (d.uid.length > UID_MAX) report(file, `uid "${d.uid}" is ${d.uid.length} characters: Grafana takes at most ${UID_MAX}`);
    if (!/^[A-Za-z0-9_-]+$/.test(d.uid)) report(file, `uid "${d.uid}" has characters Grafana refuses (only A-Z a-z 0-9 _ -)`);
    seen.uids.add(d.uid);
  }
  if (!d.title) report(file, 'no title');
  else {
    if (seen.titles.has(d.title.toLowerCase())) report(file, `title "${d.title}" used by another dashboard`);
    seen.titles.add(d.title.toLowerCase());
    for (const folder of folders) {
      if (folder.trim().toLowerCase() === d.title.trim().toLowerCase()) {
        report(file, `title "${d.title}" is the name of its provisioning folder: Grafana refuses it ("Dashboard name cannot be the same as folder")`);
      }
    }
  }
  for (const v of d.templating?.list ?? []) {
    const where = `${file}: variable ${v.name}`;
    if (v.type !== 'query') continue;
    checkDatasource(where, v.datasource, datasources);
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    if (!/^label_values\(/.test(q ?? '')) report(where, `query should be label_values(...), got ${q}`);
  }
  const panels = (d.panels ?? []).flatMap((p) => (p.type === 'row' ? [p, ...(p.panels ?? [])] : [p]));
  const ids = new Set();
  const placed = [];
  for (const p of panels) {
    const where = `${file}: panel "${p.title ?? p.id}"`;
    if (ids.has(p.id)) report(where, `id ${p.id} used twice`);
    ids.add(p.id);
    const g = p.gridPos;
    if (!g || g.x < 0 || g.w < 1 || g.x + g.w > 24 || g.h < 1) report(where, `gridPos ${JSON.stringify(g)} off the 24-column grid`);
    else {
      for (const [other, og] of placed) if (overlaps(g, og)) report(where, `overlaps panel "${other}"`);
      placed.push([p.title, g]);
    }
    if (p.type === 'row') continue;
    if (!p.title) report(where, 'no title');
    if (!p.description) report(where, 'no description');
    if (!p.fieldConfig?.defaults?.unit) report(where, 'no unit');
    checkDatasource(where, p.datasource, datasources);
    if (!(p.targets ?? []).length) report(where, 'no queries');
    for (const t of p.targets ?? []) {
      checkDatasource(`${where} target ${t.refId}`, t.datasource, datasources);
      checkExpr(`${where} target ${t.refId}`, t.expr);
    }
    checkNames(where, p);
  }
}

function main(args) {
  let dir = 'grafana/provisioning';
  if (args[0] === '--provisioning') [, dir, ...args] = args;
  if (args.length === 0) {
    console.log('usage: node tests/lib/dashboards.mjs [--provisioning DIR] DASHBOARD.json...');
    return 2;
  }
  const provisioning = readProvisioning(dir);
  const seen = { uids: new Set(), titles: new Set() };
  for (const file of args) {
    let dashboard;
    try {
      dashboard = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      report(file, `not valid JSON (${err.message})`);
      continue;
    }
    lintDashboard(file, dashboard, provisioning, seen);
  }
  for (const p of problems) console.log(p);
  if (problems.length > 0) return 1;
  console.log(`${args.length} dashboards pass the lint rules (provisioning from ${dir})`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
