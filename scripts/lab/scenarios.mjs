// Scenarios are data: one JSON file per experiment in scenarios/ (steps,
// HAProxy settings per step, load shape, published figures, expectations).
// This module reads and checks them and expands one into a run plan.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ID = /^[a-z0-9][a-z0-9-]*$/;
// Expectation forms understood by report.mjs (see scenarios/README.md).
const EXPECT = /^~?(±\d+(\.\d+)?%|(==|>=|<=|>|<)-?\d+(\.\d+)?|[<>]step:[a-z0-9][a-z0-9-]*)$/;
const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;
// Options: name → [description, smallest, largest].
export const OPTIONS = {
  duration: ['seconds of load per step (overrides the scenario\'s DURATION)', 1, 3600],
  replicas: ['load-generator replicas that share each step\'s load', 1, 32],
  repeat: ['runs of every step (to see the spread)', 1, 20],
};

export class UsageError extends Error {}

export function listScenarios(root) {
  return readdirSync(join(root, 'scenarios'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

// "30s", "2m", "1m30s", "500ms" → seconds.
export function parseDuration(text) {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/.exec(String(text));
  if (!m || String(text) === '') throw new UsageError(`bad duration "${text}": use e.g. 30s, 2m or 1m30s`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0) + Number(m[3] ?? 0) / 1000;
}

function check(condition, file, message) {
  if (!condition) throw new Error(`${file}: ${message}`);
}

function checkEnv(env, file, where) {
  for (const [name, value] of Object.entries(env ?? {})) {
    check(ENV_NAME.test(name), file, `${where}: bad variable name "${name}"`);
    check(/^[^\s'"\\$`]+$/.test(String(value)), file, `${where}: ${name} "${value}" must be one word`);
  }
}

// loadScenario ROOT NAME: the parsed, checked scenario; UsageError if unknown.
export function loadScenario(root, name) {
  const names = listScenarios(root);
  if (!ID.test(name) || !names.includes(name)) {
    throw new UsageError(`unknown scenario "${name}": try one of ${names.join(', ')} (or "list")`);
  }
  const file = `scenarios/${name}.json`;
  const s = JSON.parse(readFileSync(join(root, file), 'utf8'));
  check(typeof s.description === 'string' && !s.description.includes('\n'), file, 'needs a one-line "description"');
  check(s.source && typeof s.source.title === 'string', file, 'needs "source": {"title", ...}');
  check(s.x && typeof s.x.label === 'string', file, 'needs "x": {"name", "label"} for the chart');
  check(Array.isArray(s.steps) && s.steps.length > 0, file, 'needs a non-empty "steps" list');
  check(Array.isArray(s.columns) && s.columns.length > 0, file, 'needs "columns" (the metrics of the table)');
  check(s.load && typeof s.load.script === 'string', file, 'needs "load": {"script", "env"}');
  const ids = new Set();
  for (const step of s.steps) {
    check(ID.test(step.id ?? ''), file, `step id "${step.id}" must be lowercase letters, digits and dashes`);
    check(!ids.has(step.id), file, `step id "${step.id}" is used twice`);
    ids.add(step.id);
    check(typeof step.label === 'string', file, `step ${step.id} needs a "label"`);
    const script = step.load?.script ?? s.load.script;
    check(existsSync(join(root, 'loadgen', script)), file, `step ${step.id}: no loadgen/${script}`);
    checkEnv(step.load?.env, file, `step ${step.id}`);
    checkEnv(step.quick?.env, file, `step ${step.id} quick`);
    for (const [metric, expr] of Object.entries(step.expect ?? {})) {
      check(EXPECT.test(expr), file, `step ${step.id}: bad expectation "${expr}" for ${metric}`);
      const ref = /step:(.+)$/.exec(expr);
      check(!ref || ids.has(ref[1]) || s.steps.some((t) => t.id === ref[1]), file, `step ${step.id}: "${expr}" names no step`);
    }
  }
  checkEnv(s.load.env, file, 'load');
  checkEnv(s.quick?.env, file, 'quick');
  for (const c of s.comparisons ?? []) {
    check(ids.has(c.a) && ids.has(c.b), file, `comparison ${c.a} vs ${c.b} names an unknown step`);
  }
  check(s.ratio_to === undefined || ids.has(s.ratio_to), file, `ratio_to "${s.ratio_to}" names no step`);
  return s;
}

// parseOptions ARGS: {quick, duration, replicas, repeat} from --flags.
export function parseOptions(args) {
  const options = { quick: false };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--quick') { options.quick = true; continue; }
    const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (!m || !(name in OPTIONS)) {
      throw new UsageError(`unknown option "${arg}": use --quick, ${Object.keys(OPTIONS).map((o) => `--${o} N`).join(', ')}`);
    }
    const raw = m[2] ?? args[++i];
    const [, min, max] = OPTIONS[name];
    if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UsageError(`--${name} needs a whole number from ${min} to ${max} (got "${raw ?? ''}")`);
    }
    options[name] = Number(raw);
  }
  return options;
}

function informational(expect) {
  return Object.fromEntries(Object.entries(expect).map(([m, e]) => [m, e.startsWith('±') ? `~${e}` : e]));
}

// buildPlan SCENARIO NAME OPTIONS: the steps to run, in order. Repeated runs
// are interleaved (A B A B, not A A B B) so a drift in the machine's speed
// hits every variant alike.
export function buildPlan(s, name, options) {
  // Shorter or longer steps than the article's: its counts are not comparable,
  // so "within N% of published" only informs; other expectations still hold.
  const comparable = !options.quick && !options.duration;
  const repeat = options.repeat ?? (options.quick ? s.quick?.repeat : undefined) ?? s.repeat ?? 1;
  const steps = [];
  for (let run = 1; run <= repeat; run += 1) {
    for (const step of s.steps) {
      const env = {
        ...s.load.env,
        ...step.load?.env,
        ...(options.quick ? { ...s.quick?.env, ...step.quick?.env } : {}),
        ...(options.duration ? { DURATION: `${options.duration}s` } : {}),
      };
      const index = steps.length + 1;
      const dir = `steps/${String(index).padStart(2, '0')}-${step.id}${repeat > 1 ? `-run${run}` : ''}`;
      steps.push({
        index,
        dir,
        id: step.id,
        run,
        label: step.label,
        x: step.x ?? step.label,
        config: `configs/${dir.slice('steps/'.length)}.cfg`,
        haproxy: step.haproxy ?? {},
        backends: { ...s.backends, ...step.backends },
        load: {
          script: step.load?.script ?? s.load.script,
          replicas: options.replicas ?? step.load?.replicas ?? s.load.replicas ?? 1,
          seconds: parseDuration(env.DURATION ?? env.MAX_DURATION ?? '60s'),
          env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
        },
        published: step.published ?? {},
        expect: comparable ? step.expect ?? {} : informational(step.expect ?? {}),
      });
    }
  }
  return {
    scenario: name,
    description: s.description,
    source: s.source,
    notes: s.notes ?? [],
    x: s.x,
    columns: s.columns,
    ratio_to: s.ratio_to ?? null,
    comparisons: s.comparisons ?? [],
    littles_law: s.littles_law ?? null,
    options: { quick: options.quick, duration: options.duration ?? null, replicas: options.replicas ?? null, repeat },
    steps,
  };
}
