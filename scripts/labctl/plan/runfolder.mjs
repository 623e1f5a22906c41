// The contract between the planner (node) and the runner (bash,
// scripts/scenario.sh): files in the run folder, nothing on stdout.
//   run.env               the run: scenario, step count, whether the
//                         connection preflight is still to come, and the
//                         services and profiles of every load tool (the
//                         runner's cleanup stops them all), and the load
//                         tools whose own limits the preflight reads
//   steps/NN-id/step.env  one step: what to apply and what to start
// and the runner writes back, per step: started.env (when the load started,
// for the functions that watch and finish it) and outcome.env (how it ended).
// Format: one NAME=value per line, the value to the end of the line (no
// quoting: the planner checks that values are one line, compose values one
// word and load values words without quotes); "#" starts a comment line.
// "load.NAME=value" lines are the load containers' environment (the runner
// hands them over in an env file, and exports them for the ones compose
// interpolates), "compose.NAME=value" lines the lab services' settings for
// the step (compose interpolates them).
import fs from 'node:fs';
import path from 'node:path';
import { LOAD_TOOLS, RUNNER_VARS } from '../core/loadtools.mjs';
import { envText } from '../core/envfile.mjs';

const allTools = (field) => [...new Set(Object.values(LOAD_TOOLS).map((t) => t[field]))].join(' ');

// runEnv PLAN PREFLIGHT COMMAND: run.env's text. PREFLIGHT: "none" (no
// connection levels), "needed" (levels not sized yet: no steps planned) or
// "done". COMMAND: what the user ran, which the report names.
export function runEnv(plan, preflight, command = '') {
  return envText(
    [`${plan.scenario}: written by scripts/labctl/cli.mjs plan, read by scripts/scenario.sh`],
    [
      ['scenario', plan.scenario],
      ['steps', preflight === 'needed' ? 0 : plan.steps.length],
      ['preflight', preflight],
      ['load_services', allTools('service')],
      ['load_profiles', allTools('profile')],
      ['sized_services', Object.values(LOAD_TOOLS).filter((t) => t.sized).map((t) => t.service).join(' ')],
      // The machine's sign times, for a sign_floor reading (scripts/scenario.sh tls_floor).
      ['tls_floor', (plan.readings ?? []).some((r) => r.kind === 'sign_floor') ? 'needed' : 'none'],
      // The floors of a connection, for a breakdown reading (scripts/lib/floors.sh).
      ['connection_floors', (plan.readings ?? []).some((r) => r.kind === 'breakdown') ? 'needed' : 'none'],
      // --versus: the second HAProxy image, which the runner makes sure is here.
      ['versus', plan.options?.versus ?? ''],
      // How the runner puts HAProxy back on its baseline (cli.mjs plan).
      ['baseline_switch', plan.baseline_switch ?? 'restart'],
      ['command', command],
    ],
  );
}

// stepEnv PLAN STEP OUT: step.env's text for STEP of a run planned into OUT
// (results/SCENARIO/STAMP: the load containers write under /results).
function stepEnv(plan, step, out) {
  const tool = LOAD_TOOLS[step.load.tool];
  const stamp = path.basename(out);
  // The load containers mount results/ at /results.
  const underResults = /(?:^|\/)results\/(.+)$/.exec(out);
  if (!underResults) throw new Error(`plan --out ${out}: the run folder must be under results/ (the load generators write there)`);
  const summaryDir = path.posix.join(underResults[1], step.dir);
  const runner = {
    [RUNNER_VARS[0]]: `${plan.scenario}-${stamp}-${step.id}`,
    [RUNNER_VARS[1]]: summaryDir,
    [tool.replicas]: step.load.replicas,
    ...tool.env(step.load),
  };
  const load = { ...step.load.env, ...runner };
  return envText(
    [`step ${step.index} of ${plan.steps.length} of ${plan.scenario}: written by scripts/labctl/cli.mjs plan, read by scripts/scenario.sh`],
    [
      ['index', step.index],
      ['total', plan.steps.length],
      ['id', step.id],
      ['label', step.label],
      ['config', step.config],
      ['listeners', step.config.replace(/\.cfg$/, '.listeners')],
      // reload or restart: a reload keeps the sockets, so a step that changes
      // them is a restart (cli.mjs plan, plan/listeners.mjs switchPlan).
      ['switch', step.switch ?? 'restart'],
      ['seconds', step.load.seconds],
      ['sample_at', Math.round(step.load.sample_at)],
      ['cpu_idle_seconds', step.load.cpu_idle_seconds ?? 0],
      ['tool', step.load.tool],
      ['service', tool.service],
      ['profile', tool.profile],
      ['replicas', step.load.replicas],
      // Beside the load (core/loadtools.mjs): the variable of a sysctl the
      // runner checks the clients' kernel has, and the host's CPU sampler.
      ['load_sysctl', tool.sysctl],
      ['host_sampler', tool.hostSampler ? 1 : 0],
      ['backends', Object.entries(step.backends).map(([k, v]) => `${k}=${v}`).join(',')],
      // --versus: the runner reads back which HAProxy ran (haproxy-build.env).
      ['haproxy_build', plan.options?.versus ? 1 : 0],
      ...Object.entries(load).map(([k, v]) => [`load.${k}`, v]),
      ...Object.entries(step.compose_env ?? {}).map(([k, v]) => [`compose.${k}`, v]),
      // The second method after the step (scripts/lib/second-method.sh second_method).
      ...Object.entries(step.check ?? {}).map(([k, v]) => [`check.${k}`, v]),
    ],
  );
}

// writeRunFolder OUT PLAN PREFLIGHT COMMAND: run.env and every step's step.env.
export function writeRunFolder(out, plan, preflight, command = '') {
  fs.mkdirSync(out, { recursive: true });
  if (preflight !== 'needed') {
    for (const step of plan.steps) {
      fs.mkdirSync(path.join(out, step.dir), { recursive: true });
      fs.writeFileSync(path.join(out, step.dir, 'step.env'), stepEnv(plan, step, out));
    }
  }
  // Last: the runner reads run.env once every step folder exists.
  fs.writeFileSync(path.join(out, 'run.env'), runEnv(plan, preflight, command));
}
