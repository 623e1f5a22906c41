// The lab's load tools, one entry each: everything the runner, the planner
// and the report need to know about a load generator. scripts/scenario.sh
// reads the runner's part through run.env and step.env (cli.mjs plan), the
// tests and the dashboards' lint through cli.mjs tools or this module.
// Adding a load tool = its folder (loadgen/TOOL, its tests in loadgen/TOOL/test
// run in its image), an entry here, its compose service, its summary reader
// (evidence/readers.mjs) and its image lines. Two more, which static tests
// ask for: its knobs in docs/knobs.md (tests/lib/knobs.mjs), and its service
// in the dashboard's selectors of the load tools (tests/lib/dashboards.mjs).
// Nothing else names a tool.
//
// Fields:
//   service, profile  its compose service and the profile that starts it
//   own               the variables its container reads besides the target
//                     and the runner's (reads: all of them): its container
//                     gets them from the step's load.env alone (compose's
//                     LOAD_ENV_FILE; defaults live in the tool), and a
//                     scenario may set only these (plan --check)
//   compose           variables its compose service itself uses (not passed in)
//   replicas          the variable that tells each replica how many share the load
//   index             the variable that overrides a replica's own number
//   scripts           true: it runs the step's "script" from loadgen/
//   env(step)         variables the runner sets for every step (besides
//                     TESTID, LOADGEN_SUMMARY_DIR and the replicas variable)
//   seconds(env)      how long a step's load runs
//   lastSeconds(env)  the longest its connections can last (what the
//                     timeouts of a sized step must outlast)
//   sampleAt(env, s)  when, after the start, to take the mid-load snapshot
//                     (every container's CPU and memory, HAProxy's show info)
//   needs             what a scenario must say for the tool to run
//   check(env)        throws the RangeError the tool itself would give for
//                     a bad value (plan --check, before anything runs)
//   sized             the connection preflight sizes its replicas: the runner
//                     reads its own container's limits (SERVICE_nofile,
//                     SERVICE_memory_bytes in limits.env)
//   sysctl            the variable of a sysctl its compose service sets (a
//                     step may set it too): the runner drops a step's value
//                     that the clients' kernel does not have ("" for none)
//   hostSampler       the runner samples the Docker host's CPU each second
//                     during its steps (scripts/probes/host-cpu.mjs: where a
//                     held connection's CPU goes)
import { loadConfig, plannedSeconds } from '../../../loadgen/holder/lib.mjs';
import { loadConfig as vegetaConfig } from '../../../loadgen/vegeta/lib.mjs';
import { loadConfig as h2loadConfig } from '../../../loadgen/h2load/lib.mjs';
import { checkK6 } from '../../../loadgen/lib/k6-knobs.mjs';
import { UsageError, parseDuration } from './usage.mjs';

// Set by the runner for every step, whatever the tool.
export const RUNNER_VARS = ['TESTID', 'LOADGEN_SUMMARY_DIR'];
// A scenario's tool when it names none.
export const DEFAULT_TOOL = 'k6';

// loadToolEntry ENTRY: ENTRY with what every tool reads besides its own
// knobs: the target, the runner's variables, its replicas and index variables.
const loadToolEntry = ({ own, ...entry }) => ({
  ...entry,
  reads: ['TARGET', ...RUNNER_VARS, entry.replicas, entry.index, ...own],
});

export const LOAD_TOOLS = {
  k6: loadToolEntry({
    service: 'loadgen',
    profile: 'load',
    replicas: 'LOADGEN_REPLICAS',
    index: 'LOADGEN_INDEX',
    own: [
      'VUS', 'LOAD_PATH', 'TIMEOUT', 'KEEPALIVE', 'ITERATIONS', 'MAX_DURATION', 'DURATION',
      'RATE', 'SLEEP_MS', 'TIMES', 'MAX_VUS', 'PRE_VUS', 'GRACEFUL_STOP', 'FLOOR_RATE', 'START_SPREAD', 'LOADGEN_EXTRA_ARGS',
    ],
    // LOADGEN_SCRIPT: the k6 script the service runs (its command).
    compose: ['LOADGEN_SCRIPT', 'LOADGEN_SYSCTL'],
    scripts: true,
    env: (step) => ({ LOADGEN_SCRIPT: `/loadgen/${step.script}` }),
    // A closed or open model runs DURATION; a fixed count of requests
    // (requests.js) ends by itself, at the latest at MAX_DURATION.
    seconds: (env) => parseDuration(env.DURATION ?? env.MAX_DURATION),
    lastSeconds: (env) => parseDuration(env.DURATION ?? env.MAX_DURATION),
    sampleAt: (env, seconds) => Math.min(5, seconds / 2),
    needs: (env) => (env.DURATION || env.MAX_DURATION ? null : 'DURATION (or MAX_DURATION for a fixed count of requests)'),
    check: checkK6,
    sized: false,
    sysctl: 'LOADGEN_SYSCTL',
    hostSampler: false,
  }),
  holder: loadToolEntry({
    service: 'holder',
    profile: 'hold',
    replicas: 'HOLDER_REPLICAS',
    index: 'HOLDER_INDEX',
    own: ['CONNECTIONS', 'CONNECT_TIMEOUT', 'HOLD_PATH', 'RAMP_UP', 'HOLD', 'RAMP_DOWN', 'GRACE', 'MAX_UNCONFIRMED', 'RAMP_SLACK', 'TICK_MS'],
    compose: ['HOLDER_MEMORY'],
    scripts: false,
    env: () => ({}),
    // The holder's own defaults (loadgen/holder/lib.mjs) for what a step leaves out.
    seconds: (env) => plannedSeconds(loadConfig(env)),
    lastSeconds: (env) => { const c = loadConfig(env); return plannedSeconds(c) + c.grace; },
    sampleAt: (env) => { const c = loadConfig(env); return c.rampUp + c.rampSlack + c.hold / 2; },
    needs: () => null,
    check: (env) => { loadConfig(env); },
    sized: true,
    sysctl: '',
    hostSampler: true,
  }),
  // vegeta: seed 04's open-model client (constant rate; keep-alive and TLS
  // resumption each on or off; its own latency histogram).
  vegeta: loadToolEntry({
    service: 'vegeta',
    profile: 'attack',
    replicas: 'VEGETA_REPLICAS',
    index: 'VEGETA_INDEX',
    own: ['RATE', 'DURATION', 'LOAD_PATH', 'KEEPALIVE', 'CONNECTIONS', 'MAX_CONNECTIONS', 'TLS_RESUME', 'TIMEOUT', 'WORKERS', 'MAX_WORKERS',
      'VEGETA_EXTRA_ARGS'],
    compose: ['VEGETA_MEMORY'],
    scripts: false,
    env: () => ({}),
    seconds: (env) => vegetaConfig(env).duration,
    lastSeconds: (env) => { const c = vegetaConfig(env); return c.duration + c.timeout; },
    sampleAt: (env) => vegetaConfig(env).duration / 2,
    needs: (env) => (env.RATE && env.DURATION ? null : 'RATE and DURATION'),
    check: (env) => { vegetaConfig(env); },
    sized: false,
    sysctl: '',
    hostSampler: false,
  }),
  // h2load: nghttp2's HTTP/1.1 client, about HAProxy's own CPU per request;
  // unpaced (RATE empty or 0: a closed loop) or paced (RATE requests/s).
  h2load: loadToolEntry({
    service: 'h2load',
    profile: 'bench',
    replicas: 'H2LOAD_REPLICAS',
    index: 'H2LOAD_INDEX',
    own: ['RATE', 'DURATION', 'LOAD_PATH', 'KEEPALIVE', 'CONNECTIONS', 'TIMEOUT', 'THREADS', 'H2LOAD_EXTRA_ARGS'],
    compose: ['H2LOAD_MEMORY'],
    scripts: false,
    env: () => ({}),
    seconds: (env) => h2loadConfig(env).duration,
    lastSeconds: (env) => { const c = h2loadConfig(env); return c.duration + c.timeout; },
    sampleAt: (env) => h2loadConfig(env).duration / 2,
    needs: (env) => (env.DURATION ? null : 'DURATION'),
    check: (env) => { h2loadConfig(env); },
    sized: false,
    sysctl: '',
    hostSampler: false,
  }),
};

// loadTool NAME: the table's entry; UsageError naming the known ones.
export function loadTool(name) {
  const tool = LOAD_TOOLS[name];
  if (!tool) throw new UsageError(`load tool "${name}" is not one of ${Object.keys(LOAD_TOOLS).join(', ')}`);
  return tool;
}
