// chart.svg for a report: hits/sec (measured, and published when the article
// gave figures) on the left axis, failed requests as bars on the right axis.
// Hand-written SVG so the lab needs no charting package.

const W = 640;
const H = 400;
const PLOT = { left: 64, right: 576, top: 48, bottom: 300 };
const COLORS = { measured: '#1f77b4', published: '#ff7f0e', failed: '#d62728', grid: '#dddddd', text: '#222222' };

export function escapeXml(value) {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

// 0..top in round steps (1, 2, 2.5, 5 × 10^k); integer steps for counts.
export function niceTicks(max, { integer = false, count = 5 } = {}) {
  if (!(max > 0)) return [0, 1];
  const raw = max / (count - 1);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const f = raw / magnitude;
  let step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * magnitude;
  if (integer) step = Math.max(1, Math.ceil(step));
  const n = Math.ceil(max / step - 1e-9);
  // toPrecision: no 0.30000000000000004 in the labels.
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

const r1 = (v) => Math.round(v * 10) / 10;
const finite = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function text(x, y, content, attrs = '') {
  return `<text x="${r1(x)}" y="${r1(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;
}

// renderChart REPORT → SVG string. Steps that did not run are left out.
export function renderChart(report) {
  const g = geometry(report);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" fill="${COLORS.text}">`,
    `<title>${escapeXml(g.title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    text(W / 2, 24, g.title, 'text-anchor="middle" font-size="15" font-weight="bold"'),
    ...axes(g),
    ...bars(g),
    ...lines(g),
    ...legend(g),
    '</svg>',
  ];
  return `${out.join('\n')}\n`;
}

// What the chart shows and where: the series, both axes' ticks and scales,
// one slot per step along x.
function geometry(report) {
  const rows = (report.rows ?? []).filter((r) => r.measured);
  const xLabel = report.x?.label ?? 'step';
  // The scenario may chart other metrics (e.g. p99 latency against the rate).
  const c = { y: 'hits_per_sec', y_label: 'hits/sec', y2: 'failed', y2_label: 'failed requests', y2_title: 'failures', ...report.chart };
  const hits = rows.map((r) => finite(r.measured[c.y]) ?? 0);
  const published = rows.map((r) => finite(r.published?.[c.y]));
  const failed = rows.map((r) => finite(r.measured[c.y2]) ?? 0);
  const left = niceTicks(Math.max(0, ...hits, ...published.filter((v) => v !== null)));
  const right = niceTicks(Math.max(0, ...failed), { integer: true });
  const height = PLOT.bottom - PLOT.top;
  const slot = (PLOT.right - PLOT.left) / Math.max(rows.length, 1);
  return {
    rows, xLabel, c, hits, published, failed, left, right, slot,
    title: `${report.scenario}: ${xLabel} vs ${c.y_label} and ${c.y2_title ?? c.y2_label}${report.incomplete ? ' (incomplete)' : ''}`,
    hasPublished: published.some((v) => v !== null),
    yLeft: (v) => PLOT.bottom - (v / left[left.length - 1]) * height,
    yRight: (v) => PLOT.bottom - (v / right[right.length - 1]) * height,
    xAt: (i) => PLOT.left + slot * (i + 0.5),
    midY: (PLOT.top + PLOT.bottom) / 2,
    // Many steps: slanted tick labels (below), so the axis name moves down;
    // narrow slots: upright ones, and the legend moves down as well.
    slanted: rows.length > 8,
    upright: slot < 20,
  };
}

// Grid and tick labels (left axis: the measured metric, right axis: the
// failures), the axis lines and their names.
function axes(g) {
  const out = [];
  for (const v of g.left) {
    const y = g.yLeft(v);
    out.push(`<line x1="${PLOT.left}" y1="${r1(y)}" x2="${PLOT.right}" y2="${r1(y)}" stroke="${COLORS.grid}"/>`);
    out.push(text(PLOT.left - 6, y + 4, v, 'text-anchor="end"'));
  }
  for (const v of g.right) out.push(text(PLOT.right + 6, g.yRight(v) + 4, v, `fill="${COLORS.failed}"`));
  out.push(`<line x1="${PLOT.left}" y1="${PLOT.top}" x2="${PLOT.left}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);
  out.push(`<line x1="${PLOT.right}" y1="${PLOT.top}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);
  out.push(`<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);
  out.push(text(18, g.midY, g.c.y_label, `text-anchor="middle" transform="rotate(-90 18 ${r1(g.midY)})"`));
  out.push(text(W - 14, g.midY, g.c.y2_label, `text-anchor="middle" fill="${COLORS.failed}" transform="rotate(90 ${W - 14} ${r1(g.midY)})"`));
  out.push(text((PLOT.left + PLOT.right) / 2, PLOT.bottom + (g.slanted ? 64 : 42), g.xLabel, 'text-anchor="middle" font-size="12"'));
  if (g.rows.length === 0) out.push(text((PLOT.left + PLOT.right) / 2, g.midY, 'no step ran', 'text-anchor="middle" font-size="14"'));
  return out;
}

// Failure bars and each step's label, drawn first so the lines go over them.
function bars(g) {
  const out = [];
  const barWidth = Math.min(40, g.slot * 0.5);
  g.rows.forEach((row, i) => {
    const y = g.yRight(g.failed[i]);
    out.push(`<rect class="failed" x="${r1(g.xAt(i) - barWidth / 2)}" y="${r1(y)}" width="${r1(barWidth)}" height="${r1(PLOT.bottom - y)}" fill="${COLORS.failed}" fill-opacity="0.35"/>`);
    // Narrow slots (many steps): upright labels, which do not run into each other.
    const angle = g.upright ? -90 : -30;
    const slant = g.slanted ? ` text-anchor="end" transform="rotate(${angle} ${r1(g.xAt(i))} ${PLOT.bottom + 16})"` : ' text-anchor="middle"';
    out.push(text(g.xAt(i), PLOT.bottom + 16, row.x ?? row.label, slant.trim()));
  });
  return out;
}

// The measured line, then the published one: its hollow rings stay visible
// where both agree.
function lines(g) {
  const out = [];
  const polyline = (pts) => pts.map(([x, y]) => `${r1(x)},${r1(y)}`).join(' ');
  if (g.rows.length > 0) {
    const pts = g.hits.map((v, i) => [g.xAt(i), g.yLeft(v)]);
    // One line per curve (consecutive steps of the same curve), a dashed
    // border between curves: a line from one curve to the next means nothing.
    let start = 0;
    g.rows.forEach((row, i) => {
      const next = g.rows[i + 1];
      if (next && (next.curve ?? null) === (row.curve ?? null)) return;
      out.push(`<polyline class="measured" points="${polyline(pts.slice(start, i + 1))}" fill="none" stroke="${COLORS.measured}" stroke-width="2"/>`);
      if (row.curve) {
        const mid = (g.xAt(start) + g.xAt(i)) / 2;
        out.push(text(mid, PLOT.top - 4, row.curve, 'text-anchor="middle" font-size="9" class="curve-name"'));
      }
      if (next) {
        const x = r1(g.xAt(i) + g.slot / 2);
        out.push(`<line class="curve-border" x1="${x}" y1="${PLOT.top}" x2="${x}" y2="${PLOT.bottom}" stroke="${COLORS.text}" stroke-dasharray="3 3" stroke-opacity="0.5"/>`);
      }
      start = i + 1;
    });
    for (const [x, y] of pts) out.push(`<circle cx="${r1(x)}" cy="${r1(y)}" r="4" fill="${COLORS.measured}"/>`);
  }
  if (g.hasPublished) {
    const pts = g.published.map((v, i) => (v === null ? null : [g.xAt(i), g.yLeft(v)])).filter(Boolean);
    out.push(`<polyline class="published" points="${polyline(pts)}" fill="none" stroke="${COLORS.published}" stroke-width="2" stroke-dasharray="6 4"/>`);
    for (const [x, y] of pts) out.push(`<circle cx="${r1(x)}" cy="${r1(y)}" r="5" fill="none" stroke="${COLORS.published}" stroke-width="2"/>`);
  }
  return out;
}

// Legend along the bottom edge; an item that would cross the right edge
// starts a new line below (long axis names).
function legend(g) {
  const out = [];
  let legendY = g.upright ? H - 18 : H - 40;
  let lx = PLOT.left;
  const item = (symbol, label) => {
    const width = 40 + label.length * 6.5;
    if (lx > PLOT.left && lx + width > W - 8) {
      lx = PLOT.left;
      legendY += 20;
    }
    out.push(symbol(lx), text(lx + 30, legendY + 4, label));
    lx += width;
  };
  item((x) => `<g><line x1="${x}" y1="${legendY}" x2="${x + 22}" y2="${legendY}" stroke="${COLORS.measured}" stroke-width="2"/><circle cx="${x + 11}" cy="${legendY}" r="4" fill="${COLORS.measured}"/></g>`, `${g.c.y_label} measured`);
  if (g.hasPublished) {
    item((x) => `<g><line x1="${x}" y1="${legendY}" x2="${x + 22}" y2="${legendY}" stroke="${COLORS.published}" stroke-width="2" stroke-dasharray="6 4"/><circle cx="${x + 11}" cy="${legendY}" r="4" fill="#ffffff" stroke="${COLORS.published}" stroke-width="2"/></g>`, `${g.c.y_label} published`);
  }
  item((x) => `<rect x="${x + 4}" y="${legendY - 6}" width="14" height="12" fill="${COLORS.failed}" fill-opacity="0.35"/>`, `${g.c.y2_label} (right axis)`);
  return out;
}
