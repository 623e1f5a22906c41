// The verdicts the expectation language (core/expectations.mjs) gives on a
// report's rows.
import { METRICS, formatValue, scalar } from '../core/metrics.mjs';
import { parseExpectation } from '../core/expectations.mjs';

// The expectation of METRIC on ROW, checked against the plan's metrics and steps.
function parseFor(row, metric, expr, byId) {
  const where = `step "${row.id}": expect ${metric}`;
  if (!METRICS.includes(metric)) throw new Error(`${where} "${expr}": unknown metric`);
  let e;
  try {
    e = parseExpectation(expr);
  } catch (err) {
    throw new Error(`${where}: ${err.message}`);
  }
  if (e.ref && !byId.has(e.ref)) throw new Error(`${where} "${expr}": no step "${e.ref}" in the plan`);
  return e;
}

const OPS = {
  '>': (a, b) => a > b, '<': (a, b) => a < b, '>=': (a, b) => a >= b, '<=': (a, b) => a <= b, '==': (a, b) => a === b,
};

export const signed = (pct) => `${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%`;

// "±N%" and "±N%of:NAME": against the published value, another measured
// metric of the step, or a model value.
function withinTolerance(row, metric, e, measured) {
  const reference = e.of ? scalar(row.measured, e.of) ?? scalar(row.model, e.of) : scalar(row.published, metric);
  const what = e.of ? `${e.of} ${formatValue(metric, reference)}` : `published ${formatValue(metric, reference)}`;
  if (reference === null) return { ok: false, text: e.of ? `no ${e.of}` : 'no published value' };
  const diff = measured - reference;
  const pct = reference ? `${signed((diff / reference) * 100)}, ` : '';
  return {
    ok: Math.abs(diff) <= (e.tolerance / 100) * Math.abs(reference),
    text: `${formatValue(metric, measured)} vs ${what} (${pct}allowed ±${e.tolerance}%)`,
  };
}

// → {ok, text}: text says why, whether it passed or not.
function evaluate(row, metric, e, byId) {
  const measured = scalar(row.measured, metric);
  if (measured === null) return { ok: false, text: 'not measured' };
  const shown = formatValue(metric, measured);
  if (e.range) {
    return { ok: measured >= e.range[0] && measured <= e.range[1], text: `${shown}, expected ${e.range[0]} to ${e.range[1]}` };
  }
  if (e.tolerance !== undefined) return withinTolerance(row, metric, e, measured);
  let target = e.number;
  let what = String(e.number);
  if (e.ref !== null) {
    target = scalar(byId.get(e.ref).measured, metric);
    if (target === null) return { ok: false, text: `step ${e.ref} not measured` };
    what = `${e.ref} (${formatValue(metric, target)})`;
  }
  return { ok: OPS[e.op](measured, target), text: `${shown}, expected ${e.op} ${what}` };
}

// judge ROW BYID: row.verdicts (one per expectation) and row.verdict, the
// line the table shows.
export function judge(row, byId) {
  // Parsed even for steps that did not run: a wrong scenario file must fail loudly.
  const checks = Object.entries(row.expect).map(([metric, expr]) => [metric, parseFor(row, metric, expr, byId)]);
  if (!row.measured) return;
  for (const [metric, e] of checks) {
    const { ok, text } = evaluate(row, metric, e, byId);
    row.verdicts[metric] = { ok, info: e.info, expect: e.body, text };
  }
  // Whatever the scenario expects: a step whose HAProxy ran other listening
  // sockets than its config asks measured another config.
  if (row.measured.listeners_differ) {
    row.verdicts.listeners = { ok: false, info: false, expect: 'as the config asks', text: `HAProxy's listening sockets are not its config's: ${row.measured.listeners_differ.join('; ')}` };
  }
  const entries = Object.entries(row.verdicts);
  const fails = entries.filter(([, v]) => !v.info && !v.ok);
  const hard = entries.filter(([, v]) => !v.info);
  const infos = entries.filter(([, v]) => v.info).map(([m, v]) => `${m} ${v.ok ? 'as article' : 'unlike article'}`);
  if (fails.length) row.verdict = `FAIL (${fails.map(([m, v]) => `${m} ${v.text}`).join('; ')})`;
  else if (hard.length && infos.length) row.verdict = `pass; info: ${infos.join(', ')}`;
  else if (infos.length) row.verdict = `info: ${infos.join(', ')}`;
  else row.verdict = hard.length ? 'pass' : 'no checks';
}
