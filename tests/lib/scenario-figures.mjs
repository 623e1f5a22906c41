// The guard on what scenario runs are judged against: each scenario's
// published figures and tolerances, digested (sha256) into
// tests/fixtures/scenario-figures.json. Changing them changes what the e2e
// tests that run the scenario prove (they assert only what no verdict does,
// and that every verdict passes), so the change fails here until the fixture
// is changed with it, in the same commit as those tests: the failure names
// them. What is digested (figures()): each step's "published", "expect" and
// "model", connections.past_the_wall's "expect", the scenario's "model",
// "littles_law" and "ratio_to", its readings but their labels, and its
// comparisons. Notes, labels, loads and settings are not: a verdict reads
// none of them as a figure.
// Scenarios: scenarios/NAME.json and the lessons' checks, lessons/checks/NAME.json.
//   node tests/lib/scenario-figures.mjs   one line per difference; exit 1 if any
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { listLessonChecks, listScenarios, scenarioFile } from '../../scripts/labctl/plan/scenarios.mjs';

export const FIXTURE = 'tests/fixtures/scenario-figures.json';

// figures SCENARIO: what its verdicts and readings judge against, as above.
export function figures(s) {
  const steps = Object.fromEntries((s.steps ?? [])
    .filter((t) => t.published || t.expect || t.model)
    .map((t) => [t.id, { published: t.published, expect: t.expect, model: t.model }]));
  return {
    steps,
    past_the_wall: s.connections?.past_the_wall?.expect,
    model: s.model,
    littles_law: s.littles_law,
    ratio_to: s.ratio_to,
    readings: (s.readings ?? []).map(({ label, ...reading }) => reading),
    comparisons: s.comparisons,
  };
}

// canonical VALUE: JSON with every object's keys sorted and undefined left
// out, so that reordering or reformatting a file digests the same.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const digest = (s) => createHash('sha256').update(canonical(figures(s))).digest('hex');

// testsOf ROOT: { scenario: ["TEST (FILE, tests/e2e/checks/CHECK.test.mjs)", ...] }:
// the e2e-tier tests (tests/e2e*.sh, tests/swarm.sh: the groups that run
// scenarios on a lab) that run a scenario: scenario_judged CHECK NAME,
// scripts/scenario.sh NAME and its own e2e_check, or the swarm group's
// judged_as_on_one_host NAME (its check: swarm-equals-one-host).
export function testsOf(root) {
  const found = {};
  for (const file of readdirSync(join(root, 'tests')).filter((f) => /^(e2e|swarm)[a-z-]*\.sh$/.test(f)).sort()) {
    let fn = null;
    let checks = [];
    const names = [];
    const flush = () => {
      for (const name of names) (found[name] ??= []).push(`${fn} (tests/${file}${checks.map((c) => `, tests/e2e/checks/${c}.test.mjs`).join('')})`);
      names.length = 0;
      checks = [];
    };
    for (const line of readFileSync(join(root, 'tests', file), 'utf8').split('\n')) {
      // Each function's lines are its own: a helper's are no test's.
      const start = /^([a-z_][a-z0-9_]*)\(\) \{/.exec(line);
      if (start) { flush(); fn = start[1].startsWith('test_') ? start[1] : null; continue; }
      if (!fn) continue;
      const judged = /\bscenario_judged ([a-z0-9-]+) ([a-z0-9-]+)/.exec(line);
      const onSwarm = /\bjudged_as_on_one_host ([a-z0-9-]+)/.exec(line);
      const ran = /\bscripts\/scenario\.sh ([a-z0-9-]+)/.exec(line);
      const check = /\be2e_check ([a-z0-9-]+)/.exec(line);
      if (judged) { checks.push(judged[1]); names.push(judged[2]); }
      if (onSwarm) { checks.push('swarm-equals-one-host'); names.push(onSwarm[1]); }
      if (ran && !names.includes(ran[1])) names.push(ran[1]);
      if (check) checks.push(check[1]);
    }
    flush();
  }
  for (const name of Object.keys(found)) found[name] = [...new Set(found[name])];
  return found;
}

// dependents NAME TESTS: the tests to change with NAME's figures.
function dependents(name, tests) {
  const lesson = /^lesson-(\d\d-[a-z0-9-]+)$/.exec(name);
  if (lesson) {
    return [`lessons_${lesson[1].replace(/-/g, '_')} (tests/e2e-lessons.sh: lessons/start/${lesson[1]}.json must fail the check, lessons/solutions/${lesson[1]}.json pass it)`];
  }
  return tests[name] ?? ['none found: grep tests/*.sh for the scenario'];
}

// check ROOT: one line per scenario whose figures differ from the fixture's
// digest, per scenario the fixture lacks and per fixture entry no scenario has.
export function check(root) {
  const fixture = JSON.parse(readFileSync(join(root, FIXTURE), 'utf8')).scenarios;
  const tests = testsOf(root);
  const problems = [];
  const names = [...listScenarios(root), ...listLessonChecks(root)];
  for (const name of names) {
    const file = scenarioFile(name);
    const found = digest(JSON.parse(readFileSync(join(root, file), 'utf8')));
    const then = `: update ${FIXTURE} ("${name}": "${found}") and, in the same change, the e2e test that runs it: ${dependents(name, tests).join('; ')}`;
    if (!(name in fixture)) problems.push(`${file}: a scenario the fixture does not know, digest ${found}${then}`);
    else if (fixture[name] !== found) problems.push(`${file}: its published figures or tolerances changed: digest expected ${fixture[name]}, found ${found}${then}`);
  }
  for (const name of Object.keys(fixture).filter((n) => !names.includes(n))) {
    problems.push(`${FIXTURE}: "${name}" is no scenario (scenarios/*.json, lessons/checks/*.json): remove it`);
  }
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = process.cwd();
  const problems = check(root);
  for (const p of problems) console.log(p);
  if (problems.length === 0) console.log(`scenario figures as ${FIXTURE} has them: ${Object.keys(JSON.parse(readFileSync(join(root, FIXTURE), 'utf8')).scenarios).length} scenarios`);
  process.exitCode = problems.length ? 1 : 0;
}
