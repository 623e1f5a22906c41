// What chart.svg and chart-time.svg share: escaping, round ticks (linear
// and log), tick labels, text, lines and a legend that wraps. Hand-written
// SVG so the lab needs no charting package.

export const W = 640;
// The plot's left and right edges: the axes' tick labels and titles outside.
export const PLOT_LEFT = 64;
export const PLOT_RIGHT = 576;
export const COLORS = {
  measured: '#1f77b4', second: '#9467bd', published: '#ff7f0e', p99: '#1f77b4', p50: '#2ca02c', p50Second: '#8c564b',
  bars: '#d62728', grid: '#dddddd', minor: '#f0f0f0', text: '#222222',
};
// An 11px sans-serif character is about this wide (no font metrics here).
export const CHAR_PX = 6.2;

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

// logTicks MIN MAX → the decades from the one at or below MIN to the one at
// or above MAX (two at least): a log axis's labelled ticks.
export function logTicks(min, max) {
  if (!(min > 0) || !(max >= min)) return [1, 10];
  const lo = Math.floor(Math.log10(min) + 1e-9);
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(max) - 1e-9));
  return Array.from({ length: hi - lo + 1 }, (_, i) => Number((10 ** (lo + i)).toPrecision(12)));
}

// A tick's label: 250000 → 250k, 1500000 → 1.5M; below 10,000 as it is.
export function tickLabel(v) {
  const short = (x) => String(Number(x.toPrecision(3)));
  if (Math.abs(v) >= 1e6) return `${short(v / 1e6)}M`;
  if (Math.abs(v) >= 1e4) return `${short(v / 1e3)}k`;
  return String(v);
}

export const r1 = (v) => Math.round(v * 10) / 10;
export const finite = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
export const textWidth = (s) => String(s).length * CHAR_PX;

// LABEL cut to at most MAX characters, with an ellipsis when cut.
export const clip = (label, max) => (String(label).length <= max ? String(label) : `${String(label).slice(0, Math.max(1, max - 1))}…`);

export function text(x, y, content, attrs = '') {
  return `<text x="${r1(x)}" y="${r1(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;
}

export function hline(x1, x2, y, stroke, extra = '') {
  return `<line x1="${r1(x1)}" y1="${r1(y)}" x2="${r1(x2)}" y2="${r1(y)}" stroke="${stroke}"${extra ? ` ${extra}` : ''}/>`;
}

export function vline(x, y1, y2, stroke, extra = '') {
  return `<line x1="${r1(x)}" y1="${r1(y1)}" x2="${r1(x)}" y2="${r1(y2)}" stroke="${stroke}"${extra ? ` ${extra}` : ''}/>`;
}

export const points = (pts) => pts.map(([x, y]) => `${r1(x)},${r1(y)}`).join(' ');

// runs POINTS → the stretches of consecutive points that are not null: a
// line breaks where a value is missing rather than dropping to zero.
export function runs(pts) {
  const out = [[]];
  for (const p of pts) {
    if (p === null) out.push([]);
    else out[out.length - 1].push(p);
  }
  return out.filter((r) => r.length > 0);
}

// legend ITEMS TOP → {svg, bottom}: each item {symbol(x, y) → svg, label} in
// a row from the plot's left edge; one that would cross the right edge
// starts a new row below.
export function legend(items, top) {
  const out = [];
  let y = top;
  let x = PLOT_LEFT;
  for (const { symbol, label } of items) {
    const width = 40 + textWidth(label);
    if (x > PLOT_LEFT && x + width > W - 8) {
      x = PLOT_LEFT;
      y += 18;
    }
    out.push(symbol(x, y), text(x + 30, y + 4, label));
    x += width;
  }
  return { svg: out, bottom: items.length ? y + 10 : top };
}

// A legend's symbols: a line with an optional marker, a bar.
export function lineSymbol({ color, dash = null, width = 2, marker = 'circle', hollow = false, opacity = 1 }) {
  return (x, y) => {
    const line = `<line x1="${x}" y1="${r1(y)}" x2="${x + 22}" y2="${r1(y)}" stroke="${color}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''}${opacity < 1 ? ` stroke-opacity="${opacity}"` : ''}/>`;
    return `<g>${line}${marker ? markerSvg(marker, x + 11, y, color, hollow) : ''}</g>`;
  };
}

export function barSymbol(color, opacity) {
  return (x, y) => `<rect x="${x + 4}" y="${r1(y - 6)}" width="14" height="12" fill="${color}" fill-opacity="${opacity}"/>`;
}

// A point's marker: a circle or a square, filled or a hollow ring.
export function markerSvg(shape, x, y, color, hollow = false, cls = '') {
  const paint = hollow ? `fill="none" stroke="${color}" stroke-width="2"` : `fill="${color}"`;
  const c = cls ? ` class="${cls}"` : '';
  if (shape === 'square') return `<rect${c} x="${r1(x - 3.5)}" y="${r1(y - 3.5)}" width="7" height="7" ${paint}/>`;
  return `<circle${c} cx="${r1(x)}" cy="${r1(y)}" r="${hollow ? 5 : 4}" ${paint}/>`;
}
