// Readings: what a scenario reads across its measured rows, beyond each
// step's verdicts (plan.json "littles_law" and "readings": [{kind, ...}]).
// Each one has its title (its heading in report.md) and lines of text; the
// tipping point also gives a number and can fail the run.
import { formatValue, metricLabel, scalar } from '../core/metrics.mjs';
import { cell } from '../evidence/parsers.mjs';
import { formatWaits } from './format.mjs';

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
function tippingPoint({ metric = 'p99_ms', factor = 3, article = '' }, rows) {
  const ran = rows.filter((r) => r.measured && scalar(r.measured, metric) !== null);
  if (ran.length < 3) return { lines: [`tipping point: needs at least 3 measured steps (${ran.length} ran)`], ok: false };
  const flat = Math.max(...ran.slice(0, 2).map((r) => scalar(r.measured, metric)));
  const label = metricLabel(metric);
  const at = ran.findIndex((r, i) => i >= 1 && (scalar(r.measured, metric) > factor * flat
    || cell(r.measured.dropped) > 0.01 * cell(r.measured.requests)));
  const source = article ? ` (article: ${article})` : '';
  const rate = (row) => formatValue('req_rate', row.measured.req_rate);
  const value = (row) => formatValue(metric, scalar(row.measured, metric));
  if (at < 0) {
    return {
      ok: false,
      lines: [`tipping point: none up to ${rate(ran[ran.length - 1])} requests/sec (${label} stayed under ${factor} × ${formatValue(metric, flat)}): step the rate higher${source}`],
    };
  }
  const [before, after] = [ran[at - 1], ran[at]];
  return {
    ok: true,
    tipping: { below: before.measured.req_rate, above: after.measured.req_rate, flat, metric, factor, step: after.id },
    lines: [`tipping point: between ${rate(before)} and ${rate(after)} requests/sec — ` +
      `${label} ${value(before)} → ${value(after)} ms ` +
      `(flat region ${formatValue(metric, flat)} ms, threshold × ${factor}; dropped ${formatValue('dropped', after.measured.dropped)})${source}`],
  };
}

// Memory per held connection and who ran out: the table's bytes/conn columns
// read as one sentence, and an OOM kill named when HAProxy died.
function memoryReading(_, rows) {
  const lines = rows.filter((r) => r.measured).map((r) => {
    const m = r.measured;
    const kb = (v) => (v === null || v === undefined ? '-' : `${(v / 1000).toFixed(1)} KB`);
    const oom = m.oom_killed ? `; HAProxy was OOM-killed (its connections peaked at ${formatValue('haproxy_conns_peak', m.haproxy_conns_peak)}, then dropped to 0)` : '';
    return `${r.label}: ${formatValue('client_held', m.client_held)} held, bytes per connection HAProxy ${kb(m.bytes_haproxy)}, backend ${kb(m.bytes_backend)}, client ${kb(m.bytes_holder)}${oom}`;
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
    out.push({ kind: r.kind, title: kind.title, ...kind.read(r, rows, run) });
  }
  return out;
}
