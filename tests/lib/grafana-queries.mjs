// What Grafana does with a panel's Prometheus queries, for tests that check
// what a user would read: substitute the template variables, ask Prometheus
// (range or instant, as the target says), turn instant table results into
// fields named as Grafana names them ("Value #A"), and apply the panel's
// merge and organize transformations.
import { readFileSync } from 'node:fs';

export function readDashboards(files) {
  return files.map((file) => {
    const dashboard = JSON.parse(readFileSync(file, 'utf8'));
    const panels = (dashboard.panels ?? []).flatMap((p) => (p.type === 'row' ? p.panels ?? [] : [p]));
    return { file, dashboard, panels };
  });
}

export function panelByTitle(dashboards, prefix) {
  const panel = dashboards.flatMap((d) => d.panels).find((p) => (p.title ?? '').startsWith(prefix));
  if (!panel) throw new Error(`no panel titled "${prefix}..." in ${dashboards.map((d) => d.file).join(', ')}`);
  return panel;
}

// Grafana's variables for a time range [fromMs, toMs], All for $testid.
export function variablesFor(fromMs, toMs) {
  const seconds = Math.max(1, Math.round((toMs - fromMs) / 1000));
  return { testid: '.+', __rate_interval: '30s', __interval: '15s', __range: `${seconds}s` };
}

export function substitute(expr, variables) {
  return expr.replace(/\$\{?(\w+)\}?/g, (m, name) => {
    // $1, $2: label_replace's capture groups, which Grafana leaves alone.
    if (/^\d+$/.test(name)) return m;
    if (!(name in variables)) throw new Error(`unknown variable ${m} in ${expr}`);
    return variables[name];
  });
}

// prom(url) → query(expr, {time}) or query(expr, {start, end, step}), in ms.
export function prom(url) {
  return async function query(expr, at) {
    const params = at.time !== undefined
      ? new URLSearchParams({ query: expr, time: String(at.time / 1000) })
      : new URLSearchParams({ query: expr, start: String(at.start / 1000), end: String(at.end / 1000), step: String(at.step ?? 15) });
    const res = await fetch(`${url}/api/v1/${at.time !== undefined ? 'query' : 'query_range'}?${params}`);
    const body = await res.json();
    if (body.status !== 'success') throw new Error(`${body.errorType}: ${body.error} (${expr})`);
    return body.data.result;
  };
}

// A target as Grafana runs it over [fromMs, toMs]: instant at the end of the
// range, or a range query.
export function runTarget(query, target, fromMs, toMs) {
  const expr = substitute(target.expr, variablesFor(fromMs, toMs));
  return target.instant === true ? query(expr, { time: toMs }) : query(expr, { start: fromMs, end: toMs });
}

// Instant table results as rows: one row per series, its labels as fields,
// the value as "Value" (one query) or "Value #<refId>" (several), as Grafana.
export function tableRows(resultsByRef) {
  const refs = Object.keys(resultsByRef);
  return refs.map((ref) =>
    resultsByRef[ref].map((s) => {
      const { __name__: _name, ...labels } = s.metric;
      return { Time: s.value[0] * 1000, ...labels, [refs.length > 1 ? `Value #${ref}` : 'Value']: Number(s.value[1]) };
    }),
  );
}

// Grafana's "merge": rows of several frames that agree on every field but the
// values become one row.
function merge(frames) {
  const rows = new Map();
  for (const row of frames.flat()) {
    const key = JSON.stringify(Object.entries(row).filter(([k]) => !k.startsWith('Value') && k !== 'Time').sort());
    rows.set(key, { ...(rows.get(key) ?? {}), ...row });
  }
  return [[...rows.values()]];
}

function organize(frames, options) {
  const exclude = options.excludeByName ?? {};
  const rename = options.renameByName ?? {};
  return frames.map((rows) =>
    rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !exclude[k]).map(([k, v]) => [rename[k] ?? k, v]))),
  );
}

export function transform(frames, transformations = []) {
  return transformations.reduce((acc, t) => {
    if (t.id === 'merge') return merge(acc);
    if (t.id === 'organize') return organize(acc, t.options ?? {});
    throw new Error(`transformation "${t.id}" is not emulated here: add it to tests/lib/grafana-queries.mjs`);
  }, frames);
}
