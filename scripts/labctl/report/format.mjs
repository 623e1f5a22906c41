// A report as text: the terminal table (article style), summary.csv and
// report.md. Pure functions of the report object (summary.json's content).
import { TOPOLOGY } from '../core/topology.mjs';
import { CPU_COST_METRICS, CSV_METRICS, LONG_LIVED_METRICS, formatValue, metricLabel, scalar } from '../core/metrics.mjs';
import { hasTimeSeries } from './chart-time.mjs';

// The table's cells: header (metric names), sub-header, one line per step.
function tableCells(report) {
  const cols = report.columns;
  return {
    groups: cols.map((m) => metricLabel(m, report)),
    head: ['step', ...cols.flatMap(() => ['published', 'measured']), 'verdict'],
    body: report.rows.map((row) => [
      row.label,
      ...cols.flatMap((m) => [
        formatValue(m, scalar(row.published, m)),
        row.measured ? formatValue(m, scalar(row.measured, m)) : '-',
      ]),
      row.verdict,
    ]),
  };
}

function titleOf(report) {
  return `${report.scenario} — ${report.description}${report.incomplete ? ' (INCOMPLETE)' : ''}`;
}

function sourceOf(report) {
  const s = report.source;
  if (!s) return null;
  return [s.title, [s.author, s.year].filter(Boolean).join(', ')].filter(Boolean).join(' — ');
}

// Lines under the table: how rows aggregate, comparisons, readings, notes, incomplete.
function footer(report) {
  const lines = [];
  const repeated = report.rows.some((r) => r.planned > 1);
  if (repeated) lines.push('measured = mean over the runs of each step (see summary.json for min/max)');
  for (const c of report.comparisons) lines.push(c.text);
  for (const line of report.readings ?? []) lines.push(line);
  for (const note of report.notes) lines.push(note);
  const failed = report.rows.filter((r) => r.verdict.startsWith('FAIL')).length;
  lines.push(report.ok ? 'result: ok' : `result: FAIL (${failed} step${failed > 1 ? 's' : ''})`);
  if (report.incomplete) lines.push(`INCOMPLETE: ${report.incomplete}`);
  return lines;
}

// formatTable REPORT → the terminal table, article style.
export function formatTable(report) {
  const { groups, head, body } = tableCells(report);
  const lines = [head, ...body];
  const width = head.map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  // A metric's name spans its two sub-columns: widen "published" if the name is longer.
  groups.forEach((g, k) => {
    const [p, m] = [1 + 2 * k, 2 + 2 * k];
    const missing = g.length - (width[p] + 2 + width[m]);
    if (missing > 0) width[p] += missing;
  });
  const last = head.length - 1;
  const pad = (text, i) => (i === 0 || i === last ? String(text).padEnd(width[i]) : String(text).padStart(width[i]));
  const line = (cells) => cells.map(pad).join('  ').trimEnd();
  const groupLine = [' '.repeat(width[0]), ...groups.map((g, k) => {
    const span = width[1 + 2 * k] + 2 + width[2 + 2 * k];
    return g.padStart(Math.floor((span + g.length) / 2)).padEnd(span);
  })].join('  ').trimEnd();
  const out = [titleOf(report)];
  const source = sourceOf(report);
  if (source) out.push(`source: ${source}`);
  out.push('', groupLine, line(head), width.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), '');
  return [...out, ...footer(report)].join('\n');
}

const csvField = (v) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

// Plain numbers in the CSV, rounded to keep it readable.
const csvNumber = (v) => (v === null || v === undefined ? '' : Number(v.toFixed(3)));

// toCSV REPORT → one line per step, published and measured for every metric.
export function toCSV(report) {
  const metrics = [...new Set([...report.columns, ...CSV_METRICS])];
  const header = ['step', 'label', 'x', 'runs', ...metrics.flatMap((m) => [`${m}_published`, `${m}_measured`]), 'verdict'];
  const rows = report.rows.map((row) => [
    row.id, row.label, row.x, row.runs,
    ...metrics.flatMap((m) => [csvNumber(scalar(row.published, m)), csvNumber(scalar(row.measured, m))]),
    row.verdict,
  ]);
  return `${[header, ...rows].map((r) => r.map(csvField).join(',')).join('\n')}\n`;
}

const mdCell = (s) => String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

// A fence longer than any backtick run inside the text.
function fenced(text, lang) {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text.replace(/\n$/, '')}\n${fence}`;
}

const VERSION_NAMES = { haproxy: 'HAProxy', k6: 'k6', node: 'Node.js', cpu: 'CPUs' };

// "after 1 s: 12, 2 s: 9" from {N: count} (connects of 1 s or more).
export function formatWaits(waits) {
  const late = Object.entries(waits ?? {}).map(([k, v]) => [Number(k), v]).filter(([k]) => k >= 1).sort((a, b) => a[0] - b[0]);
  return late.length ? late.map(([k, v]) => `${k} s: ${v}`).join(', ') : 'none';
}

function acceptQueueDetails(m) {
  const f = (metric) => formatValue(metric, m[metric]);
  const first = TOPOLOGY.frontends[0];
  const out = [`- accept queue of ${first.name} :${first.port}: backlog (ss) ${f('backlog')}, longest queue sampled ${f('accept_queue_max')}; ` +
    `HAProxy's kernel: listen overflows ${f('listen_overflows')}, listen drops ${f('listen_drops')}, SYN cookies sent ${f('syncookies')}`];
  if (m.syn_retrans !== null || m.connect_waits) {
    const settings = Object.entries(m.client_sysctl ?? {}).map(([k, v]) => `${k} ${v}`).join(', ');
    out.push(`- clients: SYN retransmits ${f('syn_retrans')}; connects that took about N s: ${formatWaits(m.connect_waits)}` +
      `${settings ? ` (clients' kernel: ${settings})` : ''}`);
  }
  return out;
}

// With several HAProxy instances, a line with each one's own figures (the
// line above adds them up).
function instanceDetails(m) {
  if (!m.instances) return [];
  const n = (v) => (v === null || v === undefined ? '-' : String(v));
  return [`- HAProxy by instance: ${Object.entries(m.instances).map(([name, i]) => `${name}: maxconn reached ${n(i.maxconn_reached)}, ` +
    `max sessions ${n(i.max_sessions)}, errors ${n(i.errors)}, connections peak ${n(i.haproxy_conns_peak)}`).join('; ')}`];
}

// latencyText MEASURED: the step's latency percentiles and what they are of
// (evidence/percentiles.mjs percentiles_from).
export function latencyText(m) {
  const figures = (v) => `${formatValue('p50_ms', v.p50_ms)}/${formatValue('p95_ms', v.p95_ms)}/${formatValue('p99_ms', v.p99_ms)} ms`;
  if (m.percentiles_from === 'one replica') return `latency p50/p95/p99 ${figures(m)} (one replica: its own)`;
  if (m.percentiles_from === 'replicas apart') {
    return `latency p50/p95/p99 of all replicas' requests - (no latency histograms in this evidence; the worst replica's own: ${figures(m.worst_replica_ms ?? {})})`;
  }
  return `latency p50/p95/p99 of all replicas' requests ${figures(m)}`;
}

// The measured step's lines: load, HAProxy, accept queue, containers, verdicts.
function measuredDetails(row) {
  const m = row.measured;
  const f = (metric) => formatValue(metric, m[metric]);
  const out = [
    `- load: ${f('requests')} requests, ${f('successful')} successful, ${f('failed')} failed in ${f('seconds')} s = ${f('hits_per_sec')} hits/sec; ${latencyText(m)}`,
    `- HAProxy: maxconn reached ${f('maxconn_reached')}, max sessions ${f('max_sessions')}, max queue ${f('max_queue')}, errors ${f('errors')}`,
    ...instanceDetails(m),
    ...acceptQueueDetails(m),
  ];
  for (const note of m.notes ?? []) out.push(`- note: ${note}`);
  const cpu = m.cpu ? Object.entries(m.cpu).map(([name, v]) => `${name} ${v.toFixed(1)}%`).join(', ') : '';
  out.push(`- CPU by container (cgroup CPU time ÷ the step's time, % of one core): ${cpu || '-'}`);
  if (m.saturation) out.push(`- saturated: ${m.saturation.saturated.join(', ') || 'nothing'} — ${m.saturation.text}`);
  for (const group of [LONG_LIVED_METRICS, CPU_COST_METRICS]) {
    const shown = group.filter((k) => m[k] !== null && m[k] !== undefined && typeof m[k] === 'number');
    if (shown.length) out.push(`- ${shown.map((k) => `${metricLabel(k)} ${formatValue(k, m[k])}`).join(', ')}`);
  }
  const mib = (v) => (v === null ? '-' : `${(v / 1024 ** 2).toFixed(1)} MiB`);
  if (m.memory) out.push(`- memory by container (before → during the load): ${Object.entries(m.memory).map(([n, v]) => `${n} ${mib(v.before)} → ${mib(v.peak)}`).join(', ')}`);
  if (m.haproxy_alerts?.length) out.push(`- HAProxy said: ${m.haproxy_alerts.map((l) => `\`${l.trim()}\``).join('; ')}`);
  if (row.failures && Object.keys(row.failures).length) out.push(`- client failures by reason: ${Object.entries(row.failures).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (Object.keys(row.model ?? {}).length) out.push(`- model: ${Object.entries(row.model).map(([k, v]) => `${k} ${formatValue(k, v)}`).join(', ')}`);
  for (const [metric, v] of Object.entries(row.verdicts)) {
    const result = v.info ? (v.ok ? 'as article' : 'unlike article') : (v.ok ? 'pass' : 'FAIL');
    out.push(`- ${metric} ${v.expect}: ${result}, ${v.text}`);
  }
  return out;
}

// lineDiff A B → the lines of B that differ from A, as a unified diff's body
// without context ("-" from A, "+" from B, "@@ line N" where a change starts):
// the longest common subsequence of the two lists of lines.
export function lineDiff(a, b) {
  const x = a.replace(/\n$/, '').split('\n');
  const y = b.replace(/\n$/, '').split('\n');
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint16Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i -= 1) {
    for (let j = y.length - 1; j >= 0; j -= 1) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const out = [];
  let i = 0;
  let j = 0;
  let inHunk = false;
  const mark = (line) => {
    if (!inHunk) out.push(`@@ line ${j + 1}`);
    inHunk = true;
    out.push(line);
  };
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      i += 1; j += 1; inHunk = false;
    } else if (j < y.length && (i === x.length || lcs[i][j + 1] > lcs[i + 1][j])) {
      mark(`+${y[j]}`); j += 1;
    } else {
      mark(`-${x[i]}`); i += 1;
    }
  }
  return out;
}

// The step's HAProxy configs. The first one the report meets is shown whole;
// the others as their changes to it, since steps differ by a few lines (a
// 42-step report repeated 300 lines a step). Repeated runs usually share one
// config: each distinct text is shown once.
function configDetails(row, configs, shown) {
  const texts = new Map();
  for (const r of row.per_run) {
    const text = configs[r.dir] ?? (r.config ? configs[r.config] : undefined);
    if (typeof text !== 'string') continue;
    if (!texts.has(text)) texts.set(text, []);
    texts.get(text).push(r);
  }
  return [...texts].flatMap(([text, runs]) => {
    const which = texts.size > 1 || runs.length < row.per_run.length ? ` (run ${runs.map((r) => r.run).join(', ')})` : '';
    const name = `\`${runs[0].config ?? runs[0].dir}\``;
    if (!shown.first) {
      shown.first = { text, name };
      return ['', `HAProxy config${which}, ${name}:`, '', fenced(text, 'haproxy')];
    }
    const diff = lineDiff(shown.first.text, text);
    if (!diff.length) return ['', `HAProxy config${which}, ${name}: the same as ${shown.first.name}.`];
    return ['', `HAProxy config${which}, ${name}: ${shown.first.name} with these lines changed:`, '', fenced(diff.join('\n'), 'diff')];
  });
}

// A step's details, folded under its label and verdict.
function stepDetails(row, configs, shown) {
  const runs = row.per_run.map((r) => r.dir).join(', ');
  return [
    `<details><summary><b>${escapeHtml(row.label)}</b> (<code>${escapeHtml(row.id)}</code>): ${escapeHtml(row.verdict)}</summary>`, '',
    `- runs: ${row.runs} of ${row.planned} (${runs})`,
    ...(row.measured ? measuredDetails(row) : []),
    ...configDetails(row, configs, shown),
    '', '</details>',
  ];
}

const escapeHtml = (v) => String(v).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

// Each reading under its own heading. A report read back from summary.json
// has only the readings' lines (readingSections is not saved): one heading.
function readingsMarkdown(report) {
  const sections = report.readingSections
    ?? (report.readings?.length ? [{ title: 'Readings', lines: report.readings }] : []);
  const out = [];
  let title = null;
  for (const s of sections.filter((x) => x.lines.length || x.table)) {
    // A reading per curve shares its title: one heading over them.
    if (s.title !== title) out.push(`## ${s.title}`, '');
    title = s.title;
    out.push(...(s.table ? [...markdownTable(s.table), ''] : []), ...s.lines.map((line) => `- ${line}`), '');
  }
  return out;
}

// markdownTable [HEADER, ...ROWS] (arrays of cells; the first column left,
// the others right-aligned) → its lines.
export function markdownTable([header, ...rows]) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)];
}

// The top of report.md: title, source, command, versions, incomplete.
function preamble(report, { versions, command }) {
  const out = [`# ${titleOf(report)}`, ''];
  const source = sourceOf(report);
  if (source) {
    const seed = report.source.seed ? ` (seed \`${report.source.seed}\`)` : '';
    out.push(`Source: ${source}${seed}`, '');
  }
  if (command) out.push('Command:', '', fenced(command, 'sh'), '');
  const v = Object.entries(versions ?? {}).filter(([, value]) => value);
  if (v.length) out.push(`Versions: ${v.map(([k, value]) => `${VERSION_NAMES[k] ?? k} ${value}`).join(', ')}`, '');
  if (report.incomplete) out.push(`**INCOMPLETE:** ${report.incomplete}`, '');
  return out;
}

// The preflight's limits (connection scenarios): what binds first, what
// would run out next and at which level, the wall a lesson's run went past.
function limitsMarkdown(report) {
  const l = report.limits;
  if (!l) return [];
  // JSON keeps no Infinity: a limit that allows any count is null.
  const count = (v) => (v === null ? 'no limit' : String(v));
  const value = (c) => (/memory/.test(c.limit) && c.value > 0 ? `${(c.value / 1024 ** 3).toFixed(1)} GiB` : count(c.value));
  const out = ['## Limits (preflight)', '', '| limit | value | connections it allows | |', '| --- | ---: | ---: | --- |'];
  for (const c of l.caps) {
    const mark = c.limit === l.binding ? 'binds first' : c.limit === l.next?.limit ? 'next' : '';
    out.push(`| ${mdCell(c.limit)} | ${mdCell(value(c))} | ${mdCell(count(c.allows))} | ${mark} |`);
  }
  out.push('', `Target ${l.target}; the largest that fits is ${l.largest}, bound by ${l.binding}`
    + `${l.next ? `; next to run out: ${l.next.limit}, at ${l.next.allows}` : ''}.`);
  if (l.wall) {
    out.push('', `Past the wall: ${l.processes} HAProxy process${l.processes === 1 ? '' : 'es'} (--processes) plan for ${l.wall}; `
      + 'a level above it is judged by where HAProxy stopped (maxconn reached, the rest in the accept queue), not by holding it all.');
  }
  return [...out, ''];
}

// The charts writeOutputs writes beside report.md.
function chartsMarkdown(report) {
  const out = ['## Charts', '', `![${report.scenario}: the steps against ${report.x?.label ?? 'step'}](chart.svg)`];
  if (hasTimeSeries(report)) out.push('', `![${report.scenario}: connections over time, each step from its start](chart-time.svg)`);
  return [...out, ''];
}

// resultsTable REPORT → the measured-vs-published table's Markdown lines
// (report.md's, and the docs' generated copies of it).
export function resultsTable(report) {
  const { groups, body } = tableCells(report);
  const head = ['step', ...groups.flatMap((g) => [`${g} published`, `${g} measured`]), 'verdict'];
  const align = head.map((_, i) => (i === 0 || i === head.length - 1 ? '---' : '---:'));
  return [head, align, ...body].map((r) => `| ${r.map(mdCell).join(' | ')} |`);
}

// toMarkdown REPORT {configs, versions, command} → report.md.
export function toMarkdown(report, { configs = {}, versions = {}, command = '' } = {}) {
  const out = preamble(report, { versions, command });
  out.push('## Results', '', ...resultsTable(report));
  out.push('', `Result: ${report.ok ? 'ok' : 'FAIL'}`, '');
  out.push(...chartsMarkdown(report));
  out.push(...limitsMarkdown(report));
  if (report.comparisons.length) out.push('## Comparisons', '', ...report.comparisons.map((c) => `- ${c.text}`), '');
  out.push(...readingsMarkdown(report));
  if (report.notes.length) out.push('## Notes', '', ...report.notes.map((n) => `- ${n}`), '');
  out.push('## Steps', '', 'Each step\'s measurements and HAProxy config, folded: open a step to read it.', '');
  const shown = {};
  for (const row of report.rows) out.push(...stepDetails(row, configs, shown), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
