// A step's story in time, for chart-time.svg: the connections the clients
// held and HAProxy's, as sampled while the load ran, in seconds after the
// step started. Only for steps that hold connections (ramp, hold, drain;
// a plateau; a timeout closing them): elsewhere a step is one point of its
// chart. summary.json carries it (the chart is drawn from the report
// alone) and is kept in git: each source is thinned to MAX_POINTS.

export const MAX_POINTS = 200;

// A step holds connections when the holder opens them, or when its backend
// sleeps on each request (SLEEP_MS: long-lived requests, timeouts).
export function holdsConnections(step) {
  return step.load?.tool === 'holder' || Number(step.load?.env?.SLEEP_MS) > 0;
}

// thin LENGTH MAX → the indices kept: evenly strided, the first and the last
// always (where the ramp starts and the drain ends).
export function thin(length, max = MAX_POINTS) {
  if (length <= max) return Array.from({ length }, (_, i) => i);
  const stride = (length - 1) / (max - 1);
  return Array.from({ length: max }, (_, i) => Math.round(i * stride));
}

const tenth = (v) => Math.round(v * 10) / 10;

// One source's samples as columns: t (s) and each named value, thinned.
function columns(samples, timeOf, values) {
  const kept = thin(samples.length).map((i) => samples[i]);
  return {
    t: kept.map((x) => tenth(timeOf(x))),
    ...Object.fromEntries(Object.entries(values).map(([name, of]) => [name, kept.map((x) => of(x) ?? null)])),
  };
}

// seriesOf STEP HOLDERS SAMPLES STARTED → {clients?: {t, open, failed},
// haproxy?: {t, conns, backend}} | null. HOLDERS: the holders' merged summary
// (their open connections and failures so far, each second); SAMPLES:
// HAProxy's connections and its backends', every instance added up;
// STARTED: when the step started (epoch ms; else the earliest sample).
export function seriesOf(step, holders, samples, started) {
  if (!holdsConnections(step)) return null;
  const clientSamples = holders?.samples?.length && Number.isFinite(holders.started_at_ms) ? holders.samples : [];
  const haproxySamples = samples ?? [];
  const stamps = [clientSamples.length ? holders.started_at_ms : null, ...haproxySamples.map((x) => x.at)].filter(Number.isFinite);
  const origin = Number.isFinite(started) ? started : stamps.length ? Math.min(...stamps) : null;
  const out = {};
  if (clientSamples.length && origin !== null) {
    const offset = (holders.started_at_ms - origin) / 1000;
    out.clients = columns(clientSamples, (x) => offset + x.t, { open: (x) => x.open, failed: (x) => x.failed_total });
  }
  if (haproxySamples.length) {
    // A sample without its time stamp (runs before at_ms): its own clock.
    const timeOf = (x) => (Number.isFinite(x.at) && origin !== null ? (x.at - origin) / 1000 : x.t);
    out.haproxy = columns(haproxySamples, timeOf, { conns: (x) => x.haproxy, backend: (x) => x.backend });
  }
  return Object.keys(out).length ? out : null;
}
