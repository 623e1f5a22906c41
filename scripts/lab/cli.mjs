// The computing half of scripts/scenario.sh, run in the lab's node container
// with the repository at the working directory (the host needs only bash):
//   list                      scenarios with their one-line description and source
//   describe NAME             a scenario's steps and options
//   plan NAME --out DIR [--quick] [--duration S] [--replicas N] [--repeat N]
//                             write DIR/plan.json and each step's HAProxy config,
//                             print the steps as tab-separated lines for bash
//   plan NAME --check [...]   only check the name and options
//   report DIR [--command C] [--versions V]
//                             the measured-vs-published table; writes summary.*,
//                             report.md and chart.svg; exit 3 if a verdict failed
// A usage error prints one line on stderr and exits 2.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfig } from './render.mjs';
import { OPTIONS, UsageError, buildPlan, listScenarios, loadScenario, parseOptions } from './scenarios.mjs';
import { buildReport, formatTable, readRun, writeOutputs } from './report.mjs';

const ROOT = process.cwd();
const BASELINE = 'haproxy/haproxy.cfg';

function list() {
  const rows = listScenarios(ROOT).map((name) => {
    const s = loadScenario(ROOT, name);
    return [name, s.description, `${s.source.author ?? ''} ${s.source.year ?? ''}`.trim()];
  });
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [name, description, source] of rows) {
    console.log(`  ${name.padEnd(width)}  ${description}${source ? ` (${source})` : ''}`);
  }
}

function settingsText(settings) {
  return Object.entries(settings)
    .map(([section, values]) => `${section}: ${Object.entries(values).map(([k, v]) => `${k} ${v ?? '(removed)'}`).join(', ')}`)
    .join('; ') || 'baseline config';
}

function describe(name) {
  const s = loadScenario(ROOT, name);
  const src = s.source;
  console.log(`${name}: ${s.description}`);
  console.log(`source: ${src.author ? `${src.author}, ` : ''}"${src.title}"${src.year ? ` (${src.year})` : ''}${src.seed ? ` [seeds/${src.seed}]` : ''}`);
  console.log(`load: loadgen/${s.load.script} ${Object.entries(s.load.env ?? {}).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (s.quick?.env) console.log(`--quick: ${Object.entries(s.quick.env).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  console.log('steps:');
  for (const step of s.steps) {
    const env = Object.entries(step.load?.env ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
    const backends = Object.entries(step.backends ?? {}).map(([k, v]) => `${k}×${v}`).join(' ');
    console.log(`  ${step.id.padEnd(22)} ${step.label}: ${settingsText(step.haproxy ?? {})}${env ? `; load ${env}` : ''}${backends ? `; ${backends}` : ''}`);
  }
  console.log('options:');
  console.log('  --quick             short steps, for tests and a first look');
  for (const [option, [text]] of Object.entries(OPTIONS)) console.log(`  --${option} N`.padEnd(22) + text);
  for (const note of s.notes ?? []) console.log(`note: ${note}`);
}

// One tab-separated line per step: index dir id label config seconds replicas
// script backends(svc=n,...) env(K=V K=V ...). Values are single words or
// labels without tabs, "-" when empty (bash's read would drop an empty field).
function planLines(plan) {
  return plan.steps.map((s) => [
    s.index, s.dir, s.id, s.label, s.config, s.load.seconds, s.load.replicas, s.load.script,
    Object.entries(s.backends).map(([k, v]) => `${k}=${v}`).join(','),
    Object.entries(s.load.env).map(([k, v]) => `${k}=${v}`).join(' '),
  ].map((field) => (field === '' ? '-' : field)).join('\t'));
}

function plan(args) {
  const [name, ...rest] = args;
  if (!name) throw new UsageError('plan needs a scenario name');
  const checkOnly = rest.includes('--check');
  const outAt = rest.indexOf('--out');
  const out = outAt >= 0 ? rest[outAt + 1] : undefined;
  const flags = rest.filter((a, i) => a !== '--check' && i !== outAt && i !== outAt + 1);
  const scenario = loadScenario(ROOT, name);
  const result = buildPlan(scenario, name, parseOptions(flags));
  const baseline = readFileSync(join(ROOT, BASELINE), 'utf8');
  const configs = result.steps.map((s) => renderConfig(baseline, s.haproxy, `${name}/${s.id}`));
  if (checkOnly) return;
  if (!out) throw new UsageError('plan needs --out DIR');
  mkdirSync(join(out, 'configs'), { recursive: true });
  result.steps.forEach((s, i) => writeFileSync(join(out, s.config), configs[i]));
  writeFileSync(join(out, 'plan.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(planLines(result).join('\n'));
}

function report(args) {
  const [dir, ...rest] = args;
  if (!dir) throw new UsageError('report needs a results directory');
  const value = (flag) => (rest.indexOf(flag) >= 0 ? rest[rest.indexOf(flag) + 1] : undefined);
  const result = buildReport(readRun(dir));
  const versions = Object.fromEntries((value('--versions') ?? '').split(';').filter(Boolean).map((kv) => kv.split('=')));
  // writeOutputs reads each step's rendered config itself for report.md.
  writeOutputs(dir, result, { versions, command: value('--command') ?? '' });
  console.log(formatTable(result));
  if (!result.ok) process.exitCode = 3;
}

function main([command, ...args]) {
  switch (command) {
    case 'list': return list();
    case 'describe': return describe(args[0] ?? '');
    case 'plan': return plan(args);
    case 'report': return report(args);
    default: throw new UsageError(`unknown command "${command ?? ''}": use list, describe, plan or report`);
  }
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`scenario: ${err.message}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
