// Validates provisioned Grafana files given as arguments: each dashboard is
// valid JSON with a fixed uid, and every Prometheus datasource it names is the
// provisioned one (fixed uid), so a panel never points at a missing source.
import { readFileSync } from 'node:fs';

const DATASOURCE_UID = process.env.DATASOURCE_UID ?? 'prometheus';
const problems = [];

function datasources(node, found = []) {
  if (Array.isArray(node)) node.forEach((n) => datasources(n, found));
  else if (node && typeof node === 'object') {
    if (node.datasource && typeof node.datasource === 'object') found.push(node.datasource);
    Object.values(node).forEach((n) => datasources(n, found));
  }
  return found;
}

for (const file of process.argv.slice(2)) {
  let dashboard;
  try {
    dashboard = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    problems.push(`${file}: not valid JSON (${err.message})`);
    continue;
  }
  if (!dashboard.uid) problems.push(`${file}: no fixed uid`);
  if (!dashboard.title) problems.push(`${file}: no title`);
  for (const ds of datasources(dashboard)) {
    if (ds.type === 'prometheus' && ds.uid !== DATASOURCE_UID) {
      problems.push(`${file}: datasource uid "${ds.uid}" is not the provisioned "${DATASOURCE_UID}"`);
    }
  }
}
for (const p of problems) console.log(p);
if (problems.length > 0) process.exit(1);
console.log(`${process.argv.length - 2} dashboards valid`);
