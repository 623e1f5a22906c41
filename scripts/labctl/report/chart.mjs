// chart.svg for a report: the scenario's metric against its x (a line:
// measured, and published where the article gave figures; a second metric
// as bars on the right axis) and, where the steps measured latency, their
// p50 and p99 on a log axis (latency spans decades as a load tips over).
// An x that is a number (a rate, maxconn, connections, cores) is drawn to
// scale, each curve on its own axis; named steps (variants) get even
// slots. Where x is the rate offered, latency is also drawn against the
// rate achieved, as the field reads it: a tipping point is a wall there.
import {
  CHAR_PX, COLORS, PLOT_LEFT, PLOT_RIGHT, W, barSymbol, clip, escapeXml, finite, hline, legend, lineSymbol, logTicks, markerSvg,
  niceTicks, points, r1, runs, text, textWidth, tickLabel, vline,
} from './svg.mjs';

// Plot heights, and the gap between two curves' axes.
const HEIGHT = { metric: 210, latency: 170 };
const CURVE_GAP = 16;
// The latency percentiles the request load tools report (the holder none).
const LATENCY = ['p50_ms', 'p99_ms'];
const ACHIEVED = { metric: 'hits_per_sec', label: 'achieved hits/sec (successful requests ÷ seconds)' };

// renderChart REPORT → SVG string. Steps that did not run are left out.
export function renderChart(report) {
  const c = { y: 'hits_per_sec', y_label: 'hits/sec', y2: 'failed', y2_label: 'failed requests', y2_title: 'failures', ...report.chart };
  const rows = (report.rows ?? []).filter((r) => r.measured);
  const xLabel = report.x?.label ?? 'step';
  const latencyMain = LATENCY.includes(c.y);
  const title = `${report.scenario}: ${xLabel} vs ${latencyMain ? 'p50 and p99 latency' : c.y_label} and ${c.y2_title ?? c.y2_label}${report.incomplete ? ' (incomplete)' : ''}`;
  const ctx = { rows, c, builds: buildsOf(rows, report) };
  const panels = [latencyMain ? latencyPanel(ctx, { xLabel, bars: true }) : metricPanel(ctx, xLabel)];
  // A second panel: latency, where the steps measured it and the first
  // panel does not show it already against the same x.
  const offered = report.x?.name === 'rate';
  if (hasLatency(rows) && (!latencyMain || offered)) {
    panels.push(latencyPanel(ctx, offered
      ? { xLabel: ACHIEVED.label, xOf: (r) => finite(r.measured[ACHIEVED.metric]), subtitle: 'p50 and p99 latency against the rate achieved' }
      : { xLabel, subtitle: 'p50 and p99 latency' }));
  }
  const body = [];
  let top = 44;
  for (const panel of panels) {
    const drawn = drawPanel(panel, top);
    body.push(...drawn.svg);
    top = drawn.bottom + 24;
  }
  const H = Math.round(top - 10);
  return `${[
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" fill="${COLORS.text}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    text(W / 2, 24, title, 'text-anchor="middle" font-size="14" font-weight="bold"'),
    ...body,
    '</svg>',
  ].join('\n')}\n`;
}

const hasLatency = (rows) => rows.some((r) => LATENCY.some((m) => finite(r.measured?.[m]) > 0));

// The HAProxy builds a --versus run compares: a twin row (versus_of) ran
// the second. {second: bool, images: [first, second]}.
function buildsOf(rows, report) {
  const second = rows.some((r) => r.versus_of);
  const image = (twin) => rows.find((r) => Boolean(r.versus_of) === twin && r.build?.image)?.build.image;
  return { second, images: [image(false) ?? 'first image', image(true) ?? report.options?.versus ?? 'second image'] };
}

// One line per build: the first's in the metric's own style, the second's
// in its own colour with squares.
function perBuild(ctx, series) {
  if (!ctx.builds.second) return [{ ...series, twin: false }];
  return [false, true].map((twin) => ({
    ...series, twin,
    label: `${series.label}, ${ctx.builds.images[Number(twin)]}`,
    ...(twin ? { color: series.twinColor ?? COLORS.second, marker: 'square', cls: `${series.cls}-second` } : {}),
  }));
}

// The scenario's metric: linear axis, the bars on the right.
function metricPanel(ctx, xLabel) {
  const { rows, c } = ctx;
  const lines = perBuild(ctx, { cls: 'measured', label: `${c.y_label} measured`, color: COLORS.measured, valueOf: (r) => finite(r.measured[c.y]) });
  if (rows.some((r) => finite(r.published?.[c.y]) !== null)) {
    lines.push({ cls: 'published', label: `${c.y_label} published`, color: COLORS.published, dash: '6 4', hollow: true, twin: false,
      valueOf: (r) => finite(r.published?.[c.y]) });
  }
  const values = lines.flatMap((l) => rows.map(l.valueOf)).filter((v) => v !== null);
  return {
    kind: 'metric', rows, xLabel, xOf: null, lines, bars: barsOf(ctx),
    left: { label: c.y_label, scale: 'linear', ticks: niceTicks(Math.max(0, ...values)) },
  };
}

// p50 and p99 on a log axis; against x (the scenario's, or XOF's); the bars
// when it is the chart's first panel.
function latencyPanel(ctx, { xLabel, xOf = null, subtitle = null, bars = false }) {
  const { rows, c } = ctx;
  const lines = [
    ...perBuild(ctx, { cls: 'p99', label: 'p99 ms', color: COLORS.p99, valueOf: (r) => positive(r.measured.p99_ms) }),
    ...perBuild(ctx, { cls: 'p50', label: 'p50 ms', color: COLORS.p50, twinColor: COLORS.p50Second, valueOf: (r) => positive(r.measured.p50_ms) }),
  ];
  if (LATENCY.includes(c.y) && rows.some((r) => positive(r.published?.[c.y]) !== null)) {
    lines.push({ cls: 'published', label: `${c.y_label} published`, color: COLORS.published, dash: '6 4', hollow: true, twin: false,
      valueOf: (r) => positive(r.published?.[c.y]) });
  }
  const values = lines.flatMap((l) => rows.map(l.valueOf)).filter((v) => v !== null);
  return {
    kind: 'latency', rows, xLabel, xOf, subtitle, lines, bars: bars ? barsOf(ctx) : null,
    left: { label: 'latency ms (log scale)', scale: 'log', ticks: logTicks(Math.min(...values), Math.max(...values)) },
  };
}

// A log axis has no place for 0 (p50 of a step whose requests all failed).
const positive = (v) => (finite(v) > 0 ? v : null);

function barsOf(ctx) {
  const { rows, c } = ctx;
  const valueOf = (r) => finite(r.measured[c.y2]) ?? 0;
  return { label: c.y2_label, valueOf, ticks: niceTicks(Math.max(0, ...rows.map(valueOf)), { integer: true }), images: ctx.builds };
}

// The panel's curves, each on its own stretch of the x axis, in the order
// they first appear. A --versus twin on the same curve takes its first
// step's place (anchor); the others are places of their own.
function curvesOf(rows) {
  const names = [...new Set(rows.map((r) => r.curve ?? null))];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return names.map((name) => {
    const members = rows.filter((r) => (r.curve ?? null) === name);
    const anchor = new Map(members.map((r) => {
      const first = r.versus_of ? byId.get(r.versus_of) : null;
      return [r, first && (first.curve ?? null) === name ? first : r];
    }));
    return { name, rows: members, anchor, places: members.filter((r) => anchor.get(r) === r) };
  });
}

// The x scale of one curve between X0 and X1: to scale when every place's x
// is a number (0 to a round top), else one slot per place.
function xScale(curve, xOf, x0, x1) {
  const placeOf = (r) => (xOf ? r : curve.anchor.get(r));
  const valueOf = (r) => (xOf ? xOf(r) : r.x);
  const placed = xOf ? curve.rows.filter((r) => xOf(r) !== null) : curve.places;
  const values = placed.map(valueOf);
  if (placed.length > 0 && values.every((v) => finite(v) !== null)) {
    const pad = 12;
    const count = Math.max(2, Math.min(6, Math.floor((x1 - x0) / 40) + 1));
    // Counts (cores, connections, maxconn) get whole ticks.
    const ticks = niceTicks(Math.max(0, ...values), { count, integer: values.every(Number.isInteger) });
    const top = ticks[ticks.length - 1];
    const at = (v) => x0 + pad + (v / top) * (x1 - x0 - 2 * pad);
    return { numeric: true, x0, x1, ticks: ticks.map((v) => ({ at: at(v), label: tickLabel(v) })),
      xOf: (r) => (valueOf(placeOf(r)) === null ? null : at(valueOf(placeOf(r)))) };
  }
  const slot = (x1 - x0) / Math.max(1, curve.places.length);
  const index = new Map(curve.places.map((r, i) => [r, i]));
  const at = (i) => x0 + slot * (i + 0.5);
  return { numeric: false, x0, x1, slot,
    ticks: curve.places.map((r, i) => ({ at: at(i), label: String(r.x ?? r.label) })), xOf: (r) => at(index.get(curve.anchor.get(r))) };
}

// A curve's NAME over its stretch of the axis: whole when it fits MAX
// characters, else broken after its hyphens (plain-keepalive-quota), each
// line cut to MAX.
const CURVE_NAME_PX = 5.1;
function nameLines(name, max) {
  if (name.length <= max) return [name];
  const lines = [];
  for (const part of name.split(/(?<=-)/)) {
    if (lines.length && lines[lines.length - 1].length + part.length <= max) lines[lines.length - 1] += part;
    else lines.push(part);
  }
  return lines.map((l) => clip(l, max));
}

// LABEL on two lines, split between words where the longer line is
// shortest ([LABEL] when it has one word).
function twoLines(label) {
  const words = String(label).split(' ');
  let best = [String(label)];
  for (let k = 1; k < words.length; k += 1) {
    const split = [words.slice(0, k).join(' '), words.slice(k).join(' ')];
    if (Math.max(...split.map((l) => l.length)) < Math.max(...best.map((l) => l.length))) best = split;
  }
  return best;
}

// The category labels' layout: level when they fit their slots, on two
// lines when that fits, else slanted (upright in narrow slots), cut short
// so none runs off the chart.
function labelLayout(scales) {
  const slotted = scales.filter((s) => !s.numeric);
  if (slotted.length === 0) return { angle: 0, lines: 1, height: 16, max: Infinity };
  const slot = Math.min(...slotted.map((s) => s.slot));
  const labels = slotted.flatMap((s) => s.ticks.map((t) => t.label));
  const widest = Math.max(...labels.map((l) => textWidth(l)));
  if (widest <= slot - 6) return { angle: 0, lines: 1, height: 16, max: Infinity };
  if (labels.every((l) => Math.max(...twoLines(l).map((line) => textWidth(line))) <= slot - 6)) return { angle: 0, lines: 2, height: 32, max: Infinity };
  if (slot < 20) {
    const max = 22;
    return { angle: -90, max, height: Math.min(widest, textWidth('x'.repeat(max))) + 16 };
  }
  // -30°: a label reaches 0.87 × its width to the left of its slot's middle.
  const max = Math.max(10, Math.min(30, Math.floor((PLOT_LEFT + slot / 2 - 4) / 0.87 / CHAR_PX)));
  return { angle: -30, max, height: Math.min(widest, textWidth('x'.repeat(max))) / 2 + 18 };
}

// drawPanel PANEL TOP → {svg, bottom}: subtitle, curve names, grid, axes,
// bars, lines, x labels, x title, legend, from TOP down.
function drawPanel(panel, top) {
  const out = [];
  let y = top;
  if (panel.subtitle) {
    out.push(text(W / 2, y + 2, panel.subtitle, 'text-anchor="middle" font-size="12" font-weight="bold"'));
    y += 16;
  }
  const curves = curvesOf(panel.rows);
  const width = (PLOT_RIGHT - PLOT_LEFT - CURVE_GAP * (curves.length - 1)) / Math.max(1, curves.length);
  const names = curves.map((cv) => (cv.name === null ? [] : nameLines(cv.name, Math.floor(width / CURVE_NAME_PX))));
  y += 11 * Math.max(0, ...names.map((n) => n.length));
  const plotTop = y + 4;
  const plotBottom = plotTop + HEIGHT[panel.kind];
  const scales = curves.map((cv, i) => xScale(cv, panel.xOf, PLOT_LEFT + i * (width + CURVE_GAP), PLOT_LEFT + i * (width + CURVE_GAP) + width));
  const yLeft = yScale(panel.left, plotTop, plotBottom);
  const yRight = panel.bars ? yScale({ scale: 'linear', ticks: panel.bars.ticks }, plotTop, plotBottom) : null;

  out.push(...leftAxis(panel.left, yLeft, plotTop, plotBottom));
  if (panel.bars) out.push(...rightAxis(panel.bars, yRight, plotTop, plotBottom));
  if (panel.rows.length === 0) out.push(text((PLOT_LEFT + PLOT_RIGHT) / 2, (plotTop + plotBottom) / 2, 'no step ran', 'text-anchor="middle" font-size="14"'));
  const layout = labelLayout(scales);
  curves.forEach((cv, i) => {
    const s = scales[i];
    out.push(hline(s.x0, s.x1, plotBottom, COLORS.text));
    names[i].forEach((line, k) => {
      out.push(text((s.x0 + s.x1) / 2, plotTop - 6 - 11 * (names[i].length - 1 - k), line, 'text-anchor="middle" font-size="9" class="curve-name"'));
    });
    if (i > 0) out.push(vline(s.x0 - CURVE_GAP / 2, plotTop, plotBottom, COLORS.text, 'class="curve-border" stroke-dasharray="3 3" stroke-opacity="0.5"'));
    if (panel.bars) out.push(...drawBars(panel.bars, cv, s, yRight, plotBottom));
    for (const line of panel.lines) out.push(...drawLine(line, cv, s, yLeft));
    out.push(...xTicks(s, layout, plotBottom));
  });
  const titleY = plotBottom + layout.height + 14;
  out.push(text((PLOT_LEFT + PLOT_RIGHT) / 2, titleY, panel.xLabel, 'text-anchor="middle" font-size="12"'));
  const items = panel.lines.map((l) => ({ symbol: lineSymbol({ color: l.color, dash: l.dash, marker: l.marker ?? 'circle', hollow: l.hollow }), label: l.label }));
  if (panel.bars) {
    const { second, images } = panel.bars.images;
    if (second) images.forEach((image, k) => items.push({ symbol: barSymbol(COLORS.bars, k ? 0.7 : 0.35), label: `${panel.bars.label}, ${image} (right axis)` }));
    else items.push({ symbol: barSymbol(COLORS.bars, 0.35), label: `${panel.bars.label} (right axis)` });
  }
  const drawn = legend(items, titleY + 22);
  out.push(...drawn.svg);
  return { svg: out, bottom: drawn.bottom };
}

// AXIS {scale: linear|log, ticks} → value → y between TOP and BOTTOM.
function yScale(axis, top, bottom) {
  const [lo, hi] = [axis.ticks[0], axis.ticks[axis.ticks.length - 1]];
  if (axis.scale === 'log') return (v) => bottom - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (bottom - top);
  return (v) => bottom - ((v - lo) / (hi - lo)) * (bottom - top);
}

// The left axis: grid at each tick (a log axis's 2× and 5× too, fainter,
// and labelled when it spans two decades or less), its labels, its line and
// its title.
function leftAxis(axis, y, top, bottom) {
  const out = [];
  if (axis.scale === 'log') {
    const few = axis.ticks.length <= 3;
    for (const decade of axis.ticks.slice(0, -1)) {
      for (const k of [2, 5]) {
        const v = Number((decade * k).toPrecision(12));
        out.push(hline(PLOT_LEFT, PLOT_RIGHT, y(v), COLORS.minor, 'class="minor"'));
        if (few) out.push(text(PLOT_LEFT - 6, y(v) + 4, tickLabel(v), 'text-anchor="end" fill="#777777" class="log-minor-tick"'));
      }
    }
  }
  for (const v of axis.ticks) {
    out.push(hline(PLOT_LEFT, PLOT_RIGHT, y(v), COLORS.grid));
    out.push(text(PLOT_LEFT - 6, y(v) + 4, tickLabel(v), `text-anchor="end" class="${axis.scale}-tick"`));
  }
  out.push(vline(PLOT_LEFT, top, bottom, COLORS.text));
  const mid = (top + bottom) / 2;
  out.push(text(16, mid, axis.label, `text-anchor="middle" transform="rotate(-90 16 ${r1(mid)})"`));
  return out;
}

function rightAxis(bars, y, top, bottom) {
  const mid = (top + bottom) / 2;
  return [
    ...bars.ticks.map((v) => text(PLOT_RIGHT + 6, y(v) + 4, tickLabel(v), `fill="${COLORS.bars}"`)),
    vline(PLOT_RIGHT, top, bottom, COLORS.text),
    text(W - 12, mid, bars.label, `text-anchor="middle" fill="${COLORS.bars}" transform="rotate(90 ${W - 12} ${r1(mid)})"`),
  ];
}

// Bars of one curve, drawn before the lines so the lines go over them. To
// scale, a bar is narrower than the gap to its neighbours; a --versus run
// puts the second build's bar beside the first's.
function drawBars(bars, curve, scale, y, bottom) {
  const xs = [...new Set(curve.places.map((r) => scale.xOf(r)).filter((x) => x !== null))].sort((a, b) => a - b);
  const gapAt = (x) => Math.min(scale.x1 - scale.x0, ...xs.filter((o) => o !== x).map((o) => Math.abs(o - x)));
  const two = bars.images.second;
  const out = [];
  for (const row of curve.rows) {
    const x = scale.xOf(row);
    if (x === null) continue;
    // Never past the curve's own stretch of the axis.
    const room = 2 * Math.min(x - scale.x0, scale.x1 - x);
    const full = Math.max(3, Math.min(room, scale.numeric ? Math.min(36, gapAt(x) * 0.6) : Math.min(40, scale.slot * 0.5)));
    const w = two ? full / 2 : full;
    const left = two ? x - w + (row.versus_of ? w : 0) : x - w / 2;
    const top = y(bars.valueOf(row));
    out.push(`<rect class="bar" x="${r1(left)}" y="${r1(top)}" width="${r1(w)}" height="${r1(bottom - top)}" fill="${COLORS.bars}" fill-opacity="${row.versus_of ? 0.7 : 0.35}"/>`);
  }
  return out;
}

// One series over one curve, in the rows' order, broken where a value is
// missing; its markers on top.
function drawLine(line, curve, scale, y) {
  const rows = curve.rows.filter((r) => Boolean(r.versus_of) === line.twin);
  const pts = rows.map((r) => {
    const v = line.valueOf(r);
    const x = scale.xOf(r);
    return v === null || x === null ? null : [x, y(v)];
  });
  const out = [];
  const dash = line.dash ? ` stroke-dasharray="${line.dash}"` : '';
  for (const stretch of runs(pts)) {
    if (stretch.length > 1) out.push(`<polyline class="${line.cls}" points="${points(stretch)}" fill="none" stroke="${line.color}" stroke-width="2"${dash}/>`);
  }
  for (const [x, py] of pts.filter(Boolean)) out.push(markerSvg(line.marker ?? 'circle', x, py, line.color, line.hollow, `${line.cls}-point`));
  return out;
}

// The x axis's labels under one curve: its round values to scale, else
// each slot's step.
function xTicks(scale, layout, bottom) {
  const out = [];
  for (const t of scale.ticks) {
    if (scale.numeric) {
      out.push(vline(t.at, bottom, bottom + 4, COLORS.text));
      out.push(text(t.at, bottom + 16, t.label, 'text-anchor="middle" class="x-tick"'));
    } else if (layout.lines === 2) {
      const lines = twoLines(t.label).map((l, k) => `<tspan x="${r1(t.at)}" dy="${k ? 13 : 0}">${escapeXml(l)}</tspan>`);
      out.push(`<text x="${r1(t.at)}" y="${bottom + 16}" text-anchor="middle" class="x-slot">${lines.join('')}</text>`);
    } else if (layout.angle === 0) {
      out.push(text(t.at, bottom + 16, t.label, 'text-anchor="middle" class="x-slot"'));
    } else {
      out.push(text(t.at, bottom + 14, clip(t.label, layout.max), `text-anchor="end" class="x-slot" transform="rotate(${layout.angle} ${r1(t.at)} ${bottom + 14})"`));
    }
  }
  return out;
}
