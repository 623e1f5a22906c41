// The table of load tools (scripts/lab/core/loadtools.mjs) against compose.yaml
// (`docker compose --profile '*' config --format json` on stdin): each tool's
// service and profile exist, and the service passes through exactly the
// variables the tool reads, by name (no value, no fallback: the tool's own
// defaults apply). Prints one line per difference; exit 1 if any.
import { readFileSync } from 'node:fs';
import { LOAD_TOOLS } from '../../scripts/lab/core/loadtools.mjs';

const services = JSON.parse(readFileSync(0, 'utf8')).services;
const problems = [];
for (const [name, tool] of Object.entries(LOAD_TOOLS)) {
  const service = services[tool.service];
  if (!service) { problems.push(`${name}: compose has no service "${tool.service}"`); continue; }
  if (!(service.profiles ?? []).includes(tool.profile)) {
    problems.push(`${name}: service ${tool.service} has profiles ${JSON.stringify(service.profiles ?? [])}, the table says "${tool.profile}"`);
  }
  // Unset pass-through names come out of compose config as null.
  const env = service.environment ?? {};
  const passed = Object.keys(env).filter((k) => env[k] === null).sort();
  const reads = [...tool.reads].sort();
  const missing = reads.filter((k) => !passed.includes(k));
  const extra = passed.filter((k) => !reads.includes(k));
  const fixed = reads.filter((k) => k in env && env[k] !== null);
  if (missing.length) problems.push(`${name}: ${tool.service} does not pass through ${missing.join(', ')} (the table says the tool reads them)`);
  if (extra.length) problems.push(`${name}: ${tool.service} passes through ${extra.join(', ')}, which the table does not list`);
  if (fixed.length) problems.push(`${name}: ${tool.service} sets ${fixed.join(', ')} to a value: pass the name through, the tool has the default`);
}
for (const p of problems) console.log(p);
if (problems.length === 0) console.log(`load tools match compose: ${Object.keys(LOAD_TOOLS).join(', ')}`);
process.exitCode = problems.length ? 1 : 0;
