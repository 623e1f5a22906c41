// Lints the provisioned Grafana dashboards given as arguments. The rules are
// those of grafana/dashboard-linter that fit a lab (that tool is not on the Go
// module proxy reachable here), plus the lab's own:
//   - valid JSON, a fixed uid and a title; unique uids and panel ids
//   - every panel and target names the provisioned Prometheus datasource (uid)
//   - every panel has a title, a description and a unit; every target an expr
//   - rate()/irate()/increase() use $__rate_interval (or $__range for a total
//     over the time picker), never a hard-coded window that breaks on zoom
//   - template variables are label_values() queries on the same datasource
//   - panels sit on the 24-column grid without overlapping
import { readFileSync } from 'node:fs';

const DATASOURCE_UID = process.env.DATASOURCE_UID ?? 'prometheus';
const problems = [];
const uids = new Set();

function checkDatasource(where, ds) {
  if (!ds || ds.type !== 'prometheus' || ds.uid !== DATASOURCE_UID) {
    problems.push(`${where}: datasource ${JSON.stringify(ds)} is not the provisioned {"type":"prometheus","uid":"${DATASOURCE_UID}"}`);
  }
}

function checkExpr(where, expr) {
  if (typeof expr !== 'string' || expr.trim() === '') return problems.push(`${where}: no expr`);
  for (const m of expr.matchAll(/\b(rate|irate|increase)\s*\([^[]*\[([^\]]+)\]/g)) {
    if (m[2] !== '$__rate_interval' && m[2] !== '$__range') {
      problems.push(`${where}: ${m[1]}(...[${m[2]}]) should use [$__rate_interval]`);
    }
  }
  return undefined;
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

function lint(file, d) {
  if (!d.uid) problems.push(`${file}: no fixed uid`);
  else if (uids.has(d.uid)) problems.push(`${file}: uid "${d.uid}" used by another dashboard`);
  uids.add(d.uid);
  if (!d.title) problems.push(`${file}: no title`);
  for (const v of d.templating?.list ?? []) {
    const where = `${file}: variable ${v.name}`;
    if (v.type !== 'query') continue;
    checkDatasource(where, v.datasource);
    const q = typeof v.query === 'string' ? v.query : v.query?.query;
    if (!/^label_values\(/.test(q ?? '')) problems.push(`${where}: query should be label_values(...), got ${q}`);
  }
  const panels = (d.panels ?? []).flatMap((p) => (p.type === 'row' ? [p, ...(p.panels ?? [])] : [p]));
  const ids = new Set();
  const placed = [];
  for (const p of panels) {
    const where = `${file}: panel "${p.title ?? p.id}"`;
    if (ids.has(p.id)) problems.push(`${where}: id ${p.id} used twice`);
    ids.add(p.id);
    const g = p.gridPos;
    if (!g || g.x < 0 || g.w < 1 || g.x + g.w > 24 || g.h < 1) problems.push(`${where}: gridPos ${JSON.stringify(g)} off the 24-column grid`);
    else {
      for (const [other, og] of placed) if (overlaps(g, og)) problems.push(`${where}: overlaps panel "${other}"`);
      placed.push([p.title, g]);
    }
    if (p.type === 'row') continue;
    if (!p.title) problems.push(`${where}: no title`);
    if (!p.description) problems.push(`${where}: no description`);
    if (!p.fieldConfig?.defaults?.unit) problems.push(`${where}: no unit`);
    checkDatasource(where, p.datasource);
    if (!(p.targets ?? []).length) problems.push(`${where}: no queries`);
    for (const t of p.targets ?? []) {
      checkDatasource(`${where} target ${t.refId}`, t.datasource);
      checkExpr(`${where} target ${t.refId}`, t.expr);
    }
  }
}

for (const file of process.argv.slice(2)) {
  try {
    lint(file, JSON.parse(readFileSync(file, 'utf8')));
  } catch (err) {
    problems.push(`${file}: not valid JSON (${err.message})`);
  }
}
for (const p of problems) console.log(p);
if (problems.length > 0 || process.argv.length < 3) process.exit(1);
console.log(`${process.argv.length - 2} dashboards pass the lint rules`);
