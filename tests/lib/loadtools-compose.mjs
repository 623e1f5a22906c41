// The table of load tools (scripts/labctl/core/loadtools.mjs) against compose.yaml
// (`docker compose --profile '*' config --format json` on stdin, run with
// every variable the tools read set twice: to "from-the-shell" in compose's
// environment, to "from-load-env-file" in the file LOAD_ENV_FILE names).
// Each tool's service and profile exist, and its container gets every
// variable the tool reads from the file alone: none from the shell (an
// `environment:` entry "- NAME" would pass the caller's through), none set
// to a value of compose.yaml's own (the tool has the default). Prints one
// line per difference; exit 1 if any.
//   node tests/lib/loadtools-compose.mjs --names   (the variables, one a line)
import { readFileSync } from 'node:fs';
import { LOAD_TOOLS } from '../../scripts/labctl/core/loadtools.mjs';

export const FROM_FILE = 'from-load-env-file';
export const FROM_SHELL = 'from-the-shell';
const names = [...new Set(Object.values(LOAD_TOOLS).flatMap((t) => t.reads))].sort();

if (process.argv[2] === '--names') {
  console.log(names.join('\n'));
} else {
  const services = JSON.parse(readFileSync(0, 'utf8')).services;
  const problems = [];
  for (const [name, tool] of Object.entries(LOAD_TOOLS)) {
    const service = services[tool.service];
    if (!service) { problems.push(`${name}: compose has no service "${tool.service}"`); continue; }
    if (!(service.profiles ?? []).includes(tool.profile)) {
      problems.push(`${name}: service ${tool.service} has profiles ${JSON.stringify(service.profiles ?? [])}, the table says "${tool.profile}"`);
    }
    const env = service.environment ?? {};
    const leaked = Object.keys(env).filter((k) => env[k] === FROM_SHELL || env[k] === null).sort();
    const missing = tool.reads.filter((k) => !(k in env));
    const fixed = tool.reads.filter((k) => k in env && ![FROM_FILE, FROM_SHELL, null].includes(env[k]));
    if (leaked.length) problems.push(`${name}: ${tool.service} takes ${leaked.join(', ')} from the shell: drop the "- NAME" entries, the tool's knobs come from LOAD_ENV_FILE alone`);
    if (missing.length) problems.push(`${name}: ${tool.service} does not get ${missing.join(', ')} from LOAD_ENV_FILE (env_file: \${LOAD_ENV_FILE:?...}), which the table says the tool reads`);
    if (fixed.length) problems.push(`${name}: ${tool.service} sets ${fixed.join(', ')} to a value: leave it to LOAD_ENV_FILE, the tool has the default`);
  }
  for (const p of problems) console.log(p);
  if (problems.length === 0) console.log(`load tools take their ${names.length} knobs from LOAD_ENV_FILE alone: ${Object.keys(LOAD_TOOLS).join(', ')}`);
  process.exitCode = problems.length ? 1 : 0;
}
