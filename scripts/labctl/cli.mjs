// The computing half of scripts/scenario.sh, run in the lab's node container
// with the repository at the working directory (the host needs only bash):
//   list                      scenarios with their one-line description and source
//   tools                     the load tools, one a line: "TOOL SERVICE PROFILE" (its
//                             compose service and the profile that starts it), for the
//                             bash that stops or lists every tool (core/loadtools.mjs)
//   topology --processes N    the lab's table (topology.txt) with each HAProxy process a
//                             row of its own, for the runner outside a run (a run reads
//                             its plan's DIR/topology.txt)
//   describe NAME             a scenario's steps and options
//   plan NAME --out DIR [--command C] [--quick] [--duration S] [--replicas N] [--repeat N]
//                             write DIR/plan.json, DIR/topology.txt, DIR/samplers/*.args,
//                             each step's HAProxy config, DIR/run.env and
//                             DIR/steps/NN-id/step.env (the
//                             runner's only input: scripts/labctl/plan/runfolder.mjs)
//   plan NAME --check [...]   only check the name and options
//   preflight NAME --limits FILE [--quick] [--target N|max]
//                             the limits that cap a connection scenario and the
//                             largest count they allow; exit 2 if the target
//                             cannot fit (plan takes --limits FILE too)
//   report DIR                the measured-vs-published table; writes summary.*,
//                             report.md and chart.svg; exit 3 if a verdict failed
//                             (versions: DIR/versions.env and the load tools' own;
//                             the command: DIR/run.env's)
//   stack --host-root DIR [--without SERVICE]... [--scale SERVICE=N]... < COMPOSE_CONFIG_JSON
//                             the lab as a Swarm stack file (JSON, on stdout):
//                             compose config's JSON made into what `docker stack
//                             deploy` takes (scripts/labctl/swarm/stack.mjs)
//   stack --host-root DIR --tool SERVICE --replicas N --collector URL --collector-token HEX
//         [--file TARGET=PATH]...
//         < COMPOSE_CONFIG_JSON
//                             one step's load tool as a stack file of its own
//                             (a Swarm run of scripts/scenario.sh)
//   kept pack SRC DEST --max-bytes N [--as-reported WHY]
//                             keep the finished run SRC as DEST (docs/runs/S/T): the
//                             outputs and inputs in the clear, the rest in one archive
//                             (scripts/labctl/kept/kept.mjs), the outputs re-reported from it
//                             (--as-reported: SRC's own kept, and why, when re-reporting
//                             cannot give them)
//   kept check [DIR...]       re-report each kept run (all of docs/runs by default)
//                             from its archive; exit 1 if an output differs
//   kept refresh [DIR...]     re-report each kept run in place (today's code)
//   kept extract DIR OUT      a kept run's evidence unpacked into the new folder OUT
//   figures [--check] [FILE...]
//                             write the docs' figures and tables from the kept runs'
//                             summary.json (README.md, docs/results.md, lessons/*.md by
//                             default; scripts/labctl/figures/figures.mjs); --check writes
//                             nothing and exits 1 where a file differs; both exit 1 on a
//                             figure typed outside the generated forms
//   kept size ROOT --max-bytes N
//                             exit 1 if the files under ROOT add up to more
// A usage error prints one line on stderr and exits 2.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { renderConfig } from './plan/render.mjs';
import { MAX_PROCESSES, OPTIONS, SCENARIO_OPTIONS, UsageError, buildPlan, chosenSteps, listScenarios, loadScenario, parseOptions, stepComposeEnv } from './plan/scenarios.mjs';
import { formatPreflight, memoryFor, pastTheWall, preflight, processesFor, readLimits, refusal, sizeLevels } from './plan/preflight.mjs';
import { buildReport, commandIn, formatTable, readRun, versionsOf, writeOutputs } from './report/report.mjs';
import { writeRunFolder } from './plan/runfolder.mjs';
import { lintFigures, rowRunFindings, writeFigures } from './figures/figures.mjs';
import { KeptError, asReported, checkKept, partingLine, extractKept, keptRuns, keptSize, packRun, refreshKept } from './kept/kept.mjs';
import { parseEnv } from './core/envfile.mjs';
import { durationSeconds } from './core/usage.mjs';
import { TOPOLOGY, TOPOLOGY_FILE, containersOf, expandProcesses, parseTopology } from './core/topology.mjs';
import { samplerArgs } from './plan/samplers.mjs';
import { DEFAULT_TOOL, LOAD_TOOLS } from './core/loadtools.mjs';
import { listenersText, switchPlan } from './plan/listeners.mjs';
import { costTable, parseCalls } from './run/step-cost.mjs';
import { StackError, toStack, toolStack } from './swarm/stack.mjs';

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

// tools: each load tool's row as bash reads it (read -r tool service profile).
function tools() {
  for (const [name, tool] of Object.entries(LOAD_TOOLS)) console.log(`${name} ${tool.service} ${tool.profile}`);
}

function topology(args) {
  const [flag, processes, ...rest] = args;
  if (flag !== '--processes' || !/^[1-9]\d*$/.test(processes ?? '') || rest.length) {
    throw new UsageError(`topology takes --processes N, a whole number from 1 (HAPROXY_PROCESSES), found "${args.join(' ')}"`);
  }
  process.stdout.write(expandProcesses(readFileSync(TOPOLOGY_FILE, 'utf8'), { HAPROXY_PROCESSES: processes }));
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
  const tool = s.load.tool ?? DEFAULT_TOOL;
  const what = LOAD_TOOLS[tool].scripts ? `loadgen/${s.load.script}` : `the ${LOAD_TOOLS[tool].service} service`;
  console.log(`load: ${tool}, ${what} ${Object.entries(s.load.env ?? {}).map(([k, v]) => `${k}=${v}`).join(' ')}`);
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
  if (s.article) console.log(`  --article           ${SCENARIO_OPTIONS.article}`);
  if (s.tls) console.log(`  --tls               ${SCENARIO_OPTIONS.tls}`);
  if (s.connections) console.log(`  --target N|max      ${SCENARIO_OPTIONS.target} (default ${s.connections.default})`);
  for (const note of s.notes ?? []) console.log(`note: ${note}`);
}

// Value of FLAG in ARGS and ARGS without it.
function takeFlag(args, flag) {
  const at = args.indexOf(flag);
  if (at < 0) return [undefined, args];
  return [args[at + 1], args.filter((_, i) => i !== at && i !== at + 1)];
}

// settingsFlag ARGS → [FILE, the rest]: --settings FILE (or --settings=FILE),
// read before the scenario is loaded: its settings are laid over the steps.
function settingsFlag(args) {
  const eq = args.findIndex((a) => a.startsWith('--settings='));
  if (eq >= 0) return [args[eq].slice('--settings='.length), args.filter((_, i) => i !== eq)];
  const [file, rest] = takeFlag(args, '--settings');
  if (args.includes('--settings') && (file === undefined || file.startsWith('--'))) {
    throw new UsageError('--settings needs a FILE: a .json file inside the lab\'s folder (see scenarios/README.md, "--settings")');
  }
  return [file, rest];
}

// Connection scenarios: the preflight for the target, and a sizing per level:
// the HAProxy processes (--processes, else the fewest whose open files hold
// the target) and, when the lab's HAProxy memory is less than they need,
// the memory the run gives them (HAPROXY_MEMORY, said in the preflight).
function connectionSizing(scenario, options, limitsFile) {
  if (!limitsFile) throw new UsageError('connection scenarios need --limits FILE (scripts/scenario.sh reads them)');
  // --tls: the levels are held over TLS too, sized with TLS's bytes per connection.
  const limits = { ...readLimits(limitsFile), tls: options.tls };
  // The memory every step gives HAProxy itself (oom: a trap and its fix;
  // lesson 08's exercise): the preflight shows it, the sizing leaves it.
  const stepsMemory = chosenSteps(scenario, options).map((t) => stepComposeEnv(scenario, t, options).HAPROXY_MEMORY);
  if (stepsMemory.length && stepsMemory.every(Boolean)) limits.steps_memory = [...new Set(stepsMemory)];
  const wanted = options.target ?? (options.quick ? scenario.connections.quick : undefined) ?? scenario.connections.default;
  const sizeFor = (target) => {
    limits.processes = options.processes ?? Math.min(MAX_PROCESSES, processesFor(target, limits));
    const haproxy = containersOf(TOPOLOGY)[0].name;
    const memory = memoryFor(target, limits, limits.processes);
    const have = limits[`${haproxy}_memory_bytes`];
    if (!limits.steps_memory && have && have < parseInt(memory, 10) * 1024 * 1024) {
      limits.haproxy_memory = memory;
      limits[`${haproxy}_memory_bytes`] = parseInt(memory, 10) * 1024 * 1024;
    }
  };
  // "max": as many processes as the launcher runs, then the fewest the largest needs.
  if (wanted === 'max') {
    limits.processes = options.processes ?? MAX_PROCESSES;
    sizeFor(preflight('max', { ...limits, haproxy_memory: undefined, [`${containersOf(TOPOLOGY)[0].name}_memory_bytes`]: limits.mem_available_bytes }).largest);
  } else {
    sizeFor(wanted);
  }
  // --processes N short of the target, when only their open files bind: the
  // lesson's run past that wall, said in the preflight, not a refusal.
  const checked = preflight(wanted, limits);
  const p = options.processes && pastTheWall(checked) ? { ...checked, fits: true, wall: checked.binding.allows } : checked;
  const env = { ...scenario.load.env, ...(options.quick ? scenario.quick?.env : {}) };
  // The tool's own defaults for what the scenario leaves out.
  const hold = LOAD_TOOLS[scenario.load.tool ?? DEFAULT_TOOL].lastSeconds(env);
  // The ramp the scenario allows a level (connections.ramp_per_second).
  const perSecond = scenario.connections.ramp_per_second;
  const ramp = perSecond ? {
    perSecond, downPerSecond: scenario.connections.ramp_down_per_second ?? perSecond,
    seconds: durationSeconds(env.RAMP_UP ?? 0), down: durationSeconds(env.RAMP_DOWN ?? 0), minPerSecond: scenario.connections.ramp_min_per_second ?? null,
  } : null;
  // The held backend's replicas filled in order (connections.backends_in_order):
  // by their Compose container names, so not on Swarm, and only once the
  // runner named the project (--project).
  const inOrder = scenario.connections.backends_in_order && options.project && !options.swarm ? { project: options.project } : null;
  const sizeAll = (r) => (p.fits ? sizeLevels(p.target, scenario.steps.map((t) => t.fraction), limits, hold, TOPOLOGY, r, inOrder) : null);
  // Over TLS a level opens at the scenario's TLS ramp: each connection is a
  // full handshake, and the clients' and HAProxy's handshakes share the cores.
  const tlsPerSecond = options.tls ? scenario.tls?.ramp_per_second : undefined;
  const tlsSizes = ramp && tlsPerSecond ? sizeAll({ ...ramp, perSecond: tlsPerSecond }) : null;
  return { preflight: { ...p, limits }, sizes: sizeAll(ramp), tlsSizes };
}

// The runner's --machine-cores N: the cores Docker gives containers (docker
// info's NCPU, a Docker Desktop VM's, not its host's); else the cores this
// planner sees, which in the lab's node container are the same.
function machineCoresFlag(args) {
  const [raw, rest] = takeFlag(args, '--machine-cores');
  if (raw === undefined) return [availableParallelism(), rest];
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`--machine-cores needs a whole number of cores, 1 or more (got "${raw}")`);
  return [Number(raw), rest];
}

function plan(args) {
  const [name, ...rest] = args;
  if (!name) throw new UsageError('plan needs a scenario name');
  const checkOnly = rest.includes('--check');
  const [out, afterOut] = takeFlag(rest, '--out');
  const [limitsFile, afterLimits] = takeFlag(afterOut.filter((a) => a !== '--check'), '--limits');
  // The runner's: the processes the lab runs now (HAPROXY_PROCESSES).
  const [labProcesses = '1', afterProcesses] = takeFlag(afterLimits, '--lab-processes');
  const [machineCores, afterCores] = machineCoresFlag(afterProcesses);
  // The runner's: the lab's Compose project, its containers' names' start.
  const [project, afterProject] = takeFlag(afterCores, '--project');
  if (project !== undefined && !/^[a-z0-9][a-z0-9_-]*$/.test(project)) {
    throw new UsageError(`--project needs a Compose project name (lowercase letters, digits, "-" and "_"), got "${project}"`);
  }
  // The runner's: the command as the user typed it, which the report names.
  const [command = '', afterCommand] = takeFlag(afterProject, '--command');
  const [settings, flags] = settingsFlag(afterCommand);
  const scenario = loadScenario(ROOT, name, { settings });
  // The runner's --on-swarm: the lab runs as a Swarm stack (no cpuset there).
  const swarm = flags.includes('--on-swarm');
  const options = { ...parseOptions(flags.filter((a) => a !== '--on-swarm'), scenario), machineCores, swarm, project };
  // Connection levels are sized from the lab's limits, read once it runs:
  // until then the run folder says a preflight is needed, and has no steps.
  if (scenario.connections && !limitsFile) {
    if (checkOnly) return;
    if (!out) throw new UsageError('plan needs --out DIR');
    // The lab's processes until the sizing: the runner reads the limits of these.
    writeRunTopology(out, labProcesses);
    writeRunFolder(out, { scenario: name, steps: [] }, 'needed', command);
    return;
  }
  if (scenario.connections) {
    const { preflight: p, sizes, tlsSizes } = connectionSizing(scenario, options, limitsFile);
    if (!p.fits) throw new UsageError(refusal(p));
    Object.assign(options, { sizes, tlsSizes, preflight: p });
  }
  const result = buildPlan(scenario, name, options);
  const baseline = readFileSync(join(ROOT, BASELINE), 'utf8');
  const configs = result.steps.map((s) => renderConfig(baseline, s.haproxy, `${name}/${s.id}`));
  if (checkOnly) return;
  if (!out) throw new UsageError('plan needs --out DIR');
  mkdirSync(join(out, 'configs'), { recursive: true });
  // Each config's listening sockets, which the report compares with the ss
  // view the runner saves after applying it, and reload or restart.
  const switching = switchPlan(baseline, configs, result.steps.map((s) => s.compose_env));
  result.steps.forEach((s, i) => {
    s.switch = switching.switches[i];
    writeFileSync(join(out, s.config), configs[i]);
    writeFileSync(join(out, s.config.replace(/\.cfg$/, '.listeners')), listenersText(switching.listeners[i]));
  });
  result.baseline_switch = switching.baseline;
  writeFileSync(join(out, 'configs/baseline.listeners'), listenersText(switching.baselineListeners));
  writeFileSync(join(out, 'plan.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeRunTopology(out, result.steps[0]?.compose_env?.HAPROXY_PROCESSES ?? labProcesses);
  writeRunFolder(out, result, scenario.connections ? 'done' : 'none', command);
}

// writeRunTopology OUT PROCESSES: the topology the run was planned with, one
// instance row per HAProxy process (its sized processes, else the lab's), in
// OUT/topology.txt: the runner and the report read its instances and
// frontends from here, whatever the lab's table says later; and from it, the
// sampler's arguments per HAProxy container (OUT/samplers/CONTAINER.args).
function writeRunTopology(out, processes) {
  const text = expandProcesses(readFileSync(TOPOLOGY_FILE, 'utf8'), { HAPROXY_PROCESSES: processes });
  mkdirSync(join(out, 'samplers'), { recursive: true });
  writeFileSync(join(out, 'topology.txt'), text);
  for (const [container, args] of Object.entries(samplerArgs(parseTopology(text, join(out, 'topology.txt'))))) {
    writeFileSync(join(out, 'samplers', `${container}.args`), `${args.join('\n')}\n`);
  }
}

function preflightCommand(args) {
  const [name, ...rest] = args;
  const [limitsFile, afterLimits] = takeFlag(rest, '--limits');
  const [, afterProcesses] = takeFlag(afterLimits, '--lab-processes');
  const [, afterCores] = machineCoresFlag(afterProcesses);
  const [settings, flags] = settingsFlag(afterCores);
  const scenario = loadScenario(ROOT, name ?? '', { settings });
  const options = parseOptions(flags.filter((a) => a !== '--on-swarm'), scenario);
  if (!scenario.connections) throw new UsageError(`${name} holds no connection levels: no preflight needed`);
  const { preflight: p } = connectionSizing(scenario, options, limitsFile);
  console.log(formatPreflight(p));
  if (!p.fits) throw new UsageError(refusal(p));
}

function report(args) {
  const [dir, ...rest] = args;
  if (!dir) throw new UsageError('report needs a results directory');
  if (rest.length) throw new UsageError(`report DIR takes nothing more (got ${rest.join(' ')}): the command that made the run is run.env's`);
  const run = readRun(dir);
  const result = buildReport(run);
  // writeOutputs reads each step's rendered config itself for report.md.
  writeOutputs(dir, result, { versions: versionsOf(dir, run), command: commandIn(dir) });
  console.log(formatTable(result));
  if (!result.ok) process.exitCode = 3;
}

// stack --tool SERVICE: one step's load tool (toolStack): its replicas, the
// collector's URL and the run's token for it; the variable that numbers the
// replicas is the tool's (LOAD_TOOLS).
function toolOptions(args) {
  const [service, a] = takeFlag(args, '--tool');
  const [replicas, b] = takeFlag(a, '--replicas');
  const [collector, c] = takeFlag(b, '--collector');
  let [collectorToken, rest] = takeFlag(c, '--collector-token');
  const files = {};
  for (let file; ([file, rest] = takeFlag(rest, '--file'))[0] !== undefined;) {
    const [target, path] = file.split('=');
    if (!target?.startsWith('/') || !path?.startsWith('/')) throw new UsageError(`stack --file ${file}: give TARGET=PATH, both absolute`);
    files[target] = path;
  }
  const tool = Object.values(LOAD_TOOLS).find((t) => t.service === service);
  if (!tool) throw new UsageError(`stack --tool ${service ?? ''}: not a load tool's service (${Object.values(LOAD_TOOLS).map((t) => t.service).join(', ')})`);
  if (!/^[1-9]\d*$/.test(replicas ?? '') || !/^http:\/\/\S+$/.test(collector ?? '') || !/^[0-9a-f]{32}$/.test(collectorToken ?? '') || rest.length > 0) {
    throw new UsageError('stack --tool SERVICE needs --replicas N, --collector http://HOST:PORT and --collector-token (32 hex digits) (and --file TARGET=PATH for each file it reads from HAProxy\'s node)');
  }
  return { service, replicas: Number(replicas), index: tool.index, collector, collectorToken, files };
}

function stackCommand(args) {
  const [hostRoot, rest] = takeFlag(args, '--host-root');
  if (!hostRoot?.startsWith('/')) throw new UsageError('stack needs --host-root DIR, the checkout as the host names it');
  const tool = rest.includes('--tool') ? toolOptions(rest) : null;
  const without = [];
  const replicas = {};
  for (let i = 0; !tool && i < rest.length; i += 2) {
    const [flag, value] = [rest[i], rest[i + 1] ?? ''];
    if (flag === '--without' && value) without.push(value);
    else if (flag === '--scale' && /^[a-z][a-z0-9-]*=\d+$/.test(value)) replicas[value.split('=')[0]] = Number(value.split('=')[1]);
    else throw new UsageError(`stack: unknown argument "${flag} ${value}" (use --without SERVICE or --scale SERVICE=N)`);
  }
  const compose = JSON.parse(readFileSync(0, 'utf8'));
  try {
    const stack = tool ? toolStack(compose, { hostRoot, localRoot: ROOT, ...tool }) : toStack(compose, { hostRoot, localRoot: ROOT, without, replicas });
    process.stdout.write(`${JSON.stringify(stack, null, 2)}\n`);
  } catch (err) {
    if (err instanceof StackError) throw new UsageError(err.message);
    throw err;
  }
}

// step-cost LOG: each step's wall time, load tool time and fixed cost, and the
// docker calls, from scripts/step-cost.sh's log of a run's docker calls.
function stepCostCommand([log]) {
  if (!log || !existsSync(log)) throw new UsageError(`step-cost needs the log of a run's docker calls (scripts/step-cost.sh writes it): ${log ? `${log} does not exist` : 'none given'}`);
  console.log(costTable(parseCalls(readFileSync(log, 'utf8'))));
}

const byteCount = (raw) => {
  if (!/^[1-9]\d*$/.test(raw ?? '')) throw new UsageError(`--max-bytes needs a size in bytes, e.g. 262144 (got "${raw ?? ''}")`);
  return Number(raw);
};

// kept pack|check|refresh|extract|size: kept runs (scripts/labctl/kept/kept.mjs).
function keptCommand([action, ...args]) {
  const mib = (bytes) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  try {
    if (action === 'pack') {
      const [max, afterMax] = takeFlag(args, '--max-bytes');
      const [why, [src, dest, ...more]] = takeFlag(afterMax, '--as-reported');
      if (!src || !dest || more.length || why === '') throw new UsageError('kept pack SRC DEST --max-bytes N [--as-reported WHY]');
      const r = packRun(src, dest, { maxBytes: byteCount(max), asReported: why ?? null });
      const said = why ? `; kept as reported (${r.changed.join(', ')} re-report differently): ${why}`
        : r.changed.length ? `; re-reported from what is kept, ${r.changed.join(', ')} differ from the run's own (reported by other code, or reading a file left out)` : '';
      console.log(`${src} → ${dest}: ${r.archived} files in the archive, ${r.leftOut ? `${r.leftOut} left out (LEFT-OUT.txt in it)` : 'none left out'}${said}`);
    } else if (action === 'check' || action === 'refresh') {
      const dirs = keptRuns(ROOT, args);
      let differ = 0;
      for (const dir of dirs) {
        const why = asReported(dir);
        if (why !== null && action === 'refresh') {
          console.log(`${dir}: kept as reported, not refreshed (${why})`);
          continue;
        }
        if (action === 'refresh') {
          const changed = refreshKept(dir);
          console.log(`${dir}: ${changed.length ? `re-reported, ${changed.join(', ')} changed` : 'as kept'}`);
          continue;
        }
        const found = checkKept(dir);
        differ += found.length ? 1 : 0;
        for (const { file, difference } of found) console.log(`${dir}/${file}: ${difference}`);
      }
      if (differ) {
        console.log(`${differ} of ${dirs.length} kept runs re-report differently: if the report's code changed on purpose, run scripts/keep-run.sh --refresh and commit the outputs`);
        process.exitCode = 1;
      }
    } else if (action === 'extract') {
      if (args.length !== 2) throw new UsageError('kept extract DIR OUT: a kept run and a new folder');
      extractKept(args[0], args[1]);
    } else if (action === 'size') {
      const [max, [root, ...more]] = takeFlag(args, '--max-bytes');
      if (!root || more.length) throw new UsageError('kept size ROOT --max-bytes N');
      const limit = byteCount(max);
      const size = keptSize(root);
      console.log(`${root}: ${mib(size)} (the limit is ${mib(limit)})`);
      if (size > limit) process.exitCode = 1;
    } else {
      throw new UsageError(`kept ${action ?? ''}: use kept pack, check, refresh, extract or size`);
    }
  } catch (err) {
    if (err instanceof KeptError) throw new UsageError(err.message);
    throw err;
  }
}

const MEASURED_HEADING = '## What the lab measured (2 cores, 24 GiB)';

// The documents whose measured figures are generated.
function figureFiles() {
  const lessons = readdirSync(join(ROOT, 'lessons')).filter((n) => n.endsWith('.md')).sort().map((n) => `lessons/${n}`);
  return ['README.md', 'docs/results.md', ...lessons];
}

function figuresCommand(args) {
  const check = args.includes('--check');
  const files = args.filter((a) => a !== '--check');
  for (const f of files) if (f.startsWith('-') || !existsSync(f)) throw new UsageError(`figures: ${f} is not a file (figures [--check] [FILE...])`);
  let bad = 0;
  for (const file of files.length ? files : figureFiles()) {
    const before = readFileSync(file, 'utf8');
    const { text, errors } = writeFigures(file, before);
    const findings = [...errors, ...lintFigures(file, text)];
    // README's measured table: each row's figures from the reports it links.
    if (file === 'README.md') findings.push(...rowRunFindings(file, text, MEASURED_HEADING));
    if (text !== before) {
      if (check) {
        const p = partingLine(before, text);
        findings.push(`${file}:${p.line}: not as the kept runs give it: expected "${p.b}", found "${p.a}" (scripts/figures.sh writes it)`);
      } else {
        writeFileSync(file, text);
        console.log(`${file}: figures written`);
      }
    }
    for (const f of findings) console.log(f);
    bad += findings.length;
  }
  if (bad) {
    console.log(`${bad} figure${bad > 1 ? 's' : ''} to fix (above)`);
    process.exitCode = 1;
  }
}

function main([command, ...args]) {
  switch (command) {
    case 'list': return list();
    case 'tools': return tools();
    case 'topology': return topology(args);
    case 'describe': return describe(args[0] ?? '');
    case 'plan': return plan(args);
    case 'report': return report(args);
    case 'preflight': return preflightCommand(args);
    case 'stack': return stackCommand(args);
    case 'step-cost': return stepCostCommand(args);
    case 'kept': return keptCommand(args);
    case 'figures': return figuresCommand(args);
    default: throw new UsageError(`unknown command "${command ?? ''}": use list, tools, topology, describe, plan, preflight, report, stack, step-cost, kept or figures`);
  }
}

try {
  main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`scenario: ${err.message}\n`);
  process.exitCode = err instanceof UsageError ? 2 : 1;
}
