// Scenarios are data: one JSON file per experiment in scenarios/ (steps,
// HAProxy settings per step, load shape, published figures, expectations).
// This module reads and checks them and expands one into a run plan.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ID = /^[a-z0-9][a-z0-9-]*$/;
// Expectation forms understood by report.mjs (see scenarios/README.md).
const EXPECT = /^~?(±\d+(\.\d+)?%(of:[a-z0-9_]+)?|(==|>=|<=|>|<)-?\d+(\.\d+)?|[<>]step:[a-z0-9][a-z0-9-]*|-?\d+(\.\d+)?\.\.-?\d+(\.\d+)?)$/;
const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;
// Options: name → [description, smallest, largest].
export const OPTIONS = {
  duration: ['seconds of load per step (overrides the scenario\'s DURATION)', 1, 3600],
  replicas: ['load-generator replicas that share each step\'s load', 1, 64],
  repeat: ['runs of every step (to see the spread)', 1, 20],
};

// Scenario-specific options (only where the scenario file allows them).
export const SCENARIO_OPTIONS = {
  article: 'the article\'s own values (long: minutes per step) instead of the scaled-down ones',
  target: 'N|max: concurrent connections of the last level (preflight refuses what cannot fit)',
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
  check(s.load && (typeof s.load.script === 'string' || s.load.tool === 'holder'), file, 'needs "load": {"script", "env"}');
  const ids = new Set();
  for (const step of s.steps) {
    check(ID.test(step.id ?? ''), file, `step id "${step.id}" must be lowercase letters, digits and dashes`);
    check(!ids.has(step.id), file, `step id "${step.id}" is used twice`);
    ids.add(step.id);
    check(typeof step.label === 'string', file, `step ${step.id} needs a "label"`);
    const tool = step.load?.tool ?? s.load.tool ?? 'k6';
    check(['k6', 'holder'].includes(tool), file, `step ${step.id}: load tool "${tool}" is not k6 or holder`);
    const script = step.load?.script ?? s.load.script;
    check(tool === 'holder' || existsSync(join(root, 'loadgen', script)), file, `step ${step.id}: no loadgen/${script}`);
    for (const part of ['', 'quick', 'article']) {
      const where = `step ${step.id}${part ? ` ${part}` : ''}`;
      checkEnv(part ? step[part]?.env : step.load?.env, file, where);
      checkEnv(part ? step[part]?.compose_env : step.compose_env, file, `${where} compose_env`);
    }
    for (const [metric, expr] of Object.entries(step.expect ?? {})) {
      check(EXPECT.test(expr), file, `step ${step.id}: bad expectation "${expr}" for ${metric}`);
      const ref = /step:(.+)$/.exec(expr);
      check(!ref || ids.has(ref[1]) || s.steps.some((t) => t.id === ref[1]), file, `step ${step.id}: "${expr}" names no step`);
    }
  }
  checkEnv(s.load.env, file, 'load');
  for (const part of ['quick', 'article']) {
    checkEnv(s[part]?.env, file, part);
    checkEnv(s[part]?.compose_env, file, `${part} compose_env`);
  }
  checkEnv(s.compose_env, file, 'compose_env');
  check(s.connections === undefined || (Number.isInteger(s.connections.default) && s.steps.every((t) => t.fraction > 0 && t.fraction <= 1)),
    file, '"connections" needs {"default": N} and a "fraction" (0..1] on every step');
  for (const c of s.comparisons ?? []) {
    check(ids.has(c.a) && ids.has(c.b), file, `comparison ${c.a} vs ${c.b} names an unknown step`);
  }
  check(s.ratio_to === undefined || ids.has(s.ratio_to), file, `ratio_to "${s.ratio_to}" names no step`);
  return s;
}

// parseOptions ARGS [SCENARIO]: {quick, duration, replicas, repeat, article,
// target} from --flags; --article and --target only where the scenario has them.
export function parseOptions(args, scenario = {}) {
  const options = { quick: false, article: false };
  const allowed = [...Object.keys(OPTIONS), ...(scenario.connections ? ['target'] : [])];
  const flags = ['--quick', ...(scenario.article ? ['--article'] : [])];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--quick') { options.quick = true; continue; }
    if (arg === '--article' && scenario.article) { options.article = true; continue; }
    const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (!m || !allowed.includes(name)) {
      throw new UsageError(`unknown option "${arg}": use ${flags.join(', ')}, ${allowed.map((o) => `--${o} N`).join(', ')}`);
    }
    const raw = m[2] ?? args[++i];
    if (name === 'target') {
      if (raw !== 'max' && !(/^\d+$/.test(raw ?? '') && Number(raw) >= 1 && Number(raw) <= 100000000)) {
        throw new UsageError(`--target needs a whole number of connections from 1 to 100000000, or "max" (got "${raw ?? ''}")`);
      }
      options.target = raw === 'max' ? 'max' : Number(raw);
      continue;
    }
    const [, min, max] = OPTIONS[name];
    if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UsageError(`--${name} needs a whole number from ${min} to ${max} (got "${raw ?? ''}")`);
    }
    options[name] = Number(raw);
  }
  if (options.quick && options.article) throw new UsageError('--quick and --article exclude each other: choose one');
  return options;
}

// evalModel FORMULA VARS: a model value such as "RATE * SLEEP_MS / 2000" from
// the step's variables (numbers, names, + - * / and parentheses only).
export function evalModel(formula, vars) {
  const tokens = String(formula).match(/\d+(?:\.\d+)?|[A-Z][A-Z0-9_]*|[-+*/()]|\S/g) ?? [];
  let i = 0;
  const fail = (why) => { throw new Error(`model "${formula}": ${why}`); };
  const primary = () => {
    const t = tokens[i++];
    if (t === undefined) fail('ends too early');
    if (t === '(') { const v = sum(); if (tokens[i++] !== ')') fail('missing )'); return v; }
    if (t === '-') return -primary();
    if (/^\d/.test(t)) return Number(t);
    if (/^[A-Z]/.test(t)) {
      const v = Number.parseFloat(vars[t]);
      if (!Number.isFinite(v)) fail(`${t} is not a number in this step (${vars[t] ?? 'unset'})`);
      // Durations like "2s" count in seconds.
      return /^\d+(\.\d+)?ms$/.test(vars[t]) ? v / 1000 : v;
    }
    return fail(`unexpected "${t}"`);
  };
  const product = () => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') v = tokens[i++] === '*' ? v * primary() : v / primary();
    return v;
  };
  const sum = () => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? v + product() : v - product();
    return v;
  };
  const v = sum();
  if (i !== tokens.length) fail(`unexpected "${tokens[i]}"`);
  return v;
}

function informational(expect) {
  // Only comparisons with the article inform: "±N%" of its figures and the
  // ratio to the baseline (the size of its effect needs its load); "±N%of:"
  // checks the lab's own model.
  const article = (m, e) => (e.startsWith('±') && !e.includes('of:')) || (m === 'ratio' && !e.startsWith('~'));
  return Object.fromEntries(Object.entries(expect).map(([m, e]) => [m, article(m, e) ? `~${e}` : e]));
}

const variant = (part, options) => ({
  ...(options.quick ? part?.quick?.env : {}),
  ...(options.article ? part?.article?.env : {}),
});
const variantCompose = (part, options) => ({
  ...(options.quick ? part?.quick?.compose_env : {}),
  ...(options.article ? part?.article?.compose_env : {}),
});
const strings = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

// Seconds a step's load runs: k6's DURATION, or the holder's whole shape.
function loadSeconds(tool, env) {
  if (tool === 'holder') {
    return ['RAMP_UP', 'HOLD', 'RAMP_DOWN'].reduce((t, k) => t + Number(env[k] ?? 0), 0);
  }
  return parseDuration(env.DURATION ?? env.MAX_DURATION ?? '60s');
}

// buildPlan SCENARIO NAME OPTIONS: the steps to run, in order. Repeated runs
// are interleaved (A B A B, not A A B B) so a drift in the machine's speed
// hits every variant alike. Scenarios with "connections" levels need
// options.sizes: one sizing per level (preflight.mjs sizeLevels).
export function buildPlan(s, name, options) {
  // Shorter or longer steps than the article's: its counts are not comparable,
  // so "within N% of published" only informs; other expectations still hold.
  const comparable = !options.quick && !options.duration;
  const repeat = options.repeat ?? (options.quick ? s.quick?.repeat : undefined) ?? s.repeat ?? 1;
  const steps = [];
  for (let run = 1; run <= repeat; run += 1) {
    s.steps.forEach((step, k) => {
      const sized = s.connections ? options.sizes?.[k] : null;
      if (s.connections && !sized) throw new Error(`${name}: connection levels need a preflight sizing`);
      const env = {
        ...s.load.env,
        ...step.load?.env,
        ...variant(s, options),
        ...variant(step, options),
        ...(options.duration ? { DURATION: `${options.duration}s` } : {}),
        ...(sized?.env ?? {}),
      };
      const composeEnv = strings({
        ...s.compose_env, ...step.compose_env, ...variantCompose(s, options), ...variantCompose(step, options),
      });
      const tool = step.load?.tool ?? s.load.tool ?? 'k6';
      // Sized levels: at least the replicas the limits need, more on request.
      const replicas = sized ? Math.max(sized.replicas, options.replicas ?? 1)
        : options.replicas ?? step.load?.replicas ?? s.load.replicas ?? 1;
      if (sized) env.HOLDER_REPLICAS = String(replicas);
      const seconds = loadSeconds(tool, env);
      const vars = { ...strings(env), ...composeEnv };
      const model = Object.fromEntries(Object.entries({ ...s.model, ...step.model })
        .map(([metric, formula]) => [metric, evalModel(formula, vars)]));
      const index = steps.length + 1;
      const dir = `steps/${String(index).padStart(2, '0')}-${step.id}${repeat > 1 ? `-run${run}` : ''}`;
      steps.push({
        index,
        dir,
        id: step.id,
        run,
        label: sized ? `${step.label}: ${sized.connections} connections` : step.label,
        x: step.x ?? (sized ? sized.connections : step.label),
        config: `configs/${dir.slice('steps/'.length)}.cfg`,
        haproxy: sized ? mergeSettings(step.haproxy ?? {}, sized.haproxy) : step.haproxy ?? {},
        backends: { ...s.backends, ...step.backends, ...sized?.backends },
        compose_env: composeEnv,
        load: {
          tool,
          script: tool === 'holder' ? 'holder' : step.load?.script ?? s.load.script,
          replicas,
          seconds,
          // When the runner samples every container's memory and CPU: mid-hold
          // for held connections, else once the load has settled.
          sample_at: tool === 'holder' ? Number(env.RAMP_UP ?? 0) + Number(env.HOLD ?? 0) / 2 : Math.min(5, seconds / 2),
          env: strings(env),
        },
        connections: sized?.connections ?? null,
        model,
        published: step.published ?? {},
        expect: comparable ? step.expect ?? {} : informational(step.expect ?? {}),
      });
    });
  }
  return {
    scenario: name,
    description: s.description,
    source: s.source,
    notes: s.notes ?? [],
    x: s.x,
    columns: s.columns,
    chart: s.chart ?? null,
    readings: s.readings ?? [],
    ratio_to: s.ratio_to ?? null,
    comparisons: s.comparisons ?? [],
    littles_law: s.littles_law ?? null,
    options: {
      quick: options.quick, article: options.article ?? false, duration: options.duration ?? null,
      replicas: options.replicas ?? null, repeat, target: options.target ?? null,
    },
    preflight: options.preflight ?? null,
    steps,
  };
}

// Section-by-section merge of two HAProxy settings objects.
function mergeSettings(a, b) {
  const out = { ...a };
  for (const [section, values] of Object.entries(b ?? {})) out[section] = { ...out[section], ...values };
  return out;
}
