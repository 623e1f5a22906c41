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
  const rows = (report.rows ?? []).filter((r) => r.measured);
  const xLabel = report.x?.label ?? 'step';
  // The scenario may chart other metrics (e.g. p99 latency against the rate).
  const c = { y: 'hits_per_sec', y_label: 'hits/sec', y2: 'failed', y2_label: 'failed requests', y2_title: 'failures', ...report.chart };
  const title = `${report.scenario}: ${xLabel} vs ${c.y_label} and ${c.y2_title ?? c.y2_label}${report.incomplete ? ' (incomplete)' : ''}`;
  const hits = rows.map((r) => finite(r.measured[c.y]) ?? 0);
  const published = rows.map((r) => finite(r.published?.[c.y]));
  const hasPublished = published.some((v) => v !== null);
  const failed = rows.map((r) => finite(r.measured[c.y2]) ?? 0);

  const left = niceTicks(Math.max(0, ...hits, ...published.filter((v) => v !== null)));
  const right = niceTicks(Math.max(0, ...failed), { integer: true });
  const height = PLOT.bottom - PLOT.top;
  const yLeft = (v) => PLOT.bottom - (v / left[left.length - 1]) * height;
  const yRight = (v) => PLOT.bottom - (v / right[right.length - 1]) * height;
  const slot = (PLOT.right - PLOT.left) / Math.max(rows.length, 1);
  const xAt = (i) => PLOT.left + slot * (i + 0.5);
  const midY = (PLOT.top + PLOT.bottom) / 2;

  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" fill="${COLORS.text}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    text(W / 2, 24, title, 'text-anchor="middle" font-size="15" font-weight="bold"'),
  ];

  // Grid and tick labels: left axis hits/sec, right axis failed requests.
  for (const v of left) {
    const y = yLeft(v);
    out.push(`<line x1="${PLOT.left}" y1="${r1(y)}" x2="${PLOT.right}" y2="${r1(y)}" stroke="${COLORS.grid}"/>`);
    out.push(text(PLOT.left - 6, y + 4, v, 'text-anchor="end"'));
  }
  for (const v of right) out.push(text(PLOT.right + 6, yRight(v) + 4, v, `fill="${COLORS.failed}"`));
  out.push(`<line x1="${PLOT.left}" y1="${PLOT.top}" x2="${PLOT.left}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);
  out.push(`<line x1="${PLOT.right}" y1="${PLOT.top}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);
  out.push(`<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.right}" y2="${PLOT.bottom}" stroke="${COLORS.text}"/>`);

  // Axis names.
  out.push(text(18, midY, c.y_label, `text-anchor="middle" transform="rotate(-90 18 ${r1(midY)})"`));
  out.push(text(W - 14, midY, c.y2_label, `text-anchor="middle" fill="${COLORS.failed}" transform="rotate(90 ${W - 14} ${r1(midY)})"`));
  // Many steps: slanted tick labels (below), so the axis name moves down.
  const slanted = rows.length > 8;
  out.push(text((PLOT.left + PLOT.right) / 2, PLOT.bottom + (slanted ? 64 : 42), xLabel, 'text-anchor="middle" font-size="12"'));

  if (rows.length === 0) out.push(text((PLOT.left + PLOT.right) / 2, midY, 'no step ran', 'text-anchor="middle" font-size="14"'));

  // Failure bars first, so the lines are drawn over them.
  const barWidth = Math.min(40, slot * 0.5);
  rows.forEach((row, i) => {
    const y = yRight(failed[i]);
    out.push(`<rect class="failed" x="${r1(xAt(i) - barWidth / 2)}" y="${r1(y)}" width="${r1(barWidth)}" height="${r1(PLOT.bottom - y)}" fill="${COLORS.failed}" fill-opacity="0.35"/>`);
    const slant = slanted ? ` text-anchor="end" transform="rotate(-30 ${r1(xAt(i))} ${PLOT.bottom + 16})"` : ' text-anchor="middle"';
    out.push(text(xAt(i), PLOT.bottom + 16, row.x ?? row.label, slant.trim()));
  });

  if (rows.length > 0) {
    const pts = hits.map((v, i) => [xAt(i), yLeft(v)]);
    out.push(`<polyline class="measured" points="${pts.map(([x, y]) => `${r1(x)},${r1(y)}`).join(' ')}" fill="none" stroke="${COLORS.measured}" stroke-width="2"/>`);
    for (const [x, y] of pts) out.push(`<circle cx="${r1(x)}" cy="${r1(y)}" r="4" fill="${COLORS.measured}"/>`);
  }

  // Published after measured: its hollow rings stay visible where both agree.
  if (hasPublished) {
    const pts = published.map((v, i) => (v === null ? null : [xAt(i), yLeft(v)])).filter(Boolean);
    out.push(`<polyline class="published" points="${pts.map(([x, y]) => `${r1(x)},${r1(y)}`).join(' ')}" fill="none" stroke="${COLORS.published}" stroke-width="2" stroke-dasharray="6 4"/>`);
    for (const [x, y] of pts) out.push(`<circle cx="${r1(x)}" cy="${r1(y)}" r="5" fill="none" stroke="${COLORS.published}" stroke-width="2"/>`);
  }

  // Legend along the bottom edge; an item that would cross the right edge
  // starts a new line below (long axis names).
  let legendY = H - 40;
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
  item((x) => `<g><line x1="${x}" y1="${legendY}" x2="${x + 22}" y2="${legendY}" stroke="${COLORS.measured}" stroke-width="2"/><circle cx="${x + 11}" cy="${legendY}" r="4" fill="${COLORS.measured}"/></g>`, `${c.y_label} measured`);
  if (hasPublished) {
    item((x) => `<g><line x1="${x}" y1="${legendY}" x2="${x + 22}" y2="${legendY}" stroke="${COLORS.published}" stroke-width="2" stroke-dasharray="6 4"/><circle cx="${x + 11}" cy="${legendY}" r="4" fill="#ffffff" stroke="${COLORS.published}" stroke-width="2"/></g>`, `${c.y_label} published`);
  }
  item((x) => `<rect x="${x + 4}" y="${legendY - 6}" width="14" height="12" fill="${COLORS.failed}" fill-opacity="0.35"/>`, `${c.y2_label} (right axis)`);

  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
