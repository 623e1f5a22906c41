// chart-time.svg: the connections of each step that held them (the rows'
// series, evidence/series.mjs) against the seconds since the step started,
// one colour per step: the clients' as a wide pale band, HAProxy's as a line
// over it, HAProxy's to the backends dashed; the clients' failures so far on
// the right axis when there were any. Ramp, hold and drain read off it.
import {
  COLORS, PLOT_LEFT, PLOT_RIGHT, W, clip, escapeXml, hline, legend, lineSymbol, niceTicks, points, r1, runs, text, tickLabel, vline,
} from './svg.mjs';

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const HEIGHT = 240;
// What each line is: its series (source, column) and its look.
const KINDS = [
  { source: 'clients', key: 'open', label: 'held by the clients', width: 6, opacity: 0.3 },
  { source: 'haproxy', key: 'conns', label: 'HAProxy\'s connections', width: 1.5 },
  { source: 'haproxy', key: 'backend', label: 'HAProxy\'s to the backends', width: 1, dash: '4 3' },
];
const FAILED = { source: 'clients', key: 'failed', label: 'failed so far (right axis)', width: 1.5, dash: '1 3' };

// The steps drawn: those that ran and have a series.
const timed = (report) => (report.rows ?? []).filter((r) => r.measured && r.series);
export const hasTimeSeries = (report) => timed(report).length > 0;

// renderTimeChart REPORT → SVG string, or null when no step has a series.
export function renderTimeChart(report) {
  const rows = timed(report);
  if (rows.length === 0) return null;
  const columnOf = (row, kind) => {
    const s = row.series[kind.source];
    return s?.[kind.key] ? s.t.map((t, i) => [t, s[kind.key][i]]).filter(([t]) => t >= 0) : null;
  };
  const present = KINDS.filter((k) => rows.some((r) => columnOf(r, k)));
  const failed = rows.some((r) => (columnOf(r, FAILED) ?? []).some(([, v]) => v > 0));
  const all = (kinds) => rows.flatMap((r) => kinds.flatMap((k) => columnOf(r, k) ?? []));
  const xTicks = niceTicks(Math.max(0, ...all([...present, FAILED]).map(([t]) => t)), { count: 7 });
  const yTicks = niceTicks(Math.max(0, ...all(present).map(([, v]) => v ?? 0)), { integer: true });
  const fTicks = niceTicks(Math.max(0, ...all([FAILED]).map(([, v]) => v ?? 0)), { integer: true });
  const top = 44;
  const bottom = top + HEIGHT;
  const x = (t) => PLOT_LEFT + (t / xTicks[xTicks.length - 1]) * (PLOT_RIGHT - PLOT_LEFT);
  const y = (v) => bottom - (v / yTicks[yTicks.length - 1]) * HEIGHT;
  const yFailed = (v) => bottom - (v / fTicks[fTicks.length - 1]) * HEIGHT;
  const title = `${report.scenario}: connections over time, each step from its start${report.incomplete ? ' (incomplete)' : ''}`;

  const out = [];
  for (const v of yTicks) out.push(hline(PLOT_LEFT, PLOT_RIGHT, y(v), COLORS.grid), text(PLOT_LEFT - 6, y(v) + 4, tickLabel(v), 'text-anchor="end"'));
  for (const t of xTicks) out.push(vline(x(t), bottom, bottom + 4, COLORS.text), text(x(t), bottom + 16, tickLabel(t), 'text-anchor="middle" class="x-tick"'));
  out.push(vline(PLOT_LEFT, top, bottom, COLORS.text), hline(PLOT_LEFT, PLOT_RIGHT, bottom, COLORS.text));
  out.push(text(16, top + HEIGHT / 2, 'connections', `text-anchor="middle" transform="rotate(-90 16 ${r1(top + HEIGHT / 2)})"`));
  if (failed) {
    out.push(vline(PLOT_RIGHT, top, bottom, COLORS.text));
    for (const v of fTicks) out.push(text(PLOT_RIGHT + 6, yFailed(v) + 4, tickLabel(v), `fill="${COLORS.bars}"`));
    out.push(text(W - 12, top + HEIGHT / 2, 'failed so far', `text-anchor="middle" fill="${COLORS.bars}" transform="rotate(90 ${W - 12} ${r1(top + HEIGHT / 2)})"`));
  }
  // Every step's band first, then the lines over all of them.
  const drawn = [...present, ...(failed ? [FAILED] : [])];
  for (const kind of drawn) {
    rows.forEach((row, i) => {
      const pts = (columnOf(row, kind) ?? []).map(([t, v]) => (v === null ? null : [x(t), (kind === FAILED ? yFailed : y)(v)]));
      const style = `fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="${kind.width}"${kind.opacity ? ` stroke-opacity="${kind.opacity}" stroke-linejoin="round"` : ''}${kind.dash ? ` stroke-dasharray="${kind.dash}"` : ''}`;
      for (const stretch of runs(pts)) out.push(`<polyline class="${kind.key}" data-step="${escapeXml(row.id)}" points="${points(stretch)}" ${style}/>`);
    });
  }
  const titleY = bottom + 30;
  out.push(text((PLOT_LEFT + PLOT_RIGHT) / 2, titleY, 'seconds since the step started', 'text-anchor="middle" font-size="12"'));
  const steps = rows.map((row, i) => ({ symbol: lineSymbol({ color: PALETTE[i % PALETTE.length], width: 4, marker: null }), label: clip(row.label ?? row.x, 60) }));
  const looks = drawn.map((k) => ({ symbol: lineSymbol({ color: '#555555', width: k.width, dash: k.dash, opacity: k.opacity ?? 1, marker: null }), label: k.label }));
  const keyed = legend(steps, titleY + 22);
  const styled = legend(looks, keyed.bottom + 14);
  const H = Math.round(styled.bottom + 14);
  return `${[
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" fill="${COLORS.text}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`,
    text(W / 2, 24, title, 'text-anchor="middle" font-size="14" font-weight="bold"'),
    ...out, ...keyed.svg, ...styled.svg,
    '</svg>',
  ].join('\n')}\n`;
}
