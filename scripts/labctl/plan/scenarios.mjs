// Scenarios are data: one JSON file per experiment in scenarios/ (steps,
// HAProxy settings per step, load shape, published figures, expectations).
// This module reads and checks them and expands one into a run plan.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { UsageError, durationSeconds, parseDuration } from '../core/usage.mjs';
import { DEFAULT_TOOL, LOAD_TOOLS, RUNNER_VARS } from '../core/loadtools.mjs';
import { METRICS } from '../core/metrics.mjs';
import { parseExpectation } from '../core/expectations.mjs';
import { TOPOLOGY, backendNamed } from '../core/topology.mjs';
import { portProblem } from '../core/ports.mjs';
import { CONTROL, settingProblem } from './settings.mjs';

const ID = /^[a-z0-9][a-z0-9-]*$/;
// The expectation language is core/expectations.mjs's: null if EXPR is one, else what is wrong.
const expectationError = (expr) => { try { parseExpectation(expr); return null; } catch (err) { return err.message; } };
const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;
// The scenario format, key by key (scenarios/README.md documents each one):
// loadScenario refuses any other key, so a typo ("expext") fails loudly
// instead of being ignored.
export const SCENARIO_KEYS = [
  'description', 'source', 'notes', 'x', 'columns', 'chart', 'readings', 'littles_law', 'ratio_to', 'comparisons',
  'backends', 'load', 'quick', 'article', 'compose_env', 'model', 'repeat', 'connections', 'cpu_idle', 'tls', 'curves',
  'client_cores_per_core', 'haproxy', 'steps',
];
export const STEP_KEYS = [
  'id', 'label', 'x', 'fraction', 'haproxy', 'backends', 'compose_env', 'load', 'quick', 'article', 'model',
  'published', 'expect', 'curve', 'cores',
];
// "curves": {"NAME": {...}}: what the steps of one curve share (a step names
// its curve: "curve": "NAME"); the step's own keys win. "cores": N gives
// HAProxy N cores of its own (dedicatedCores), N threads on them.
export const CURVE_KEYS = ['label', 'cores', 'haproxy', 'compose_env', 'load'];
// The most dedicated cores a curve may ask for.
export const MAX_CORES = 64;
export const LOAD_KEYS = ['tool', 'script', 'replicas', 'env'];
// --quick and --article; only the top level's quick sets a repeat count, and
// "steps" (ids) the steps --quick runs (default: all).
export const QUICK_KEYS = ['env', 'compose_env', 'repeat', 'steps'];
export const ARTICLE_KEYS = ['env', 'compose_env'];
// "tls": offers --tls, each step again with this load environment (over TLS).
export const TLS_KEYS = ['env', 'ramp_per_second'];
export const STEP_VARIANT_KEYS = ['env', 'compose_env'];
export const SOURCE_KEYS = ['title', 'author', 'year', 'seed', 'client'];
export const X_KEYS = ['name', 'label'];
export const CHART_KEYS = ['y', 'y_label', 'y2', 'y2_label', 'y2_title'];
export const CONNECTIONS_KEYS = ['default', 'quick', 'ramp_per_second', 'ramp_down_per_second', 'ramp_min_per_second', 'backends_in_order', 'past_the_wall'];
export const COMPARISON_KEYS = ['a', 'b', 'metric', 'article'];
export const LITTLES_LAW_KEYS = ['service_seconds', 'clients'];
// readings: each kind of readings.mjs (READINGS) → its keys besides "kind".
export const READING_KINDS = {
  tipping_point: ['metric', 'factor', 'article', 'curve'], memory: [], syn_timing: [], sign_floor: ['step', 'floor', 'label'],
  saturation: [], capacity: ['curve', 'tolerance_pct', 'metric', 'factor'], curve_ratio: ['a', 'b', 'article', 'label'],
  per_core: ['reference', 'published'], core_scaling: ['curve', 'article'], versus: ['metric'], breakdown: ['haproxy_within', 'drain_at_least'],
};
// backends: the services HAProxy's server templates resolve (topology.txt),
// each up to the replicas its template has slots for.
export const BACKEND_SERVICES = TOPOLOGY.backends.map((b) => b.name);
// Each replica works out its own index from Docker's DNS (loadgen/run.sh,
// loadgen/holder/lib.mjs): one set by a scenario would give all the same.
// Options: name → [description, smallest, largest].
export const OPTIONS = {
  duration: ['seconds of load per step (overrides the scenario\'s DURATION)', 1, 3600],
  replicas: ['load-generator replicas that share each step\'s load', 1, TOPOLOGY.limits.replicas],
  repeat: ['runs of every step (to see the spread)', 1, 20],
};

// Scenario-specific options (only where the scenario file allows them).
export const SCENARIO_OPTIONS = {
  article: 'the article\'s own values (long: minutes per step) instead of the scaled-down ones',
  tls: 'each step again over TLS (fe_tls), right after it: the two side by side at the same level',
  target: 'N|max: concurrent connections of the last level (preflight refuses what cannot fit)',
  processes: 'N: HAProxy processes on the same ports (the article\'s nbproc; default: the fewest the target needs)',
  versus: 'IMAGE: each step again right after it with HAProxy from IMAGE ("previous": .env\'s HAPROXY_PREVIOUS_IMAGE), another HAProxy and SSL library side by side',
};
// An image reference as Docker writes one (registry/name:tag or @digest).
const IMAGE_REF = /^[a-z0-9][a-z0-9._\/-]*(:[A-Za-z0-9._-]+)?(@sha256:[a-f0-9]{64})?$/;
// The most HAProxy processes haproxy/processes.sh runs.
export const MAX_PROCESSES = 64;

export { UsageError, parseDuration };

// A lesson's check (scripts/lesson.sh) is a scenario too, kept beside the
// lessons so that "list" shows the experiments only: "lesson-NN-topic" is
// lessons/checks/lesson-NN-topic.json.
export const LESSON_PREFIX = 'lesson-';
export const scenarioFile = (name) => (name.startsWith(LESSON_PREFIX) ? `lessons/checks/${name}.json` : `scenarios/${name}.json`);

// --settings FILE: a step's settings laid over every step of the scenario
// (a lesson's exercise: what the student set), checked like the steps' own.
export const SETTINGS_KEYS = ['haproxy', 'compose_env', 'load', 'backends'];

// The services' settings a step may change (compose_env): the resources and
// behaviour of HAProxy, the backends and Prometheus. Not the images, the
// user (LAB_UID, LAB_GID), the host ports nor COMPOSE_*: with those a step
// would run another lab, so they stay .env's; nor the open-file limits
// (HAPROXY_NOFILE, NOFILE), which the preflight reads off the running lab
// before the first step; nor HAPROXY_PROCESSES, the planner's (--processes:
// one count a run, written into its topology.txt); nor a load tool's own
// (HOLDER_MEMORY: its load "env"). docs/knobs.md says what each does (a test
// keeps each there and in compose.yaml).
export const STEP_KNOBS = [
  'HAPROXY_CPUS', 'HAPROXY_CPUSET', 'LAB_CPUSET', 'HAPROXY_MEMORY',
  'BACKEND_MEMORY', 'BACKEND_SERVER_TIMEOUT_MS', 'BACKEND_HEALTH_INTERVAL', 'HEALTH_INTERVAL', 'SLOW_MS', 'SHUTDOWN_DRAIN_MS', 'SHUTDOWN_GRACE_MS',
  'PROMETHEUS_MEMORY',
];

export function listScenarios(root) {
  return readdirSync(join(root, 'scenarios'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

function check(condition, file, message) {
  if (!condition) throw new Error(`${file}: ${message}`);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
// What a value is, for "expected ..., found ..." messages.
const kindOf = (v) => {
  if (Array.isArray(v)) return 'a list';
  if (isObject(v)) return 'an object';
  return v === undefined ? 'nothing' : `${typeof v} ${JSON.stringify(v)}`;
};
// A name as a message shows it: quoted and escaped when it holds a control
// character, so a refusal stays one line.
const shown = (text) => (CONTROL.test(text) ? JSON.stringify(text) : text);
const isCount = (v, min, max) => Number.isInteger(v) && v >= min && v <= max;
// The load tool a step runs: its own, the scenario's, else k6.
const toolName = (s, step) => step.load?.tool ?? s.load.tool ?? DEFAULT_TOOL;
const VARIANTS = ['quick', 'article'];

// A variable that names a port (NAME_PORT, PORT) or a URL with one
// (TARGET): what is wrong with its port, or null.
function envPortProblem(name, value) {
  if (/(^|_)PORT$/.test(name)) return portProblem(value);
  const url = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[^\]]*\]|[^/:]*):([^/]*)/i.exec(String(value));
  return url ? portProblem(url[1]) : null;
}

// checkEnv ENV FILE WHERE [WORDS]: names and values; a value one word, or
// with WORDS (a load tool's: its container reads it from an env file) words
// separated by single spaces (a tool's extra flags).
function checkEnv(env, file, where, words = false) {
  check(env === undefined || isObject(env), file, `${where}: expected an object {"NAME": "value"}, found ${kindOf(env)}`);
  const shape = words ? /^[^\s'"\\$`]+( [^\s'"\\$`]+)*$/ : /^[^\s'"\\$`]+$/;
  for (const [name, value] of Object.entries(env ?? {})) {
    check(ENV_NAME.test(name), file, `${where}: bad variable name ${JSON.stringify(name)}`);
    // Control characters too: the value goes on a line of step.env.
    check(['string', 'number'].includes(typeof value) && shape.test(String(value)) && !CONTROL.test(String(value)), file,
      `${where}: ${name} ${JSON.stringify(String(value))} must be ${words ? 'words separated by single spaces, without quotes, \\, $ or `' : 'one word'}`);
    const port = envPortProblem(name, value);
    check(!port, file, `${where}: ${name}: ${port}`);
  }
}

// checkComposeEnv ENV FILE WHERE: one word per value, names among STEP_KNOBS.
function checkComposeEnv(env, file, where) {
  checkEnv(env, file, where);
  for (const name of Object.keys(env ?? {})) {
    check(STEP_KNOBS.includes(name), file, `${where}: ${name} is not a setting a step may change (it may: ${STEP_KNOBS.join(', ')}); `
      + 'the others are the lab\'s own: set them in .env');
  }
}

// checkHaproxy SETTINGS FILE WHERE: {"<section>": {"<keyword>": value}},
// each setting one renderConfig applies (plan/settings.mjs).
function checkHaproxy(settings, file, where) {
  check(settings === undefined || (isObject(settings) && Object.values(settings).every(isObject)), file,
    `${where}: expected {"<section>": {"<keyword>": value}}, found ${kindOf(settings)}`);
  for (const [section, values] of Object.entries(settings ?? {})) {
    for (const [keyword, value] of Object.entries(values)) {
      const problem = settingProblem(section, keyword, value);
      check(!problem, file, `${where} ${shown(section)}: ${problem}`);
    }
  }
}

// VALUE, when set, is an object with only the ACCEPTED keys.
function checkKeys(value, accepted, file, where) {
  if (value === undefined) return;
  check(isObject(value), file, `${where}: expected an object {${accepted.join(', ')}}, found ${kindOf(value)}`);
  for (const key of Object.keys(value)) {
    check(accepted.includes(key), file, `${where}: unknown key ${JSON.stringify(key)} (accepted: ${accepted.join(', ')})`);
  }
}

function checkMetrics(names, file, where) {
  for (const name of names) {
    check(METRICS.includes(name), file, `${where}: unknown metric "${name}" (metrics: ${METRICS.join(', ')})`);
  }
}

function checkCount(value, [min, max], file, where) {
  check(value === undefined || isCount(value, min, max), file, `${where}: expected a whole number from ${min} to ${max}, found ${kindOf(value)}`);
}

function checkBackends(backends, file, where) {
  checkKeys(backends, BACKEND_SERVICES, file, where);
  for (const [service, n] of Object.entries(backends ?? {})) {
    if (BACKEND_SERVICES.includes(service)) checkCount(n, [1, backendNamed(TOPOLOGY, service).slots], file, `${where} ${service}`);
  }
}

// A model: metric-like names (what "±N%of:name" refers to) → formulas.
function checkModel(model, file, where) {
  check(model === undefined || isObject(model), file, `${where}: expected an object {name: "formula"}, found ${kindOf(model)}`);
  for (const [name, formula] of Object.entries(model ?? {})) {
    check(/^[a-z][a-z0-9_]*$/.test(name) && typeof formula === 'string', file,
      `${where}: expected name: "formula" (lowercase name, formula a string), found ${name}: ${kindOf(formula)}`);
  }
}

// runnerVars TOOL: the variables the runner and the containers set
// themselves for every step of TOOL; no scenario may set them.
export function runnerVars(tool) {
  const own = [...RUNNER_VARS, tool.replicas, tool.index, ...Object.keys(tool.env({ script: '' }))];
  return [...tool.reads, ...tool.compose].filter((name) => own.includes(name));
}

// scenarioVars TOOL: the load variables a scenario may set for TOOL: what its
// container reads or its compose service uses, less the runner's own.
export function scenarioVars(tool) {
  const own = runnerVars(tool);
  return [...tool.reads, ...tool.compose].filter((name) => !own.includes(name));
}

// Every load environment of a scenario: [where, env, step (null: all steps)].
function loadEnvs(s) {
  const of = (section, prefix, step) => [
    [prefix || 'load', section.load?.env, step],
    ...VARIANTS.map((v) => [prefix ? `${prefix} ${v}` : v, section[v]?.env, step]),
  ];
  return [...of(s, '', null), ...s.steps.flatMap((step) => of(step, `step ${step.id}`, step))];
}

// Every compose_env of a scenario: [where, env].
function composeEnvs(s) {
  const of = (section, prefix) => [
    [`${prefix}compose_env`, section.compose_env],
    ...VARIANTS.map((v) => [`${prefix}${v} compose_env`, section[v]?.compose_env]),
  ];
  return [...of(s, ''), ...s.steps.flatMap((step) => of(step, `step ${step.id} `))];
}

// The top level: its keys, what every scenario needs, its sections' keys.
function checkTopLevel(s, file) {
  check(isObject(s), file, `expected a JSON object {${SCENARIO_KEYS.join(', ')}}, found ${kindOf(s)}`);
  checkKeys(s, SCENARIO_KEYS, file, 'top level');
  check(typeof s.description === 'string' && !s.description.includes('\n'), file, 'needs a one-line "description"');
  check(isObject(s.source) && typeof s.source.title === 'string', file, 'needs "source": {"title", ...}');
  check(isObject(s.x) && typeof s.x.label === 'string', file, 'needs "x": {"name", "label"} for the chart');
  check(Array.isArray(s.steps) && s.steps.length > 0 && s.steps.every(isObject), file, 'needs a non-empty "steps" list of objects');
  check(Array.isArray(s.columns) && s.columns.length > 0, file, 'needs "columns" (the metrics of the table)');
  check(isObject(s.load), file, 'needs "load": {"script", "env"} (or {"tool", "env"})');
  const sections = {
    source: SOURCE_KEYS, x: X_KEYS, load: LOAD_KEYS, quick: QUICK_KEYS, article: ARTICLE_KEYS,
    chart: CHART_KEYS, connections: CONNECTIONS_KEYS, littles_law: LITTLES_LAW_KEYS, tls: TLS_KEYS,
  };
  for (const [key, accepted] of Object.entries(sections)) checkKeys(s[key], accepted, file, key);
  check(s.notes === undefined || (Array.isArray(s.notes) && s.notes.every((n) => typeof n === 'string')), file,
    `notes: expected a list of strings, found ${kindOf(s.notes)}`);
  checkCount(s.repeat, OPTIONS.repeat.slice(1), file, 'repeat');
  check(s.cpu_idle === undefined || (typeof s.cpu_idle === 'string' && parseDuration(s.cpu_idle) > 0 && parseDuration(s.cpu_idle) <= 60), file,
    `cpu_idle: expected a duration from "1s" to "60s", found ${kindOf(s.cpu_idle)}`);
  check(s.client_cores_per_core === undefined || (Number.isInteger(s.client_cores_per_core) && s.client_cores_per_core >= 1
    && s.client_cores_per_core <= 8), file,
  `client_cores_per_core: expected a whole number from 1 to 8 (the load tools' cores for each of HAProxy's), found ${kindOf(s.client_cores_per_core)}`);
  checkCount(s.quick?.repeat, OPTIONS.repeat.slice(1), file, 'quick repeat');
  checkCount(s.load.replicas, OPTIONS.replicas.slice(1), file, 'load replicas');
  checkMetrics(s.columns, file, 'columns');
  checkMetrics([s.chart?.y, s.chart?.y2].filter((m) => m !== undefined), file, 'chart');
  checkBackends(s.backends, file, 'backends');
  checkModel(s.model, file, 'model');
}

// "cores" (a curve's or a step's): a whole number of HAProxy's own cores,
// and no compose_env of the settings it stands for beside it.
function checkCores(part, file, where) {
  if (part.cores === undefined) return;
  check(Number.isInteger(part.cores) && part.cores >= 1 && part.cores <= MAX_CORES, file,
    `${where}: "cores" must be a whole number from 1 to ${MAX_CORES} (HAProxy's dedicated cores), found ${JSON.stringify(part.cores)}`);
  const pinned = Object.keys(part.compose_env ?? {}).filter((k) => DEDICATED_KNOBS.includes(k));
  check(pinned.length === 0, file, `${where}: "cores" sets ${DEDICATED_KNOBS.join(', ')} itself: leave ${pinned.join(', ')} out of its compose_env`);
}

// One step: its keys, id, label, sections, metrics and load tool.
function checkStep(root, file, s, step, ids) {
  checkKeys(step, STEP_KEYS, file, `step ${step.id ?? ids.size + 1}`);
  check(ID.test(step.id ?? ''), file, `step id "${step.id}" must be lowercase letters, digits and dashes`);
  check(!ids.has(step.id), file, `step id "${step.id}" is used twice`);
  const where = `step ${step.id}`;
  check(typeof step.label === 'string', file, `${where} needs a "label"`);
  checkKeys(step.load, LOAD_KEYS, file, `${where} load`);
  for (const v of VARIANTS) checkKeys(step[v], STEP_VARIANT_KEYS, file, `${where} ${v}`);
  check(!step.article || s.article, file, `${where}: "article" needs a top-level "article" (which offers --article)`);
  check(step.fraction === undefined || s.connections, file, `${where}: "fraction" needs a top-level "connections"`);
  checkHaproxy(step.haproxy, file, `${where} haproxy`);
  checkCores(step, file, where);
  checkBackends(step.backends, file, `${where} backends`);
  checkModel(step.model, file, `${where} model`);
  checkMetrics(Object.keys(step.published ?? {}), file, `${where} published`);
  for (const [metric, value] of Object.entries(step.published ?? {})) {
    check(Number.isFinite(value), file, `${where} published ${metric}: expected a number, found ${kindOf(value)}`);
  }
  checkMetrics(Object.keys(step.expect ?? {}), file, `${where} expect`);
  checkStepTool(root, file, s, step);
}

// The step's load tool is one of the table's; one that runs a script needs
// that file in loadgen/.
function checkStepTool(root, file, s, step) {
  const where = `step ${step.id}`;
  const name = toolName(s, step);
  check(Object.hasOwn(LOAD_TOOLS, name), file, `${where}: load tool "${name}" is not one of ${Object.keys(LOAD_TOOLS).join(', ')}`);
  const script = step.load?.script ?? s.load.script;
  check(!LOAD_TOOLS[name].scripts || (/^[\w-]+\.js$/.test(script ?? '') && existsSync(join(root, 'loadgen', script))), file,
    `${where}: ${name} runs a script: expected "load": {"script": "<a .js file in loadgen/>"}, found ${kindOf(script)}`);
  checkCount(step.load?.replicas, OPTIONS.replicas.slice(1), file, `${where} load replicas`);
}

// Variable names and values; a load variable must be one its tool reads (a
// typo or another tool's variable would be passed on and silently ignored),
// a compose_env one of STEP_KNOBS.
function checkVariables(file, s) {
  for (const [where, env] of loadEnvs(s)) checkEnv(env, file, where, true);
  for (const [where, env] of composeEnvs(s)) checkComposeEnv(env, file, where);
  for (const [where, env, step] of loadEnvs(s)) {
    for (const name of new Set((step ? [step] : s.steps).map((t) => toolName(s, t)))) {
      const allowed = scenarioVars(LOAD_TOOLS[name]);
      for (const variable of Object.keys(env ?? {})) {
        check(allowed.includes(variable), file, `${where}: load variable ${variable} is not read by ${name} (it reads: ${allowed.join(', ')})`);
      }
    }
  }
}

// badValue TOOL ENV: the tool's own one line for a bad value in ENV (a
// duration it cannot read, a flag its wrapper sets), else null.
function badValue(tool, env) {
  try {
    tool.check(strings(env));
    return null;
  } catch (err) {
    if (err instanceof RangeError) return err.message;
    throw err;
  }
}

// What each step's tool needs to run (k6: how long) and whether it can read
// every value, as the step runs plain, with --quick and with --article.
function checkToolNeeds(file, s) {
  const variants = ['', 'quick', ...(s.article ? ['article'] : [])];
  for (const step of s.steps) {
    const name = toolName(s, step);
    for (const v of variants) {
      const env = { ...s.load.env, ...step.load?.env, ...(v ? { ...s[v]?.env, ...step[v]?.env } : {}) };
      const missing = LOAD_TOOLS[name].needs(env);
      check(!missing, file, `step ${step.id}${v ? ` --${v}` : ''}: ${name} needs ${missing} in its load variables (found: ${Object.keys(env).join(', ') || 'none'})`);
      check(!badValue(LOAD_TOOLS[name], env), file, `step ${step.id}${v ? ` --${v}` : ''}: ${badValue(LOAD_TOOLS[name], env)}`);
    }
  }
}

// The sections that name steps and metrics: readings, comparisons,
// littles_law, connections, ratio_to.
function checkReferences(file, s, ids) {
  check(s.readings === undefined || Array.isArray(s.readings), file, `readings: expected a list, found ${kindOf(s.readings)}`);
  (s.readings ?? []).forEach((r, i) => {
    check(isObject(r) && Object.hasOwn(READING_KINDS, r.kind), file,
      `readings[${i}]: expected {"kind": one of ${Object.keys(READING_KINDS).join(', ')}}, found ${JSON.stringify(r)}`);
    checkKeys(r, ['kind', ...READING_KINDS[r.kind]], file, `readings[${i}] (${r.kind})`);
    checkMetrics(r.metric === undefined ? [] : [r.metric], file, `readings[${i}]`);
    check(r.drain_at_least === undefined || (typeof r.drain_at_least === 'number' && r.drain_at_least > 0 && r.drain_at_least <= 1), file,
      `readings[${i}] (${r.kind}) drain_at_least: expected a share above 0 and at most 1, found ${JSON.stringify(r.drain_at_least)}`);
  });
  check(s.comparisons === undefined || Array.isArray(s.comparisons), file, `comparisons: expected a list, found ${kindOf(s.comparisons)}`);
  (s.comparisons ?? []).forEach((c, i) => {
    checkKeys(c, COMPARISON_KEYS, file, `comparisons[${i}]`);
    check(ids.has(c.a) && ids.has(c.b), file, `comparison ${c.a} vs ${c.b} names an unknown step`);
    checkMetrics(c.metric === undefined ? [] : [c.metric], file, `comparisons[${i}]`);
  });
  check(s.littles_law === undefined || (s.littles_law.service_seconds > 0 && s.littles_law.clients > 0), file,
    `littles_law: expected {"service_seconds": S, "clients": N} above 0, found ${JSON.stringify(s.littles_law)}`);
  check(s.connections === undefined || (Number.isInteger(s.connections.default) && s.steps.every((t) => t.fraction > 0 && t.fraction <= 1)),
    file, '"connections" needs {"default": N} and a "fraction" (0..1] on every step');
  checkCount(s.connections?.quick, [1, 100000000], file, 'connections quick');
  checkCount(s.connections?.ramp_per_second, [1, 1000000], file, 'connections ramp_per_second');
  checkCount(s.connections?.ramp_down_per_second, [1, 1000000], file, 'connections ramp_down_per_second');
  checkCount(s.connections?.ramp_min_per_second, [1, 1000000], file, 'connections ramp_min_per_second');
  check(s.connections?.backends_in_order === undefined || typeof s.connections.backends_in_order === 'boolean', file,
    `connections backends_in_order: expected true or false, found ${JSON.stringify(s.connections?.backends_in_order)}`);
  checkCount(s.tls?.ramp_per_second, [1, 1000000], file, 'tls ramp_per_second');
  // What a level past the wall (--processes N below the target's) is judged by.
  const wall = s.connections?.past_the_wall;
  check(wall === undefined || (isObject(wall) && isObject(wall.expect)), file, `connections past_the_wall: expected {"expect": {...}}, found ${kindOf(wall)}`);
  checkMetrics(Object.keys(wall?.expect ?? {}), file, 'connections past_the_wall expect');
  for (const [metric, expr] of Object.entries(wall?.expect ?? {})) {
    check(expectationError(expr) === null, file, `connections past_the_wall: ${metric}: ${expectationError(expr)}`);
  }
  check(s.ratio_to === undefined || ids.has(s.ratio_to), file, `ratio_to "${s.ratio_to}" names no step`);
}

function parseJson(text, file) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON: ${err.message}`);
  }
}

// The steps in order; an expectation may name a later step too.
function checkSteps(root, file, s) {
  const ids = new Set();
  for (const step of s.steps) {
    checkStep(root, file, s, step, ids);
    ids.add(step.id);
    for (const [metric, expr] of Object.entries(step.expect ?? {})) {
      check(expectationError(expr) === null, file, `step ${step.id}: ${metric}: ${expectationError(expr)}`);
      const ref = /step:(.+)$/.exec(expr);
      check(!ref || ids.has(ref[1]) || s.steps.some((t) => t.id === ref[1]), file, `step ${step.id}: "${expr}" names no step`);
    }
  }
  return ids;
}

// expandCurves SCENARIO FILE: each step that names a curve gets what the
// curve sets (haproxy settings, compose_env, load) under its own, so every
// later check and the plan see whole steps.
function expandCurves(s, file) {
  // The scenario's own HAProxy settings go under every step's and curve's.
  if (s.haproxy !== undefined) {
    checkHaproxy(s.haproxy, file, 'haproxy');
    s.steps = (s.steps ?? []).map((step) => (isObject(step) ? { ...step, haproxy: mergeSettings(s.haproxy, step.haproxy ?? {}) } : step));
  }
  checkKeys(s.curves, Object.keys(s.curves ?? {}), file, 'curves');
  for (const [name, curve] of Object.entries(s.curves ?? {})) {
    check(ID.test(name), file, `curve "${name}" must be lowercase letters, digits and dashes`);
    checkKeys(curve, CURVE_KEYS, file, `curve ${name}`);
    checkKeys(curve.load, LOAD_KEYS, file, `curve ${name} load`);
    checkCores(curve, file, `curve ${name}`);
  }
  s.steps = s.steps.map((step) => {
    if (!isObject(step) || step.curve === undefined) return step;
    const curve = s.curves?.[step.curve];
    check(isObject(curve), file, `step ${step.id}: curve "${step.curve}" is not in "curves" (${Object.keys(s.curves ?? {}).join(', ') || 'none'})`);
    const out = { ...step };
    if (curve.cores !== undefined && step.cores === undefined) out.cores = curve.cores;
    if (curve.haproxy || step.haproxy) out.haproxy = mergeSettings(curve.haproxy ?? {}, step.haproxy ?? {});
    if (curve.compose_env || step.compose_env) out.compose_env = { ...curve.compose_env, ...step.compose_env };
    if (curve.load || step.load) {
      out.load = { ...curve.load, ...step.load };
      if (curve.load?.env || step.load?.env) out.load.env = { ...curve.load?.env, ...step.load?.env };
    }
    return out;
  });
  check(s.quick?.steps === undefined || (Array.isArray(s.quick.steps) && s.quick.steps.length > 0
    && s.quick.steps.every((id) => s.steps.some((t) => t.id === id))), file,
  `quick steps: expected a list of step ids, found ${kindOf(s.quick?.steps)}`);
}

// loadScenario ROOT NAME: the parsed, checked scenario (scenarios/README.md
// is the format); UsageError if unknown, one Error line naming the file if wrong.
export function loadScenario(root, name, { settings } = {}) {
  const file = scenarioFile(name);
  if (name.startsWith(LESSON_PREFIX)) {
    if (!ID.test(name) || !existsSync(join(root, file))) {
      throw new UsageError(`unknown lesson check "${name}": try one of ${listLessonChecks(root).join(', ') || 'none (lessons/checks/ is empty)'}`);
    }
  } else {
    const names = listScenarios(root);
    if (!ID.test(name) || !names.includes(name)) {
      throw new UsageError(`unknown scenario "${name}": try one of ${names.join(', ')} (or "list")`);
    }
  }
  const s = parseJson(readFileSync(join(root, file), 'utf8'), file);
  checkTopLevel(s, file);
  expandCurves(s, file);
  if (settings) overlaySettings(root, s, settings);
  try {
    const ids = checkSteps(root, file, s);
    checkVariables(file, s);
    checkToolNeeds(file, s);
    checkReferences(file, s, ids);
  } catch (err) {
    // A wrong value may be the settings file's: say which file was laid over.
    if (settings) err.message = `${err.message} (with --settings ${settings})`;
    throw err;
  }
  return s;
}

export function listLessonChecks(root) {
  const dir = join(root, 'lessons', 'checks');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -'.json'.length)).sort() : [];
}

// overlaySettings ROOT SCENARIO FILE: FILE's settings (SETTINGS_KEYS) over
// every step's own: HAProxy's section by section, the environments and the
// backends' scale name by name. FILE is a path inside the lab's folder.
function overlaySettings(root, s, file) {
  if (!/^[\w.-]+(\/[\w.-]+)*\.json$/.test(file) || file.split('/').includes('..')) {
    throw new UsageError(`--settings needs a .json file inside the lab's folder, as a relative path (got "${file}")`);
  }
  if (!existsSync(join(root, file))) throw new UsageError(`--settings ${file}: no such file`);
  const o = parseJson(readFileSync(join(root, file), 'utf8'), file);
  check(isObject(o), file, `expected {"haproxy": ..., "compose_env": ..., "load": {"env": ...}, "backends": ...}, found ${kindOf(o)}`);
  checkKeys(o, SETTINGS_KEYS, file, 'settings');
  checkKeys(o.load, ['env'], file, 'load');
  // What can be checked without the steps, here, so a refusal names FILE.
  checkHaproxy(o.haproxy, file, 'haproxy');
  checkComposeEnv(o.compose_env, file, 'compose_env');
  checkEnv(o.load?.env, file, 'load env', true);
  checkBackends(o.backends, file, 'backends');
  s.steps = s.steps.map((step) => {
    if (!isObject(step)) return step;
    const out = { ...step };
    if (o.haproxy) out.haproxy = mergeSettings(step.haproxy ?? {}, o.haproxy);
    if (o.compose_env) out.compose_env = { ...step.compose_env, ...o.compose_env };
    if (o.backends) out.backends = { ...step.backends, ...o.backends };
    if (o.load?.env) out.load = { ...step.load, env: { ...step.load?.env, ...o.load.env } };
    return out;
  });
}

// parseOptions ARGS [SCENARIO]: {quick, duration, replicas, repeat, article,
// tls, target} from --flags; --article, --tls and --target only where the
// scenario has them.
export function parseOptions(args, scenario = {}) {
  const options = { quick: false, article: false, tls: false };
  const allowed = [...Object.keys(OPTIONS), ...(scenario.connections ? ['target', 'processes'] : ['versus'])];
  const flags = ['--quick', ...(scenario.article ? ['--article'] : []), ...(scenario.tls ? ['--tls'] : [])];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--quick') { options.quick = true; continue; }
    if (arg === '--article' && scenario.article) { options.article = true; continue; }
    if (arg === '--tls' && scenario.tls) { options.tls = true; continue; }
    const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1];
    if (!m || !allowed.includes(name)) {
      throw new UsageError(`unknown option "${arg}": use ${flags.join(', ')}, ${allowed.map((o) => `--${o} ${o === 'versus' ? 'IMAGE' : 'N'}`).join(', ')}, --settings FILE`);
    }
    const raw = m[2] ?? args[++i];
    if (name === 'versus') {
      if (!IMAGE_REF.test(raw ?? '')) throw new UsageError(`--versus needs an image, e.g. haproxy:2.8, or "previous" (got "${raw ?? ''}")`);
      options.versus = raw;
      continue;
    }
    if (name === 'target') {
      if (raw !== 'max' && !(/^\d+$/.test(raw ?? '') && Number(raw) >= 1 && Number(raw) <= 100000000)) {
        throw new UsageError(`--target needs a whole number of connections from 1 to 100000000, or "max" (got "${raw ?? ''}")`);
      }
      options.target = raw === 'max' ? 'max' : Number(raw);
      continue;
    }
    const [, min, max] = name === 'processes' ? [null, 1, MAX_PROCESSES] : OPTIONS[name];
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
      // A duration (2s, 500ms, 1m30s) counts in seconds.
      return durationSeconds(vars[t]) ?? v;
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

// stepComposeEnv SCENARIO STEP OPTIONS: the services' settings STEP asks for
// itself (the scenario's, the step's, their --quick/--article variants),
// before a connection level's sizing adds its own.
export const stepComposeEnv = (s, step, options) => strings({
  ...s.compose_env, ...step.compose_env, ...variantCompose(s, options), ...variantCompose(step, options),
  // The CLI passes the engine's cores (--machine-cores); else this machine's.
  ...(step.cores === undefined ? {} : dedicatedCores(step.cores, options.machineCores ?? availableParallelism(), options)),
});

// What a plan on a Swarm says of its dedicated cores.
export const SWARM_CORES_NOTE = 'On a Swarm, a curve\'s "cores": N is a CPU limit of N cores on HAProxy (Swarm services have no cpuset, so others may run on its cores), and no second method runs (wrk needs HAProxy\'s own engine).';

// The settings a curve's "cores" stands for.
export const DEDICATED_KNOBS = ['HAPROXY_CPUS', 'HAPROXY_CPUSET', 'LAB_CPUSET'];

// dedicatedCores N MACHINE: HAProxy on the machine's last N cores with no
// CPU quota, every other service (load tools, backends, probes) on the rest:
// no other service's work is counted in, or steals from, HAProxy's cores
// (the kernel's and Docker's daemons may: /proc/stat shows it). A
// UsageError when the machine has no core left over for the rest.
export function dedicatedCores(cores, machine, { swarm = false } = {}) {
  // A Swarm service has no cpuset: its CPU limit of as many cores instead (SWARM_CORES_NOTE).
  if (swarm) return { HAPROXY_CPUS: String(cores), HAPROXY_CPUSET: '', LAB_CPUSET: '' };
  if (!(Number.isInteger(machine) && machine >= 1)) throw new Error(`dedicatedCores: the machine's cores are unknown (${machine})`);
  if (machine < cores + 1) {
    throw new UsageError(`this curve gives HAProxy ${cores} core${cores === 1 ? '' : 's'} of its own and the load tools at least one more: ` +
      `this machine has ${machine} (docker info's NCPU); run it where Docker sees ${cores + 1} or more`);
  }
  const range = (a, b) => (a === b ? `${a}` : `${a}-${b}`);
  return { HAPROXY_CPUS: '0', HAPROXY_CPUSET: range(machine - cores, machine - 1), LAB_CPUSET: range(0, machine - cores - 1) };
}

// stepsThatFit SCENARIO STEPS OPTIONS → {chosen, note}: with
// "client_cores_per_core": K, the steps whose HAProxy cores N and the load
// tools' K×N fit the machine's cores (options.machineCores, docker info's
// NCPU), and one line naming what was left out and why; a UsageError when
// none fits. Without it, every step (dedicatedCores refuses one that cannot).
export function stepsThatFit(s, steps, options) {
  const k = s.client_cores_per_core;
  if (!k) return { chosen: steps, note: null };
  const machine = options.machineCores ?? availableParallelism();
  const need = (step) => (step.cores ?? 0) * (1 + k);
  const chosen = steps.filter((step) => need(step) <= machine);
  const out = steps.filter((step) => need(step) > machine);
  const list = (ts) => [...new Set(ts.map((t) => t.cores))].join(', ');
  const why = `the load tools get ${k === 1 ? 'as many cores as HAProxy' : `${k} cores for each of HAProxy's`} ` +
    '(a client costs about what HAProxy does per request: ceiling\'s client µs/request column)';
  if (chosen.length === 0) {
    throw new UsageError(`HAProxy on ${list(steps)} core(s) needs at least ${Math.min(...steps.map(need))} here: ${why}, ` +
      `and Docker sees ${machine} (docker info's NCPU); run it on a bigger machine`);
  }
  if (out.length === 0) return { chosen, note: null };
  return {
    chosen,
    note: `This machine runs HAProxy on ${list(chosen)} core${chosen.length === 1 && chosen[0].cores === 1 ? '' : 's'} only: ${why}, ` +
      `so ${out.length === 1 ? 'the step' : 'the steps'} on ${list(out)} cores would need up to ${Math.max(...out.map(need))} cores, and Docker sees ${machine} (docker info's NCPU).`,
  };
}

// How long the second method loads HAProxy, and with how many connections
// when the curve's tool names none.
export const CHECK_SECONDS = 4;
export const CHECK_CONNECTIONS = 50;

// markSecondMethods STEPS: the last step of each run of each curve on
// dedicated cores gets its "check": wrk, another client than the curve's,
// loading the same HAProxy unpaced for CHECK_SECONDS right after the step,
// over the bridge and over loopback (scripts/lib/step-load.sh
// second_method): the report sets the costs per request side by side.
function markSecondMethods(steps) {
  const last = new Map();
  for (const step of steps) if (step.cores !== null && step.curve) last.set(`${step.curve} ${step.run}`, step);
  for (const step of last.values()) {
    const env = step.load.env;
    step.check = {
      tool: 'wrk',
      url: `${env.TARGET}${env.LOAD_PATH ?? '/'}`,
      connections: Number(env.CONNECTIONS ?? CHECK_CONNECTIONS),
      seconds: CHECK_SECONDS,
      close: env.KEEPALIVE === 'false',
    };
  }
}

// chosenSteps SCENARIO OPTIONS: the steps a run takes (--quick may take fewer).
export const chosenSteps = (s, options) => (options.quick && s.quick?.steps ? s.steps.filter((t) => s.quick.steps.includes(t.id)) : s.steps);

// buildPlan SCENARIO NAME OPTIONS: the steps to run, in order. Repeated runs
// are interleaved (A B A B, not A A B B) so a drift in the machine's speed
// hits every variant alike. Scenarios with "connections" levels need
// options.sizes: one sizing per level (preflight.mjs sizeLevels).
export function buildPlan(s, name, options) {
  const repeat = options.repeat ?? (options.quick ? s.quick?.repeat : undefined) ?? s.repeat ?? 1;
  const steps = [];
  const { chosen, note: coresNote } = stepsThatFit(s, chosenSteps(s, options), options);
  for (let run = 1; run <= repeat; run += 1) {
    chosen.forEach((step) => {
      const k = s.steps.indexOf(step);
      const sized = s.connections ? options.sizes?.[k] : null;
      if (s.connections && !sized) throw new Error(`${name}: connection levels need a preflight sizing`);
      // A TLS twin has its own sizing when TLS ramps slower (tls.ramp_per_second).
      const variants = options.tls ? [[step, sized], [tlsTwin(s, step), options.tlsSizes?.[k] ?? sized]]
        : options.versus ? [[step, sized], [versusTwin(step, options.versus), sized]] : [[step, sized]];
      for (const [variantStep, variantSized] of variants) {
        const index = steps.length + 1;
        const dir = `steps/${String(index).padStart(2, '0')}-${variantStep.id}${repeat > 1 ? `-run${run}` : ''}`;
        const planned = planStep(s, variantStep, variantSized, options, `configs/${dir.slice('steps/'.length)}.cfg`);
        // The chart's x label tells a TLS twin from its plain level; a
        // --versus twin on a curve is its own curve, else its x says its image.
        if (variantStep !== step && options.tls) planned.x = `${planned.x} TLS`;
        if (variantStep !== step && options.versus) {
          planned.compose_env = { ...planned.compose_env, HAPROXY_IMAGE: options.versus };
          planned.versus_of = step.id;
          if (!planned.curve) planned.x = `${planned.x} ${options.versus}`;
        }
        steps.push({ index, dir, id: variantStep.id, run, ...planned });
      }
    });
  }
  if (!options.swarm) markSecondMethods(steps);
  const onSwarm = options.swarm && steps.some((t) => t.cores !== null) ? [SWARM_CORES_NOTE] : [];
  return {
    scenario: name,
    description: s.description,
    source: s.source,
    notes: [...(s.notes ?? []), ...(coresNote ? [coresNote] : []), ...onSwarm],
    x: s.x,
    columns: s.columns,
    chart: s.chart ?? null,
    readings: [...(s.readings ?? []), ...(options.versus
      ? [{ kind: 'versus', metric: s.columns.includes('haproxy_us_per_req_load') ? 'haproxy_us_per_req_load' : 'haproxy_us_per_req' }] : [])],
    curves: Object.fromEntries(Object.entries(s.curves ?? {}).flatMap(([n, c]) => [[n, c.label ?? n],
      ...(options.versus ? [[`${n}-versus`, `${c.label ?? n}, ${options.versus}`]] : [])])),
    ratio_to: s.ratio_to ?? null,
    comparisons: s.comparisons ?? [],
    littles_law: s.littles_law ?? null,
    options: {
      quick: options.quick, article: options.article ?? false, tls: options.tls ?? false, duration: options.duration ?? null,
      replicas: options.replicas ?? null, repeat, target: options.target ?? null, processes: options.processes ?? null,
      versus: options.versus ?? null,
    },
    preflight: options.preflight ?? null,
    steps,
  };
}

// planStep SCENARIO STEP SIZED OPTIONS CONFIG: one step's settings, load and
// expectations, the scenario's defaults overridden by the step's, then the
// --quick/--article variant, --duration, and a connection level's sizing.
function planStep(s, step, sized, options, config) {
  const env = {
    ...s.load.env,
    ...step.load?.env,
    ...variant(s, options),
    ...variant(step, options),
    ...(options.duration ? { DURATION: `${options.duration}s` } : {}),
    ...(sized?.env ?? {}),
  };
  const composeEnv = { ...stepComposeEnv(s, step, options), ...strings(sized?.compose_env ?? {}) };
  const tool = toolName(s, step);
  // Sized levels: at least the replicas the limits need, more on request.
  const replicas = sized ? Math.max(sized.replicas, options.replicas ?? 1)
    : options.replicas ?? step.load?.replicas ?? s.load.replicas ?? 1;
  if (sized) env[LOAD_TOOLS[tool].replicas] = String(replicas);
  const seconds = LOAD_TOOLS[tool].seconds(env);
  const vars = { ...strings(env), ...composeEnv };
  // Shorter or longer steps than the article's: its counts are not comparable,
  // so "within N% of published" only informs; other expectations still hold.
  const comparable = !options.quick && !options.duration;
  return {
    label: sized ? `${step.label}: ${sized.connections} connections${sized.wall ? ` (past the wall: HAProxy holds ${sized.wall})` : ''}` : step.label,
    curve: step.curve ?? null,
    cores: step.cores ?? null,
    x: step.x ?? (sized ? sized.connections : step.label),
    config,
    // On dedicated cores, as many threads: HAProxy binds them within its cpuset.
    haproxy: mergeSettings(step.cores ? { global: { nbthread: String(step.cores) } } : {},
      sized ? mergeSettings(step.haproxy ?? {}, sized.haproxy) : step.haproxy ?? {}),
    backends: { ...s.backends, ...step.backends, ...sized?.backends },
    compose_env: composeEnv,
    load: {
      tool,
      script: step.load?.script ?? s.load.script ?? null,
      replicas,
      seconds,
      sample_at: LOAD_TOOLS[tool].sampleAt(env, seconds),
      cpu_idle_seconds: s.cpu_idle ? parseDuration(s.cpu_idle) : 0,
      env: strings(env),
    },
    connections: sized?.connections ?? null,
    model: {
      ...Object.fromEntries(Object.entries({ ...s.model, ...step.model }).map(([metric, formula]) => [metric, evalModel(formula, vars)])),
      ...(sized?.wall ? { wall: sized.wall } : {}),
    },
    published: step.published ?? {},
    // A level past the wall is judged by where the wall stood, not by holding it all.
    expect: sized?.wall ? s.connections.past_the_wall?.expect ?? {} : comparable ? step.expect ?? {} : informational(step.expect ?? {}),
  };
}

// versusTwin STEP IMAGE: STEP again with HAProxy from IMAGE (--versus),
// "-versus" after its id and its curve's name.
function versusTwin(step, image) {
  return { ...step, id: `${step.id}-versus`, label: `${step.label}, ${image}`, ...(step.curve ? { curve: `${step.curve}-versus` } : {}) };
}

// tlsTwin SCENARIO STEP: STEP again over TLS (--tls): the scenario's "tls"
// load environment on top of the step's, "-tls" after its id.
function tlsTwin(s, step) {
  return {
    ...step,
    id: `${step.id}-tls`,
    label: `${step.label}, over TLS`,
    load: { ...step.load, env: { ...step.load?.env, ...s.tls.env } },
  };
}

// Section-by-section merge of two HAProxy settings objects.
function mergeSettings(a, b) {
  const out = { ...a };
  for (const [section, values] of Object.entries(b ?? {})) out[section] = { ...out[section], ...values };
  return out;
}
