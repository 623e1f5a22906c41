// Checks provisioned Grafana dashboards against @grafana/schema: the
// TypeScript types Grafana generates from its own CUE schemas and publishes
// with every release. The lab pins grafana/grafana:12.2.0 (.env), so
// package.json pins @grafana/schema 12.2.0. Grafana does not validate a
// provisioned dashboard: a misspelt or wrongly typed field is dropped or
// ignored without a word. Here it fails.
//
// How: each dashboard becomes a TypeScript file of statements
//   export const sN = <a piece of the dashboard's JSON> satisfies <its type>;
// one for the dashboard, one per panel, per panel's options and custom field
// config, and per target. An object literal gets TypeScript's excess-property
// check, so an unknown field is an error, not only a wrong type. The files are
// compiled with strict and noEmit, and each error is mapped back, through the
// syntax tree, to the dashboard, the panel (and target) and the JSON path.
//
// Usage: node check-dashboards.mjs DASHBOARD.json...   (exit 1 on problems)
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// typescript and @grafana/schema come from the node_modules beside this
// script, so the check works from any working directory.
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const ts = require('typescript');
const schemaDir = dirname(require.resolve('@grafana/schema/package.json'));
const schemaVersion = require('@grafana/schema/package.json').version;
const typesDir = join(schemaDir, 'dist/types');

// Panel plugin ids whose folder under raw/composable has another name.
const PANEL_DIRS = new Map([
  ['annolist', 'annotationslist'],
  ['dashlist', 'dashboardlist'],
  ['nodeGraph', 'nodegraph'],
  ['state-timeline', 'statetimeline'],
  ['status-history', 'statushistory'],
]);

// The published types of a panel plugin (raw/composable/<plugin>/panelcfg/x),
// or null when @grafana/schema has none for that panel type.
function panelCfg(type) {
  if (typeof type !== 'string' || !/^[A-Za-z0-9-]+$/.test(type)) return null;
  const dir = join(typesDir, 'raw/composable', PANEL_DIRS.get(type) ?? type, 'panelcfg/x');
  let file;
  try {
    file = readdirSync(dir).find((f) => f.endsWith('_types.gen.d.ts'));
  } catch {
    return null;
  }
  if (!file) return null;
  return {
    // A ".js" specifier resolves to the ".d.ts" beside it (moduleResolution bundler).
    module: join(dir, file.replace(/\.d\.ts$/, '.js')),
    hasFieldConfig: /^export interface FieldConfig\b/m.test(readFileSync(join(dir, file), 'utf8')),
  };
}

// The head of every generated file.
//  - D: the dashboard schema as generated from Grafana's CUE kind. The package
//    index exports a hand-written "veneer" Dashboard instead, whose annotation
//    target is a DataQuery (refId required): it rejects Grafana's own built-in
//    tag annotations ({type: "tags", tags, matchAny, limit}), which the CUE
//    schema (AnnotationTarget) describes exactly.
//  - Json<T>: JSON has no enums. The generated types use TypeScript string
//    enums, which accept only Enum.Member, never the plain string a dashboard
//    holds, so each becomes the union of its values ("list" | "table" |
//    "hidden"). Numeric enums (graphTooltip, refresh, ...) already accept
//    their number literals and stay as they are.
//  - Target: @grafana/schema 12.2.0 publishes no Prometheus query type (it
//    lives in @grafana/prometheus, which has no 12.2.0 release and pulls in
//    Grafana's UI). Grafana composes every query as DataQuery from
//    @grafana/schema (refId, hide, queryType, datasource, key) plus the
//    plugin's own fields. PromQuery below is the Prometheus plugin's part as
//    Grafana documents it (its PrometheusDataQuery kind: expr required, the
//    rest optional, format and editorMode enums), so a Prometheus target with
//    an unknown or wrong-typed field fails; other datasources' targets keep
//    their own fields untyped.
const HEAD = `import type * as S from ${JSON.stringify(join(typesDir, 'index.js'))};
import type * as D from ${JSON.stringify(join(typesDir, 'raw/dashboard/x/dashboard_types.gen.js'))};
type Json<T> =
  T extends string ? \`\${T}\` :
  T extends readonly (infer U)[] ? Json<U>[] :
  T extends object ? { [K in keyof T]: Json<T[K]> } :
  T;
type Target = Json<S.DataQuery> & Record<string, unknown>;
type PromQuery = Json<S.DataQuery> & {
  expr: string; editorMode?: 'code' | 'builder'; exemplar?: boolean;
  format?: 'time_series' | 'table' | 'heatmap'; instant?: boolean; range?: boolean;
  interval?: string; intervalFactor?: number; legendFormat?: string;
};
`;

// What to check in one dashboard: statements of { where, base, value, type }
// and the panel modules to import; problems found on the way go to problems.
function plan(file, dashboard, problems) {
  const p = { file, stmts: [], imports: new Map(), problems };
  const add = (where, base, value, type) => p.stmts.push({ where, base, value, type });
  if (!dashboard || typeof dashboard !== 'object' || Array.isArray(dashboard)) {
    p.problems.add(`${file}: not a dashboard object`);
    return p;
  }
  // One statement per panel, so an error names its panel and TypeScript does
  // not have to guess which member of Panel | RowPanel is meant.
  const { panels = [], ...top } = dashboard;
  add('dashboard', '', top, 'Omit<D.Dashboard, "panels">');
  const walk = (list, base) => {
    if (!Array.isArray(list)) return add('dashboard', base, list, 'D.Dashboard["panels"]');
    return list.forEach((panel, i) => {
      const at = `${base}[${i}]`;
      const where = `panel "${panel?.title ?? panel?.id ?? at}"`;
      if (panel?.type === 'row') {
        const { panels: inner = [], ...row } = panel;
        add(where, '', row, 'Omit<D.RowPanel, "panels">');
        return walk(inner, `${at}.panels`);
      }
      add(where, '', panel, 'D.Panel');
      const cfg = panelCfg(panel?.type);
      if (!cfg) {
        p.problems.add(`${file}: ${where}: panel type ${JSON.stringify(panel?.type)} has no published types in @grafana/schema ${schemaVersion}`);
      } else {
        if (!p.imports.has(cfg.module)) p.imports.set(cfg.module, `P${p.imports.size}`);
        const plugin = p.imports.get(cfg.module);
        if (panel.options !== undefined) add(where, 'options', panel.options, `${plugin}.Options`);
        const custom = panel.fieldConfig?.defaults?.custom;
        if (custom !== undefined && cfg.hasFieldConfig) {
          add(where, 'fieldConfig.defaults.custom', custom, `${plugin}.FieldConfig`);
        } else if (custom && Object.keys(custom).length) {
          // A plugin with no FieldConfig type has no custom field options at all.
          p.problems.add(`${file}: ${where}: fieldConfig.defaults.custom: panel type "${panel.type}" has no custom field options in @grafana/schema ${schemaVersion}`);
        }
      }
      return (Array.isArray(panel?.targets) ? panel.targets : []).forEach((t, j) => {
        const prometheus = (t?.datasource?.type ?? panel.datasource?.type) === 'prometheus';
        add(`${where} target ${t?.refId ?? j}`, `targets[${j}]`, t, prometheus ? 'PromQuery' : 'Target');
      });
    });
  };
  walk(panels, 'panels');
  return p;
}

// A value already reported: rendered as `(null as any)`, which fits any type,
// so the next round can see the errors it hid (see the loop below).
const REPORTED = '\u0000reported';

function render(p) {
  const lines = [HEAD];
  for (const [module, alias] of p.imports) lines.push(`import type * as ${alias} from ${JSON.stringify(module)};`);
  p.stmts.forEach((s, n) => {
    const literal = JSON.stringify(s.value, null, 2).replaceAll(JSON.stringify(REPORTED), '(null as any)');
    lines.push(`export const s${n} = ${literal} satisfies Json<${s.type}>;`);
  });
  return lines.join('\n') + '\n';
}

// The innermost syntax node that contains pos.
function nodeAt(sourceFile, pos) {
  let found = sourceFile;
  const visit = (node) => {
    if (pos >= node.getStart(sourceFile) && pos < node.getEnd()) {
      found = node;
      ts.forEachChild(node, visit);
    }
  };
  ts.forEachChild(sourceFile, visit);
  return found;
}

// The statement a diagnostic falls in and the JSON path (keys and indexes)
// inside that statement's value. (The checker has set the parent links.)
function locate(p, diag) {
  const keys = [];
  for (let n = nodeAt(diag.file, diag.start ?? 0); n; n = n.parent) {
    if (ts.isPropertyAssignment(n)) keys.unshift(n.name.text);
    else if (n.parent && ts.isArrayLiteralExpression(n.parent)) keys.unshift(n.parent.elements.indexOf(n));
    if (ts.isVariableDeclaration(n)) return { stmt: p.stmts[Number(n.name.text.slice(1))], keys };
  }
  return { stmt: null, keys };
}

const pathText = (base, keys) =>
  keys.reduce((s, k) => (typeof k === 'number' ? `${s}[${k}]` : s ? `${s}.${k}` : k), base);

// TypeScript's "Object literal may only specify known properties" (2353, and
// 2561 with a "did you mean"): the unknown-field errors.
const UNKNOWN_FIELD = new Set([2353, 2561]);
const NOT_SATISFIED = 1360;

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node check-dashboards.mjs DASHBOARD.json...');
  process.exit(2);
}

// Problems per dashboard, in argument order. Sets: later rounds of the
// compiler repeat earlier errors. faults: errors of this check itself.
const problems = files.map(() => new Set());
const faults = new Set();
const plans = new Map(); // generated .ts file -> plan
const tmp = mkdtempSync(join(tmpdir(), 'dashboard-schema-'));
try {
  files.forEach((file, i) => {
    let dashboard;
    try {
      dashboard = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      problems[i].add(`${file}: not valid JSON (${err.message})`);
      return;
    }
    const p = plan(file, dashboard, problems[i]);
    plans.set(join(tmp, `dashboard${i}.ts`), p);
  });

  // skipLibCheck: only the generated files are checked, not Grafana's .d.ts.
  const { options, errors } = ts.convertCompilerOptionsFromJson({
    strict: true,
    noEmit: true,
    target: 'es2022',
    lib: ['es2022'],
    module: 'esnext',
    moduleResolution: 'bundler',
    skipLibCheck: true,
    types: [],
  }, here);
  if (errors.length) throw new Error(ts.flattenDiagnosticMessageText(errors[0].messageText, ' '));

  // TypeScript reports less than it finds: in an object, a field of the wrong
  // type hides the unknown and missing fields beside it, an unknown field
  // hides the missing ones, and only the first unknown field is named. So the
  // files are compiled in rounds: each error is recorded, then taken out of
  // the JSON (an unknown field deleted, a wrong or incomplete value replaced
  // by REPORTED), and the next round shows what it hid. Each change removes a
  // field or a value, and a round that changes nothing is the last.
  let program;
  for (let changed = true; changed;) {
    changed = false;
    for (const [tsFile, p] of plans) writeFileSync(tsFile, render(p));
    program = ts.createProgram([...plans.keys()], options, undefined, program);
    for (const diag of ts.getPreEmitDiagnostics(program)) {
      // "Type X does not satisfy the expected type Y" says no more than the
      // line does: the reason under it is kept. Types in messages are printed
      // in full; past 100 characters they hide the point, so they are cut (the
      // JSON path says where to look).
      const chain = diag.messageText;
      const reason = chain.code === NOT_SATISFIED && chain.next?.length ? chain.next[0] : chain;
      const message = ts.flattenDiagnosticMessageText(reason, ' ')
        .replace(/\s+/g, ' ')
        .replace(/'([^']{100,})'/g, (_, type) => `'${type.slice(0, 60)}…'`);
      const p = diag.file && plans.get(diag.file.fileName);
      const { stmt, keys } = p ? locate(p, diag) : {};
      if (!stmt) {
        // Outside a dashboard's statements: a fault of this check, not of a dashboard.
        faults.add(`check-dashboards: ${diag.file?.fileName ?? ''}: ${message}`);
        continue;
      }
      const at = pathText(stmt.base, keys);
      p.problems.add(`${p.file}: ${stmt.where}${at ? `: ${at}` : ''}: ${message}`);
      const parent = keys.slice(0, -1).reduce((v, k) => v?.[k], stmt.value);
      const key = keys.at(-1);
      if (parent instanceof Object && key !== undefined && Object.hasOwn(parent, key) && parent[key] !== REPORTED) {
        if (UNKNOWN_FIELD.has(diag.code)) delete parent[key];
        else parent[key] = REPORTED;
        changed = true;
      }
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const lines = [...problems.flatMap((set) => [...set]), ...faults];
if (lines.length) {
  for (const line of lines) console.log(line);
  process.exit(1);
}
console.log(`${files.length} dashboards match @grafana/schema ${schemaVersion}`);
