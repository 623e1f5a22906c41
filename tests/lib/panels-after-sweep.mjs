// What a user reads on the dashboard after a maxconn-sweep run, checked
// against the run's own evidence (results/maxconn-sweep/<run>/):
//   - "Sweep: hits and failures per step" shows one bar pair per step of the
//     run, named, each bar equal to k6's own count for that step;
//   - the HAProxy series behind "Hits/sec against maxconn" have no gap longer
//     than two scrape intervals during a step that saturated maxconn, and its
//     maxconn line is the maxconn HAProxy ran each step with (show info);
//   - "Server sessions vs server limit" lists exactly the servers that have an
//     address (SERVERS_JSON: [["be_slow","slow1"], ...], from show stat).
//   node panels-after-sweep.mjs PROMETHEUS_URL RUN_DIR SERVERS_JSON DASHBOARD.json...
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { panelByTitle, prom, readDashboards, runTarget, substitute, tableRows, transform, variablesFor } from './grafana-queries.mjs';

const [prometheus, runDir, serversJson, ...files] = process.argv.slice(2);
const query = prom(prometheus);
const dashboards = readDashboards(files);
const failures = [];
const check = (ok, what, detail) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${detail}`);
  if (!ok) failures.push(what);
};

const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8'));
// When a step ran, as the runner wrote it: outcome.env (NAME=value lines;
// started_at_ms, ended_at_ms), or step.json in runs made before it.
const stepTimes = (dir) => {
  const outcome = join(runDir, 'steps', dir, 'outcome.env');
  if (!existsSync(outcome)) return JSON.parse(readFileSync(join(runDir, 'steps', dir, 'step.json'), 'utf8'));
  const value = (name) => Number(readFileSync(outcome, 'utf8').match(new RegExp(`^${name}=(\\d+)$`, 'm'))?.[1]);
  return { started_at_ms: value('started_at_ms'), ended_at_ms: value('ended_at_ms') };
};
const stepDirs = readdirSync(join(runDir, 'steps')).sort();
const steps = stepDirs.map((dir) => {
  const times = stepTimes(dir);
  const info = readFileSync(join(runDir, 'steps', dir, 'haproxy-info.txt'), 'utf8');
  return { dir, ...times, maxconn: Number(info.match(/^Maxconn: (\d+)/m)?.[1]) };
});
const runName = runDir.replace(/\/$/, '').split('/').pop();
const from = steps[0].started_at_ms;
const to = steps[steps.length - 1].ended_at_ms + 1000;
const scrapeSeconds = Number(readFileSync('prometheus/prometheus.yml', 'utf8').match(/scrape_interval:\s*(\d+)s/)[1]);

// --- the sweep bars ----------------------------------------------------------
{
  const panel = panelByTitle(dashboards, 'Sweep');
  const results = {};
  for (const target of panel.targets) results[target.refId] = await runTarget(query, target, from, to);
  const [rows] = transform(tableRows(results), panel.transformations);
  const fields = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  check(fields.every((f) => !/^Value/.test(f)), 'sweep fields are named', fields.join(', '));
  check(rows.length === summary.rows.length, 'one bar pair per step', `${rows.length} rows for ${summary.rows.length} steps`);
  for (const row of summary.rows) {
    const label = `${row.id} (${runName})`;
    const bar = rows.find((r) => r.step === label);
    const want = row.measured ?? { successful: 0, failed: 0 };
    const near = (got, expected) => Math.abs((got ?? 0) - expected) <= Math.max(2, 0.01 * expected);
    check(
      Boolean(bar) && near(bar.successful, want.successful) && near(bar.failed, want.failed),
      `bar "${label}"`,
      `${bar ? `successful ${bar.successful ?? 0}, failed ${bar.failed ?? 0}` : 'missing'} (k6 summaries: ${want.successful}, ${want.failed})`,
    );
  }
}

// --- gaps and maxconn on "Hits/sec against maxconn" -----------------------------
{
  const panel = panelByTitle(dashboards, 'Hits/sec against maxconn');
  const maxconn = panel.targets.find((t) => t.legendFormat === 'maxconn');
  // The steps whose maxconn is below the number of clients.
  const clients = Number(JSON.parse(readFileSync('scenarios/maxconn-sweep.json', 'utf8')).load.env.VUS);
  const saturated = steps.filter((s) => s.maxconn < clients);
  check(saturated.length > 0, 'steps that saturate maxconn', `${saturated.length} of ${steps.length} (maxconn below ${clients} clients)`);
  // A range selector over the whole step, evaluated at its end.
  const overStep = (expr, step) => `${expr}[${Math.ceil((step.ended_at_ms - step.started_at_ms) / 1000)}s]`;
  const samplesOf = async (expr, step) => {
    const result = await query(overStep(expr, step), { time: step.ended_at_ms });
    return result.flatMap((s) => s.values.map(([t]) => t * 1000)).sort((a, b) => a - b);
  };
  const maxGap = (times, step) => {
    const edges = [step.started_at_ms, ...times, step.ended_at_ms];
    return Math.max(...edges.slice(1).map((t, i) => t - edges[i])) / 1000;
  };
  // The stored series behind the HAProxy lines: the recording rule's
  // source, the rule itself, and the limit the maxconn line aggregates.
  const series = [
    'haproxy_frontend_http_requests_total{job="haproxy-exporter",frontend="fe_main"}',
    'lab:haproxy_fe_main_http_requests:rate30s',
    maxconn.expr.match(/\b(haproxy_\w+\{[^}]*\})/)[1],
  ];
  for (const step of saturated) {
    const peak = await query(`max_over_time(${overStep('haproxy_frontend_current_sessions{job="haproxy-exporter",frontend="fe_main"}', step)})`, { time: step.ended_at_ms });
    const held = Number(peak[0]?.value[1]);
    check(held >= step.maxconn, `${step.dir} saturated maxconn`, `fe_main held up to ${held} connections, maxconn ${step.maxconn}`);
    for (const expr of series) {
      const gap = maxGap(await samplesOf(expr, step), step);
      check(gap <= 2 * scrapeSeconds, `${step.dir} no gap in ${expr}`, `longest gap ${gap.toFixed(1)} s (allowed ${2 * scrapeSeconds} s)`);
    }
    const builtin = maxGap(await samplesOf('haproxy_frontend_http_requests_total{job="haproxy",proxy="fe_main"}', step), step);
    console.log(`info ${step.dir}: the built-in exporter's series (job haproxy) has a longest gap of ${builtin.toFixed(1)} s`);
    const line = await query(substitute(maxconn.expr, variablesFor(from, to)), { time: step.ended_at_ms - 2000 });
    check(Number(line[0]?.value[1]) === step.maxconn, `${step.dir} maxconn line`, `${line[0]?.value[1]} on the panel, ${step.maxconn} in show info`);
  }
}

// --- servers ---------------------------------------------------------------------
{
  const panel = panelByTitle(dashboards, 'Server sessions');
  const target = panel.targets.find((t) => /\{\{server\}\}/.test(t.legendFormat ?? ''));
  const want = JSON.parse(serversJson).map(([b, s]) => `${b}/${s}`).sort();
  const now = Date.now();
  const shown = (await runTarget(query, { ...target, instant: true }, now - 60_000, now)).map((s) => `${s.metric.backend}/${s.metric.server}`).sort();
  check(JSON.stringify(shown) === JSON.stringify(want), 'servers listed are the servers with an address', `panel: ${shown.join(' ')}; show stat: ${want.join(' ')}`);
}

console.log(failures.length === 0 ? 'every check passed' : `${failures.length} checks failed: ${failures.join('; ')}`);
process.exit(failures.length === 0 ? 0 : 1);
