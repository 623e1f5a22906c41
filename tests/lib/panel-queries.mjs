// Proves the provisioned dashboards work: every panel query, with Grafana's
// template variables substituted, must return data from the lab's Prometheus.
//   node panel-queries.mjs PROMETHEUS_URL FROM_MS TO_MS DASHBOARD.json...
// Run in a node container on the lab network after some load ran.
import { readFileSync } from 'node:fs';

const [prometheus, fromMs, toMs, ...files] = process.argv.slice(2);
const seconds = Math.max(60, Math.round((Number(toMs) - Number(fromMs)) / 1000));
// What Grafana would put in: All for $testid, the range of the time picker.
const variables = { testid: '.+', __rate_interval: '30s', __interval: '15s', __range: `${seconds}s` };

function substitute(expr) {
  return expr.replace(/\$\{?(\w+)\}?/g, (m, name) => {
    if (!(name in variables)) throw new Error(`unknown variable ${m} in ${expr}`);
    return variables[name];
  });
}

async function query(expr, instant) {
  const params = instant
    ? new URLSearchParams({ query: expr, time: String(Number(toMs) / 1000) })
    : new URLSearchParams({ query: expr, start: String(Number(fromMs) / 1000), end: String(Number(toMs) / 1000), step: '15' });
  const res = await fetch(`${prometheus}/api/v1/${instant ? 'query' : 'query_range'}?${params}`);
  const body = await res.json();
  if (body.status !== 'success') throw new Error(`${body.errorType}: ${body.error}`);
  return body.data.result;
}

let failures = 0;
let total = 0;
for (const file of files) {
  const dashboard = JSON.parse(readFileSync(file, 'utf8'));
  const panels = (dashboard.panels ?? []).flatMap((p) => (p.type === 'row' ? p.panels ?? [] : [p]));
  for (const panel of panels) {
    for (const target of panel.targets ?? []) {
      total += 1;
      const name = `${dashboard.uid} / "${panel.title}" / ${target.refId}`;
      try {
        const result = await query(substitute(target.expr), target.instant === true);
        const samples = result.reduce((n, s) => n + (s.values ? s.values.length : 1), 0);
        if (samples === 0) throw new Error('no data');
        console.log(`ok   ${name}: ${result.length} series, ${samples} samples`);
      } catch (err) {
        failures += 1;
        console.log(`FAIL ${name}: ${err.message}\n     ${target.expr}`);
      }
    }
  }
}
console.log(`${total - failures} of ${total} panel queries returned data`);
process.exit(failures === 0 && total > 0 ? 0 : 1);
