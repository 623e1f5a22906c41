// Readings: what a scenario reads across its measured rows, beyond each
// step's verdicts (plan.json "littles_law" and "readings": [{kind, ...}]).
// Each one has its title (its heading in report.md) and lines of text; the
// tipping point also gives a number and can fail the run.
import { PARTS } from '../evidence/breakdown.mjs';
import { formatValue, metricLabel, scalar } from '../core/metrics.mjs';
import { cell } from '../evidence/parsers.mjs';
import { formatWaits } from './format.mjs';
import { CORE_SATURATED_PCT, haproxySaturated } from '../evidence/saturation.mjs';

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
// already past FACTOR × it: a curve that tips at its second step would
// otherwise take that step's latency for its flat region) and the index of the first
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

// A step at least this busy predicts the ceiling: below it, HAProxy's fixed
// costs per event-loop turn (waking up for one request) weigh on each
// request more than they do at the ceiling (ceiling --quick, 2026-11-28: 62.9 µs at
// 1000/s against 15 µs at its busiest step).
export const PREDICT_BUSY_PCT = 60;
// When the client side ran out first with HAProxy's own core at least this
// busy, the top step's rate ÷ its core's busy share is shown beside the
// prediction.
export const SCALE_TOP_BUSY_PCT = 75;

// HAProxy's own count of the requests it took in while the load ran; runs
// without it: the load tool's answers per second.
const rateOf = (r) => r.measured.haproxy_req_rate ?? r.measured.hits_per_sec;

// The cost per request a prediction reads: while the load ran (the window its
// cores were read in), else over the whole step (runs before that figure).
const costOf = (r) => r?.measured.haproxy_us_per_req_load ?? r?.measured.haproxy_us_per_req ?? null;

// curveCapacity ROWS {metric, factor} → {top, cost, predicted, allowance,
// ...} | null: what HAProxy took in at most on a curve, and what the cost of a
// request predicted, from the busiest step below the ceiling that kept
// HAProxy at least PREDICT_BUSY_PCT busy with neither side saturated (without
// one, the last step before the tipping point or the busiest not yet
// saturated, said so): on cores of its own, that step's rate ÷ its cores'
// busy share; else its allowance ÷ HAProxy's µs per request there.
export function curveCapacity(rows, { metric = 'p99_ms', factor = 5 } = {}) {
  const rate = rateOf;
  const ran = rows.filter((r) => r.measured && Number.isFinite(rate(r)));
  if (ran.length === 0) return null;
  const top = ran.reduce((a, b) => (rate(b) > rate(a) ? b : a));
  const costed = ran.filter((r) => Number.isFinite(costOf(r)));
  const withMetric = ran.filter((r) => scalar(r.measured, metric) !== null);
  const { at } = withMetric.length >= 3 ? tippingIndex(withMetric, metric, factor) : { at: -1 };
  const busiest = (xs) => (xs.length ? xs.reduce((a, b) => (rate(b) > rate(a) ? b : a)) : null);
  // A step whose client side was full still paired HAProxy's rate with its
  // busy share in one window: only HAProxy's own saturation disqualifies.
  // HAProxy saturated: its cgroup at its allowance, or its own core full.
  const full = (r) => haproxySaturated(r.measured) || cell(r.measured.haproxy_core_busy_pct) >= CORE_SATURATED_PCT;
  const busy = busiest(costed.filter((r) => r !== top && rate(r) < rate(top) && !full(r)
    && cell(r.measured.haproxy_busy_pct) >= PREDICT_BUSY_PCT));
  const below = costed.filter((r) => r !== top && !full(r));
  const beforeTipping = at > 0 && costed.includes(withMetric[at - 1]) ? withMetric[at - 1] : null;
  const costRow = busy ?? beforeTipping ?? busiest(below);
  const allowance = top.measured.haproxy_allowance;
  const cost = costOf(costRow);
  // On cores of its own, the kernel's work for HAProxy's packets shares
  // them and is in no cgroup: the step's rate scaled to its cores fully
  // busy (/proc/stat), not the allowance over HAProxy's own cost.
  const coreBusy = cell(costRow?.measured.haproxy_core_busy_pct);
  const byCore = coreBusy > 0 ? (rate(costRow) * 100) / coreBusy : null;
  return {
    top, costRow, cost, allowance, coreBusy: byCore === null ? null : coreBusy, rule: busy ? 'busy' : beforeTipping ? 'tipping' : 'below',
    measured: rate(top),
    predicted: byCore ?? (cost && allowance ? (allowance * 1e6) / cost : null),
    // The highest offered rate: past the ceiling, what kept the curve down.
    last: ran[ran.length - 1],
  };
}

// Why a step was chosen to predict from, in the reading's words.
const RULE_WORDS = {
  busy: `the busiest step below the ceiling with HAProxy ${PREDICT_BUSY_PCT}% busy or more, not saturated`,
  tipping: `the last step before the tipping point: no step below the ceiling kept HAProxy ${PREDICT_BUSY_PCT}% busy`,
  below: `the busiest step below saturation: no step below the ceiling kept HAProxy ${PREDICT_BUSY_PCT}% busy`,
};

// HAProxy's ceiling on one curve against its prediction (±TOLERANCE_PCT), and
// whose ceiling it is: HAProxy's when HAProxy was saturated at the curve's
// highest rate while the load tool kept its rate. When the load tool's own
// core ran out first (a closed loop at its limit), the curve measured the
// client, not HAProxy: said so, with HAProxy's cost at its busiest step,
// and neither passed nor failed.
function capacityReading({ curve, tolerance_pct: tolerance = 25, metric, factor }, rows, run = {}) {
  const name = run.curves?.[curve] ?? curve ?? 'all steps';
  if (curve && curveRows(rows, curve).length === 0) return { lines: [`${name}: not in this run`] };
  const c = curveCapacity(curveRows(rows, curve), { metric, factor });
  if (!c) return { ok: false, lines: [`${name}: not measured`] };
  const n = (v) => Math.round(v).toLocaleString('en-US');
  const us = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} µs` : '? µs');
  const sat = c.last.measured.saturation;
  const clientFirst = Boolean(sat && !sat.haproxy && sat.client);
  const whose = !sat ? 'no CPU allowance read: cannot tell what saturated'
    : sat.haproxy ? `the ceiling is HAProxy's: at ${c.last.label} ${sat.saturated.join(', ')} saturated (${sat.text})`
      : `the ceiling is NOT HAProxy's: at ${c.last.label} saturated ${sat.saturated.join(', ') || 'nothing'} (${sat.text})`;
  const diff = c.predicted ? ((c.measured - c.predicted) / c.predicted) * 100 : null;
  const within = diff !== null && Math.abs(diff) <= tolerance;
  // How the prediction was made, then (judged against the measured ceiling) by how much it missed.
  const predictedAs = c.predicted === null ? null
    : `predicted ${c.coreBusy !== null
      ? `${n(rateOf(c.costRow))}/s ÷ ${Math.round(c.coreBusy)}% of HAProxy's own core${c.allowance === 1 ? '' : 's'} busy (its kernel work included)`
      : `${c.allowance} core${c.allowance === 1 ? '' : 's'} ÷ ${c.cost.toFixed(1)} µs per request`} (at ${c.costRow.label}, ` +
      `${RULE_WORDS[c.rule]}) = ${n(c.predicted)}/s`;
  const prediction = predictedAs === null ? 'no prediction (no step below the ceiling with a CPU figure)'
    : `${predictedAs}: ${diff >= 0 ? '+' : ''}${diff.toFixed(1)}%, ${within ? 'within' : 'OUTSIDE'} ±${tolerance}%`;
  // Why a prediction misses: the cost per request at the ceiling itself,
  // and the event loop's turns per request on both steps.
  const loops = (r) => (Number.isFinite(r?.measured.loops_per_req) ? `, ${r.measured.loops_per_req.toFixed(2)} loops/request` : '');
  const atTop = Number.isFinite(costOf(c.top)) && c.costRow
    ? `; at the ceiling HAProxy spent ${costOf(c.top).toFixed(1)} µs per request${loops(c.top)} (at ${c.costRow.label}: ${c.cost.toFixed(1)} µs${loops(c.costRow)})` : '';
  if (clientFirst) {
    const m = c.last.measured;
    // HAProxy's core still this busy at the top: its rate there ÷ that share,
    // the ceiling at the top's own cost, beside the prediction from below.
    // Not judged: a client-bound top moves with the client (ceiling --quick,
    // 2026-11-29, three runs: -11% to +15% on plain kept-alive, +11% to +131%
    // on TLS kept-alive).
    const topBusy = cell(c.top.measured.haproxy_core_busy_pct);
    const scaled = topBusy >= SCALE_TOP_BUSY_PCT && c.predicted ? (c.measured * 100) / topBusy : null;
    const off = scaled === null ? null : ((scaled - c.predicted) / c.predicted) * 100;
    const check = scaled === null
      ? `; HAProxy's core was under ${SCALE_TOP_BUSY_PCT}% busy at the top: too far from its ceiling to scale`
      : `; there its core was ${Math.round(topBusy)}% busy, so at that cost a whole core would take ${n(scaled)}/s, ` +
        `against ${predictedAs}: ${off >= 0 ? '+' : ''}${off.toFixed(1)}%, not judged (HAProxy did not saturate)`;
    return {
      capacity: { curve, measured: c.measured, predicted: c.predicted, scaled, allowance: c.allowance, haproxy: false, client_first: true },
      lines: [`${name}: one core of client cannot outrun one core of HAProxy here: the client side (the load tool ${us(m.loadgen_us_per_req)} per request, ` +
        `with the kernel's and Docker's work on its cores) ran out first at ${c.last.label}, HAProxy ${Math.round(cell(m.haproxy_busy_pct))}% busy (${us(costOf(c.last))} per request); ` +
        `HAProxy took in at most ${n(c.measured)} requests/s (${c.top.label}), ${us(costOf(c.top))} per request there${check}; ${whose}`],
    };
  }
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

// perCoreReading {reference, published}: each curve on dedicated cores, one
// line: HAProxy's cost per request while the load ran at its top step and
// what one core does at that cost, how busy HAProxy was, the client's own
// cost, the second method's cost over the same path and over loopback (the
// bridge's share), and the cost ÷ the run's reference: the REFERENCE curve's
// loopback second method (wrk, plain kept-alive /self, HAProxy on its own
// core), a fixed job measured in the same run on the same machine. The
// ratios travel to another machine; the µs do not. PUBLISHED: curve → the
// per-core requests/s of doc/intro.txt, quoted beside.
function perCoreReading({ reference, published = {} }, rows, run = {}) {
  const curves = [...new Set(rows.filter((r) => r.measured && r.cores).map((r) => r.curve))];
  if (curves.length === 0) return { lines: ['no curve on dedicated cores in this run'] };
  const us = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} µs` : '?');
  const n = (v) => Math.round(v).toLocaleString('en-US');
  const topOf = (curve) => curveCapacity(curveRows(rows, curve))?.top ?? null;
  const withCheck = (curve) => curveRows(rows, curve).filter((r) => Number.isFinite(r.measured?.check_us_per_req)).at(-1) ?? null;
  const ref = withCheck(reference)?.measured.check_loopback_us_per_req ?? null;
  const lines = [ref === null
    ? `reference: not measured in this run (the ${run.curves?.[reference] ?? reference} curve's second method over loopback)`
    : `reference: ${us(ref)} of HAProxy's CPU per plain kept-alive request to /self from wrk over loopback, HAProxy on its own core, measured in this run; the ratios to it travel to another machine, the µs do not`];
  for (const curve of curves) {
    const top = topOf(curve);
    const m = top?.measured ?? {};
    const cost = costOf(top);
    const check = withCheck(curve)?.measured ?? {};
    const bridge = Number.isFinite(check.check_us_per_req) && Number.isFinite(check.check_loopback_us_per_req)
      ? `, loopback ${us(check.check_loopback_us_per_req)} (the bridge adds ${Math.round((check.check_us_per_req / check.check_loopback_us_per_req - 1) * 100)}%)` : '';
    // Against the top step's own cost (the check ran after the curve's last
    // step, which past the client's limit may not be its busiest).
    const ratio = Number.isFinite(cost) && check.check_us_per_req > 0 ? (cost / check.check_us_per_req).toFixed(2) : '?';
    const second = Number.isFinite(check.check_us_per_req)
      ? `; second method (wrk, same path) ${us(check.check_us_per_req)} at ${Math.round(cell(check.check_busy_pct))}% busy: ${ratio}×${bridge}; wrk itself ${us(check.check_client_us_per_req)}`
      : '; no second method';
    const pub = published[curve] ? `; doc/intro.txt: ${n(published[curve])}/s per core (HAProxy 1.6, OpenSSL 1.0.2, forwarding to servers)` : '';
    lines.push(`${run.curves?.[curve] ?? curve}: HAProxy ${us(cost)} per request while the load ran at ${top?.label ?? '?'} ` +
      `(${Number.isFinite(cost) ? n(1e6 / cost) : '?'}/s per core), ${Math.round(cell(m.haproxy_busy_pct))}% busy, ` +
      `${Number.isFinite(cost) && ref ? `${(cost / ref).toFixed(2)}× the reference` : 'no ratio to the reference'}; ` +
      `the client ${us(m.loadgen_us_per_req)} per request${second}${pub}`);
  }
  return { lines };
}

// HAProxy's requests/s against its dedicated cores: one line per core count
// of CURVE, in order, with what saturated, and the scaling against 1 core.
function coreScalingReading({ curve, article = '' }, rows) {
  const ran = curveRows(rows, curve).filter((r) => r.measured && r.cores).sort((a, b) => a.cores - b.cores);
  if (ran.length === 0) return { lines: ['no step on dedicated cores in this run'] };
  const n = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '?');
  const pct = (v) => (Number.isFinite(v) ? `${Math.round(v)}%` : '?');
  const base = rateOf(ran.find((r) => r.cores === 1) ?? {});
  const lines = ran.map((r) => {
    const rate = rateOf(r);
    const m = r.measured;
    const scale = Number.isFinite(base) && r.cores > 1 && Number.isFinite(rate)
      ? `; ${(rate / base).toFixed(2)}× 1 core's (${Math.round((rate / base / r.cores) * 100)}% of linear)` : '';
    const saturated = m.saturation ? `; saturated: ${m.saturation.saturated.join(', ') || 'nothing'}` : '';
    return `HAProxy on ${r.cores} core${r.cores === 1 ? '' : 's'}: ${n(rate)} requests/s, ${n(rate / r.cores)} per core; ` +
      `its cores ${pct(m.haproxy_core_busy_pct)} busy, the others ${pct(m.rest_core_busy_pct)}${saturated}${scale}`;
  });
  if (ran.length === 1) lines.push('one core count in this run: the notes say why');
  if (article) lines.push(`article: ${article}`);
  return { lines };
}

// --versus: each step beside its twin on another HAProxy image, HAProxy's
// µs per request (METRIC: the scenario's own column) on each and their
// ratio, each build named (HAProxy's version and "Running on SSL library").
function versusReading({ metric = 'haproxy_us_per_req' }, rows) {
  const twins = rows.filter((r) => r.versus_of && r.measured);
  if (twins.length === 0) return { lines: ['no step ran on the second image'] };
  const us = (r) => r?.measured?.[metric] ?? null;
  const build = (r) => (r?.build ? `${r.build.image ?? '?'}: HAProxy ${r.build.haproxy ?? '?'}, ${r.build.ssl_library ?? '?'}` : 'its build not read');
  const builds = [...new Set(rows.filter((r) => r.build).map((r) => `${r.versus_of ? 'second' : 'first'}: ${build(r)}`))];
  const lines = twins.map((twin) => {
    const first = rows.find((r) => r.id === twin.versus_of);
    const [a, b] = [us(first), us(twin)];
    const ratio = Number.isFinite(a) && Number.isFinite(b) && a > 0 ? `${(b / a).toFixed(2)}×` : 'no ratio';
    const f = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} µs` : '?');
    return `${first?.label ?? twin.versus_of}: HAProxy ${f(a)} per request, ${f(b)} on the second image: ${ratio}`;
  });
  return { lines: [...builds, ...lines] };
}

// Where a connection's CPU goes (a holder's steps: evidence/breakdown.mjs),
// each part per connection opened (ramp), held (µs per second of hold) and
// closed (ramp-down), against the floors the run measured (evidence/floors.mjs).
// Judged: HAProxy's µs per connection opened on the last level within
// HAPROXY_WITHIN × its own floor, when that level's ramp lasted long enough;
// and with DRAIN_AT_LEAST, its ramp-down closing at least that share of the
// pace its ramp opened, when the ramp-down lasted long enough.
const MIN_JUDGED_RAMP_SECONDS = 10;
// A holder step's windows in the breakdown, and their names in the report.
const WINDOWS = [['ramp', 'ramp'], ['hold', 'hold'], ['drain', 'ramp-down']];
const usText = (v) => (Number.isFinite(v) ? (v >= 100 ? v.toFixed(0) : v.toFixed(1)) : '-');

function breakdownReading({ haproxy_within: within = 5, drain_at_least: atLeast = null }, rows, run = {}) {
  const floors = run.connectionFloors ?? null;
  const ran = rows.filter((r) => r.measured?.cpu_breakdown);
  if (ran.length === 0) return { lines: ['not measured: no step has the host sampler\'s CPU (host-sampler.txt; not sampled on a Swarm)'] };
  const floorOf = { haproxy: floors?.haproxy?.close_us, load: floors?.node?.connect_us, backends: floors?.node?.accept_us };
  const verdicts = [haproxyAgainstFloor(ran, floorOf, within), ...(atLeast === null ? [] : [drainAgainstRamp(ran, atLeast)])];
  return {
    ok: verdicts.every((v) => v.ok),
    table: breakdownTable(ran, floorOf),
    lines: [floorsLine(floors), ...paceLines(ran), ...grewLines(ran), ...restLines(ran), ...perProcessLines(ran, floorOf), ...verdicts.map((v) => v.line)],
  };
}

function breakdownTable(ran, floorOf) {
  const times = (v, part) => (Number.isFinite(v) && floorOf[part] > 0 ? ` (${(v / floorOf[part]).toFixed(1)}×)` : '');
  const header = ['part'];
  for (const r of ran) header.push(`${r.label}: µs per conn opened`, 'µs per conn held, per s', 'µs per conn closed');
  const table = [header];
  const row = (name, f) => table.push([name, ...ran.flatMap((r) => WINDOWS.map(([w]) => f(r.measured.cpu_breakdown[w], w)))]);
  for (const [part, name] of PARTS) {
    const floorNote = Number.isFinite(floorOf[part]) ? ` (floor ${usText(floorOf[part])})` : '';
    row(`${name}${floorNote}`, (w, k) => (w ? `${usText(w.us[part])}${k === 'ramp' ? times(w.us[part], part) : ''}` : '-'));
  }
  row('the whole machine (/proc/stat)', (w) => (w ? usText(w.machine_us) : '-'));
  row('of it, the kernel: system + softirq, cores', (w) => (w?.kernel_cores ? `${(w.kernel_cores.system ?? 0).toFixed(2)} + ${(w.kernel_cores.softirq ?? 0).toFixed(2)}` : '-'));
  row('the whole machine, cores', (w) => (w ? w.machine_cores.toFixed(2) : '-'));
  row('connections/s (ramp, ramp-down) or held', (w, k) => (w ? (k === 'hold' ? String(w.connections) : `${w.rate.toFixed(0)}${w.asked_rate ? ` of ${w.asked_rate.toFixed(0)} asked` : ''}`) : '-'));
  row('HAProxy processes: cores each, least–most', (w) => (w?.haproxy_process_cores ? `${w.haproxy_processes}: ${w.haproxy_process_cores.min.toFixed(3)}–${w.haproxy_process_cores.max.toFixed(3)}` : '-'));
  return table;
}

function floorsLine(floors) {
  if (!floors) return 'floors: not measured in this run (floors/)';
  const h = floors.haproxy, n = floors.node;
  const haproxy = h ? `HAProxy ${usText(h.close_us)} µs per request on a new connection, answered by itself on a core of its own (${h.image}, ${h.requests} requests by h2load${Number.isFinite(h.rate) ? ` at ${h.rate.toFixed(0)}/s, HAProxy ${h.busy_pct.toFixed(0)}% busy` : ''})` : 'HAProxy not measured';
  const node = n ? `a bare Node client ${usText(n.connect_us)} µs per connection opened and held (${usText(n.connect_system_us)} of it in the kernel), a bare Node server ${usText(n.accept_us)} µs per connection accepted and held (${usText(n.accept_system_us)} in the kernel), ${n.connections} connections at ${n.rate?.toFixed(0)}/s` : 'the Node pair not measured';
  return `floors, measured in this run before its levels (scripts/lib/floors.sh): ${haproxy}; ${node}`;
}

// What set each level's ramp pace: what saturated, with the parts that cost
// the most per connection, or the schedule when it was kept.
function paceLines(ran) {
  return ran.filter((r) => r.measured.cpu_breakdown.ramp).map((r) => {
    const b = r.measured.cpu_breakdown.ramp;
    const sat = r.measured.saturation?.saturated ?? [];
    const most = PARTS.filter(([k]) => k !== 'rest').sort(([x], [y]) => b.us[y] - b.us[x]).slice(0, 2)
      .map(([k, name]) => `${name} ${usText(b.us[k])} µs`).join(', ');
    const setBy = sat.length ? `${sat.join(', ')} (saturated); the most per connection: ${most}`
      : b.asked_rate && b.rate >= 0.9 * b.asked_rate ? 'the schedule asked for (RAMP_UP): nothing saturated'
        : `nothing saturated: the machine ${b.machine_cores.toFixed(2)} cores busy`;
    return `${r.label}: ramp ${b.rate.toFixed(0)} connections/s, set by ${setBy}`;
  });
}

// What grows with the connections held: a part whose cores in the hold grew
// by half or more from the first level to the last.
function grewLines(ran) {
  const holds = ran.map((r) => r.measured.cpu_breakdown.hold).filter(Boolean);
  if (holds.length < 2) return [];
  const [a, z] = [holds[0], holds.at(-1)];
  const grew = PARTS.filter(([k]) => z.cores[k] > 0.01 && z.cores[k] >= 1.5 * a.cores[k])
    .map(([k, name]) => `${name} ${a.cores[k].toFixed(3)} → ${z.cores[k].toFixed(3)} cores`);
  return [`held ${a.connections.toLocaleString('en-US')} → ${z.connections.toLocaleString('en-US')}, what grew with them in the hold: ${grew.join('; ') || 'nothing by half or more'}`];
}

// What "the rest" is made of: the processes outside the lab's containers
// that used the most CPU in each window (the host sampler's every 10 s).
function restLines(ran) {
  return ran.flatMap((r) => {
    const b = r.measured.cpu_breakdown;
    const named = WINDOWS.filter(([w]) => b[w]?.others?.length);
    if (!named.length) return [];
    const parts = named.map(([w, name]) => `${name} ${b[w].others.map(([p, cores]) => `${p} ${cores.toFixed(3)}`).join(', ')}`);
    return [`${r.label}: outside the lab's containers, the processes that used the most (cores; read every ${b[named[0][0]].others_every_s} s): ${parts.join('; ')}`];
  });
}

// The article's nbproc was for CPU as much as for open files: what one
// process can take on this box, and what each process costs idle.
function perProcessLines(ran, floorOf) {
  const hold = ran.at(-1).measured.cpu_breakdown.hold;
  if (!(floorOf.haproxy > 0) && !hold) return [];
  const perCore = floorOf.haproxy > 0 ? `one HAProxy process takes at most about ${Math.round(1e6 / floorOf.haproxy).toLocaleString('en-US')} new connections/s on a core of this box (1 ÷ its floor)` : 'no HAProxy floor measured';
  const idle = hold?.haproxy_processes > 0 ? `; holding ${hold.connections.toLocaleString('en-US')} connections at ${ran.at(-1).label}, its ${hold.haproxy_processes} processes used ${hold.cores.haproxy.toFixed(3)} cores together, ${((hold.cores.haproxy / hold.haproxy_processes) * 1000).toFixed(1)} thousandths of a core each (checks, DNS, the runner's readings)` : '';
  return [`CPU per process: ${perCore}${idle}`];
}

function haproxyAgainstFloor(ran, floorOf, within) {
  const top = ran.at(-1).measured.cpu_breakdown.ramp;
  if (!top || top.seconds < MIN_JUDGED_RAMP_SECONDS) {
    return { ok: true, line: `HAProxy per connection opened against its floor: not judged, the last level's ramp ${top ? `lasted ${top.seconds.toFixed(1)} s` : 'left no window'} (a ramp of at least ${MIN_JUDGED_RAMP_SECONDS} s is judged: a few samples at a low rate say little)` };
  }
  if (!(floorOf.haproxy > 0)) return { ok: false, line: 'HAProxy per connection opened against its floor: no floor measured (floors/): FAIL' };
  const x = top.us.haproxy / floorOf.haproxy;
  return { ok: x <= within, line: `HAProxy per connection opened at ${ran.at(-1).label}: ${usText(top.us.haproxy)} µs, ${x.toFixed(1)}× its floor (want ≤ ${within}×): ${x <= within ? 'pass' : 'FAIL'}` };
}

function drainAgainstRamp(ran, atLeast) {
  const { label } = ran.at(-1), { ramp, drain } = ran.at(-1).measured.cpu_breakdown;
  const want = `want ≥ ${(atLeast * 100).toFixed(0)}%`;
  if (!ramp || !drain || drain.seconds < MIN_JUDGED_RAMP_SECONDS) {
    return { ok: true, line: `Closing as fast as opening: not judged, the last level's ramp-down ${drain ? `lasted ${drain.seconds.toFixed(1)} s` : 'left no window'} (${MIN_JUDGED_RAMP_SECONDS} s or more is judged)` };
  }
  const share = drain.rate / ramp.rate;
  return { ok: share >= atLeast, line: `Closing as fast as opening at ${label}: ${drain.rate.toFixed(0)} closes/s, ${(share * 100).toFixed(0)}% of the ${ramp.rate.toFixed(0)} opens/s of its ramp (${want}): ${share >= atLeast ? 'pass' : 'FAIL'}` };
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
  per_core: { title: 'Per core, beside the reference', read: perCoreReading },
  core_scaling: { title: 'Requests/s against cores', read: coreScalingReading },
  versus: { title: 'Two HAProxy images', read: versusReading },
  breakdown: { title: 'Where a connection\'s CPU goes', read: breakdownReading },
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
