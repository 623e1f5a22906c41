// The engine's layout shows its flow: scripts/labctl/ is split by stage, and
// imports point one way, from a later stage to an earlier one (or within a
// stage), never back. Prints one line per import that runs back up and
// "N files, N imports back" last; exit 1 if any.
//   node tests/lib/import-stages.mjs [ROOT]   (ROOT: scripts/labctl)
// The stages, first to last: core (facts every stage shares: the topology,
// the load tools, the metrics, the expectation language), plan (scenario
// files to a run folder), run (checks the runner asks while a run goes),
// evidence (a run folder read back), report (rows, verdicts, tables, chart).
// cli.mjs sits above them all and may import any.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export const STAGES = ['core', 'plan', 'run', 'evidence', 'report'];

// stageOf PATH (relative to ROOT) → the stage's rank, or null outside them
// (cli.mjs, tests, code outside scripts/labctl).
export function stageOf(path) {
  const first = path.split('/')[0];
  const rank = STAGES.indexOf(first);
  return rank < 0 ? null : rank;
}

// importsOf TEXT → the relative specifiers of its static and dynamic imports
// and re-exports.
export function importsOf(text) {
  const specs = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)) {
    specs.push(m[1] ?? m[2]);
  }
  return specs;
}

// backImports ROOT → ["from → to (stage a imports later stage b)", ...] over
// every .mjs file of the stages (tests excluded).
export function backImports(root) {
  const found = [];
  let files = 0;
  for (const stage of STAGES) {
    for (const name of readdirSync(join(root, stage)).filter((n) => n.endsWith('.mjs'))) {
      files += 1;
      const from = `${stage}/${name}`;
      for (const spec of importsOf(readFileSync(join(root, from), 'utf8'))) {
        const to = normalize(join(dirname(from), spec));
        const rank = stageOf(to);
        if (rank === null && relative('.', to).startsWith('..')) continue; // outside scripts/labctl
        if (rank === null || rank > STAGES.indexOf(stage)) {
          found.push(`${from} imports ${to}: ${stage} comes before ${rank === null ? 'cli.mjs' : STAGES[rank]}`);
        }
      }
    }
  }
  return { files, found };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? 'scripts/labctl';
  const { files, found } = backImports(root);
  for (const line of found) console.log(line);
  console.log(`${files} files, ${found.length} imports back (stages: ${STAGES.join(' → ')})`);
  process.exitCode = found.length ? 1 : 0;
}
