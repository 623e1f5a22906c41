// Readings: what a scenario reads across its measured rows, beyond each
// step's verdicts (plan.json "littles_law" and "readings": [{kind, ...}]).
// Each one has its title (its heading in report.md) and lines of text; the
// tipping point also gives a number and can fail the run.
import { formatValue, metricLabel, scalar } from '../core/metrics.mjs';
import { cell } from '../evidence/parsers.mjs';
import { formatWaits } from './format.mjs';
import { haproxySaturated } from '../evidence/saturation.mjs';

// Little's law, L = X × W, on each measured step: the requests in service that
// the measured throughput X implies for a service time W, beside the sessions
// HAProxy saw; then the maxconn a closed-loop test of N clients needs.
function littlesLaw({ service_seconds: w, clients }, rows) {
  const lines = rows.filter((r) => r.measured).map((r) => {
    const x = r.measured.hits_per_sec;
    const seen = r.measured.max_sessions;
    return `Little's law, ${r.label}: L = X × W = ${x.toFixed(1)}/s × ${w} s = ${Math.round(x * w)} requests in service` +
      `${Number.isFinite(seen) ? ` (HAProxy saw at most ${seen} sessions)` : ''}`;
  });
  lines.push(`maxconn needed = clients × service time ÷ time between a client's requests = ${clients} × ${w} s ÷ ${w} s = ${clients}` +
    ` (the article's "100 × 3 = 300" reads its 100 clients as 100 requests/s, which would need ${clients * w})`);
  return { lines };
}

// The article's "almighty graph": latency stays flat as the rate grows, until
// a tipping point. Flat region = the worse METRIC of the first two steps;
// the tipping point = the first step whose METRIC exceeds FACTOR × that, or
// that k6 could not even start every request of (dropped > 1%).
function tippingPoint({ metric = 'p99_ms', factor = 3, article = '', curve }, rows, run = {}) {
  const name = curve ? `${run.curves?.[curve] ?? curve}: ` : '';
  if (curve && curveRows(rows, curve).length === 0) return { lines: [`${name}not in this run`] };
  const ran = curveRows(rows, curve).filter((r) => r.measured && scalar(r.measured, metric) !== null);
  if (ran.length < 3) return { lines: [`${name}tipping point: needs at least 3 measured steps (${ran.length} ran)`], ok: false };
  const { flat, at } = tippingIndex(ran, metric, factor);
  const label = metricLabel(metric);
  const source = article ? ` (article: ${article})` : '';
  const rate = (row) => formatValue('req_rate', row.measured.req_rate);
  const value = (row) => formatValue(metric, scalar(row.measured, metric));
  if (at < 0) {
    return {
      ok: false,
      lines: [`${name}tipping point: none up to ${rate(ran[ran.length - 1])} requests/sec (${label} stayed under ${factor} × ${formatValue(metric, flat)}): step the rate higher${source}`],
    };
  }
  const [before, after] = [ran[at - 1], ran[at]];
  return {
    ok: true,
    tipping: { below: before.measured.req_rate, above: after.measured.req_rate, flat, metric, factor, step: after.id },
    lines: [`${name}tipping point: between ${rate(before)} and ${rate(after)} requests/sec — ` +
      `${label} ${value(before)} → ${value(after)} ms ` +
      `(flat region ${formatValue(metric, flat)} ms, threshold × ${factor}; dropped ${formatValue('dropped', after.measured.dropped)})${source}`],
  };
}

// tippingIndex RAN METRIC FACTOR → {flat, at}: the flat region (the worse
// METRIC of the first two rows, or the first's alone when the second is
// already past FACTOR × it: a ceiling curve at 0.4 core once read a "flat
// region" of 1,935 ms from its tipped second step) and the index of the first
// row whose METRIC exceeds FACTOR × that or that dropped more than 1% (-1: none).
function tippingIndex(ran, metric, factor) {
  const [first, second] = ran.slice(0, 2).map((r) => scalar(r.measured, metric));
  const flat = second > factor * first ? first : Math.max(first, second);
  const at = ran.findIndex((r, i) => i >= 1 && (scalar(r.measured, metric) > factor * flat
    || cell(r.measured.dropped) > 0.01 * cell(r.measured.requests)));
  return { flat, at };
}

// The rows of one curve (all rows when the reading names none).
const curveRows = (rows, curve) => (curve ? rows.filter((r) => r.curve === curve) : rows);

// curveCapacity ROWS {metric, factor} → {top, cost, predicted, allowance,
// ...} | null: what HAProxy took in at most on a curve, and what the cost of a
// request predicted: its allowance ÷ HAProxy's µs per request at the last step
// before the curve's tipping point (latency still flat: HAProxy kept up, as
// busy as it got without falling behind); without a tipping point, the
// busiest step where HAProxy was not yet saturated.
export function curveCapacity(rows, { metric = 'p99_ms', factor = 5 } = {}) {
  // HAProxy's own count of the requests it took in while the load ran; runs
  // without it: the load tool's answers per second.
  const rate = (r) => r.measured.haproxy_req_rate ?? r.measured.hits_per_sec;
  const ran = rows.filter((r) => r.measured && Number.isFinite(rate(r)));
  if (ran.length === 0) return null;
  const top = ran.reduce((a, b) => (rate(b) > rate(a) ? b : a));
  const costed = ran.filter((r) => Number.isFinite(r.measured.haproxy_us_per_req));
  const withMetric = ran.filter((r) => scalar(r.measured, metric) !== null);
  const { at } = withMetric.length >= 3 ? tippingIndex(withMetric, metric, factor) : { at: -1 };
  const below = costed.filter((r) => !haproxySaturated(r.measured));
  const beforeTipping = at > 0 && costed.includes(withMetric[at - 1]) ? withMetric[at - 1] : null;
  const costRow = beforeTipping ?? (below.length ? below.reduce((a, b) => (rate(b) > rate(a) ? b : a)) : null);
  const allowance = top.measured.haproxy_allowance;
  const cost = costRow?.measured.haproxy_us_per_req ?? null;
  return {
    top, costRow, cost, allowance, beforeTipping: Boolean(beforeTipping),
    measured: rate(top),
    predicted: cost && allowance ? (allowance * 1e6) / cost : null,
    // The highest offered rate: past the ceiling, what kept the curve down.
    last: ran[ran.length - 1],
  };
}

// HAProxy's ceiling on one curve against its prediction (±TOLERANCE_PCT), and
// whose ceiling it is: HAProxy's when HAProxy was saturated at the curve's
// highest rate while the load tool kept its rate.
function capacityReading({ curve, tolerance_pct: tolerance = 25, metric, factor }, rows, run = {}) {
  const name = run.curves?.[curve] ?? curve ?? 'all steps';
  if (curve && curveRows(rows, curve).length === 0) return { lines: [`${name}: not in this run`] };
  const c = curveCapacity(curveRows(rows, curve), { metric, factor });
  if (!c) return { ok: false, lines: [`${name}: not measured`] };
  const n = (v) => Math.round(v).toLocaleString('en-US');
  const sat = c.last.measured.saturation;
  const whose = !sat ? 'no CPU allowance read: cannot tell what saturated'
    : sat.haproxy ? `the ceiling is HAProxy's: at ${c.last.label} ${sat.saturated.join(', ')} saturated (${sat.text})`
      : `the ceiling is NOT HAProxy's: at ${c.last.label} saturated ${sat.saturated.join(', ') || 'nothing'} (${sat.text})`;
  const diff = c.predicted ? ((c.measured - c.predicted) / c.predicted) * 100 : null;
  const within = diff !== null && Math.abs(diff) <= tolerance;
  const prediction = c.predicted === null ? 'no prediction (no step below saturation with a CPU figure)'
    : `predicted ${c.allowance} core${c.allowance === 1 ? '' : 's'} ÷ ${c.cost.toFixed(1)} µs per request (at ${c.costRow.label}, ` +
      `${c.beforeTipping ? 'the last step before the tipping point' : 'the busiest step below saturation'}) = ${n(c.predicted)}/s: ` +
      `${diff >= 0 ? '+' : ''}${diff.toFixed(1)}%, ${within ? 'within' : 'OUTSIDE'} ±${tolerance}%`;
  // Why a prediction misses: the cost per request at the ceiling itself,
  // and the event loop's turns per request on both steps.
  const loops = (r) => (Number.isFinite(r?.measured.loops_per_req) ? `, ${r.measured.loops_per_req.toFixed(2)} loops/request` : '');
  const atTop = Number.isFinite(c.top.measured.haproxy_us_per_req) && c.costRow
    ? `; at the ceiling HAProxy spent ${c.top.measured.haproxy_us_per_req.toFixed(1)} µs per request${loops(c.top)} (at ${c.costRow.label}: ${c.cost.toFixed(1)} µs${loops(c.costRow)})` : '';
  return {
    ok: Boolean(sat?.haproxy && within),
    capacity: { curve, measured: c.measured, predicted: c.predicted, allowance: c.allowance, haproxy: Boolean(sat?.haproxy) },
    lines: [`${name}: HAProxy took in at most ${n(c.measured)} requests/s (${c.top.label}); ${prediction}${atTop}; ${whose}`],
  };
}

// Two curves' ceilings as a ratio (B ÷ A) beside the article's, and beside
// the ratio of their HAProxy allowances when those differ.
function curveRatioReading({ a, b, article = '', label = '' }, rows, run = {}) {
  const [A, B] = [a, b].map((c) => curveCapacity(curveRows(rows, c)));
  const names = [a, b].map((c) => run.curves?.[c] ?? c);
  const head = label || `${names[1]} ÷ ${names[0]}`;
  if (!A || !B || !A.measured) return { lines: [`${head}: ${[a, b].some((c) => curveRows(rows, c).length === 0) ? 'not in this run' : 'not measured'}`] };
  const ratio = B.measured / A.measured;
  const allowances = A.allowance && B.allowance && A.allowance !== B.allowance
    ? `; allowance ratio ${(B.allowance / A.allowance).toFixed(2)} (${B.allowance} ÷ ${A.allowance} core)` : '';
  return {
    ratio,
    lines: [`${head}: ${Math.round(B.measured)} ÷ ${Math.round(A.measured)} requests/s = ${ratio.toFixed(2)}${allowances}${article ? ` (article: ${article})` : ''}`],
  };
}

// Per step, what saturated (evidence/saturation.mjs).
function saturationReading(_, rows) {
  return {
    lines: rows.filter((r) => r.measured?.saturation).map((r) => `${r.label}: ${r.measured.saturation.saturated.join(', ') || 'nothing saturated'} — ${r.measured.saturation.text}`),
  };
}

// Memory per held connection and who ran out: the table's bytes/conn columns
// read as one sentence, and an OOM kill named when HAProxy died.
function memoryReading(_, rows) {
  const lines = rows.filter((r) => r.measured).map((r) => {
    const m = r.measured;
    const kb = (v) => (v === null || v === undefined ? '-' : `${(v / 1000).toFixed(1)} KB`);
    const oom = m.oom_killed ? `; HAProxy was OOM-killed (its connections peaked at ${formatValue('haproxy_conns_peak', m.haproxy_conns_peak)}, then dropped to 0)` : '';
    // The host's view, when the run read it: the kernel's slab and buffers,
    // and everything as MemAvailable fell (the containers' figures hold part
    // of the kernel's: their cgroups are charged for their sockets).
    const host = Number.isFinite(m.bytes_host) ? `; on the host: kernel ${kb(m.bytes_kernel)}, all together ${kb(m.bytes_host)}` : '';
    return `${r.label}: ${formatValue('client_held', m.client_held)} held, bytes per connection HAProxy ${kb(m.bytes_haproxy)}, backend ${kb(m.bytes_backend)}, client ${kb(m.bytes_holder)}${host}${oom}`;
  });
  // connections --tls: each level's TLS twin (id-tls) beside the plain step.
  const byId = new Map(rows.map((r) => [r.id, r]));
  const tls = rows.filter((r) => r.id.endsWith('-tls') && r.measured && byId.get(r.id.slice(0, -4))?.measured).map((r) => {
    const plain = byId.get(r.id.slice(0, -4)).measured;
    const kb = (v) => (Number.isFinite(v) ? `${(v / 1000).toFixed(1)} KB` : '-');
    const more = Number.isFinite(r.measured.bytes_haproxy) && Number.isFinite(plain.bytes_haproxy) ? kb(r.measured.bytes_haproxy - plain.bytes_haproxy) : '-';
    return `${r.label}: HAProxy ${kb(r.measured.bytes_haproxy)} per TLS connection against ${kb(plain.bytes_haproxy)} plain (TLS adds ${more}); client ${kb(r.measured.bytes_holder)} against ${kb(plain.bytes_holder)}`;
  });
  const article = 'the article: about 48 GB of RAM for 2.38 M established TCP connections, some 20 KB per socket, 40 KB per client connection through HAProxy';
  return { lines: [`memory per connection — ${lines.join('; ')}`, ...(tls.length ? [`with and without TLS — ${tls.join('; ')} (${article})`] : [])] };
}

// The clients' SYN retry schedule, as measured: where connects piled up (the
// seconds after which a dropped SYN's retry got in), per step, beside the
// client kernel's setting that shapes it.
function synTimingReading(_, rows) {
  const lines = rows.filter((r) => r.measured?.connect_waits).map((r) => {
    const m = r.measured;
    const linear = m.client_sysctl?.['net.ipv4.tcp_syn_linear_timeouts'];
    const kernel = linear === undefined ? 'kernel without tcp_syn_linear_timeouts' : `tcp_syn_linear_timeouts ${linear}`;
    return `${r.label} (${kernel}): ${formatValue('connects_retried', m.connects_retried)} connects after ≥1 s — ${formatWaits(m.connect_waits)}`;
  });
  return { lines: [`SYN retries, connects by how long they took — ${lines.join('; ') || 'no step counted its connects'}`] };
}

// A full handshake costs the server at least one signature: the step's
// HAProxy µs per request against the sign time the runner measured on this
// machine (tls-floor.env: openssl speed on HAProxy's own OpenSSL, else
// Node's crypto.sign on the lab's node, named as such). Fails below it.
function signFloorReading({ step, floor, label }, rows, run = {}) {
  const row = rows.find((r) => r.id === step);
  const us = row?.measured?.haproxy_us_per_req;
  const f = run.floor ?? {};
  const sign = Number(f[floor]);
  if (!Number.isFinite(us) || !Number.isFinite(sign)) {
    return { ok: false, lines: [`${label} floor: not measured (step ${step}: ${Number.isFinite(us) ? `${us.toFixed(0)} µs` : 'no CPU figure'}, floor ${f[floor] ?? 'missing: tls-floor.env'})`] };
  }
  const ok = us >= sign;
  return {
    ok,
    lines: [`${label} floor: ${row.label} cost HAProxy ${us.toFixed(0)} µs per request, ${ok ? '≥' : 'BELOW'} one ${label} of ${sign.toFixed(1)} µs ` +
      `(${(us / sign).toFixed(1)}×; ${f.floor_tool ?? 'measured'} on ${f.floor_library ?? 'an unnamed library'}${f.haproxy_library ? `, HAProxy runs ${f.haproxy_library}` : ''})`],
  };
}

// kind → its title and how to read it.
export const READINGS = {
  tipping_point: { title: 'Tipping point', read: tippingPoint },
  memory: { title: 'Memory per connection', read: memoryReading },
  syn_timing: { title: 'SYN timing', read: synTimingReading },
  sign_floor: { title: 'Sign floor', read: signFloorReading },
  saturation: { title: 'What saturated', read: saturationReading },
  capacity: { title: 'HAProxy\'s ceiling', read: capacityReading },
  curve_ratio: { title: 'Ratio of ceilings', read: curveRatioReading },
};

// readingsOf PLAN ROWS [RUN] → [{kind, title, lines, ok?, tipping?}]: Little's law
// first (when the plan asks for it), then the plan's readings in order. RUN:
// what the run measured beside its steps ({floor}: tls-floor.env).
export function readingsOf(plan, rows, run = {}) {
  const out = [];
  if (plan.littles_law) out.push({ kind: 'littles_law', title: 'Little\'s law', ...littlesLaw(plan.littles_law, rows) });
  for (const r of plan.readings ?? []) {
    const kind = READINGS[r.kind];
    if (!kind) throw new Error(`readings: unknown kind "${r.kind}"`);
    out.push({ kind: r.kind, title: kind.title, ...kind.read(r, rows, { ...run, curves: plan.curves ?? {} }) });
  }
  return out;
}
