// Proves the provisioned dashboards work: every panel query, with Grafana's
// template variables substituted, must return data from the lab's Prometheus,
// and every series of a time series must have the labels its legend names.
//   node panel-queries.mjs PROMETHEUS_URL FROM_MS TO_MS DASHBOARD.json...
// Run in a node container on the lab network after some load ran.
import { prom, readDashboards, runTarget } from './grafana-queries.mjs';

const [prometheus, fromMs, toMs, ...files] = process.argv.slice(2);
const query = prom(prometheus);
const to = Number(toMs);
// At least a minute, as a user's time picker would show.
const from = Math.min(Number(fromMs), to - 60_000);

// Labels a legend names ({{backend}}) that a series lacks: Grafana draws
// them as empty strings, so the series would be unnamed or look alike.
function missingLegendLabels(target, series) {
  const wanted = [...(target.legendFormat ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]);
  return wanted.filter((label) => series.some((s) => s.metric[label] === undefined));
}

let failures = 0;
let total = 0;
for (const { dashboard, panels } of readDashboards(files)) {
  for (const panel of panels) {
    for (const target of panel.targets ?? []) {
      total += 1;
      const name = `${dashboard.uid} / "${panel.title}" / ${target.refId}`;
      try {
        const result = await runTarget(query, target, from, to);
        const samples = result.reduce((n, s) => n + (s.values ? s.values.length : 1), 0);
        if (samples === 0) throw new Error('no data');
        const missing = target.instant ? [] : missingLegendLabels(target, result);
        if (missing.length > 0) throw new Error(`legend "${target.legendFormat}" names ${missing.join(', ')}, which the series lack`);
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
