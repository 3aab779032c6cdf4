// The removals chart: PGs remaining against time since each drain started,
// so that removals begun at different times can be compared. Series differ
// by colour and by dash pattern. Their OSD names stand in a column at the
// right, spread so that none overlaps another, each joined to the end of
// its line: with ten drains many lines end close together.
import { api } from './api.js';
import { niceStep, plotArea, spreadLabels } from './chart.js';
import { $, h, svg } from './dom.js';
import { fmtDuration, osdName } from './format.js';
import { TERMINAL } from './phases.js';

/** Samples per removal id: { samples, final, fetchedAt }. */
const details = new Map();
// Live drains first (the rows come sorted so); ten lines stay readable.
const CHART_SERIES_MAX = 10;
// A running removal's new samples are fetched at most this often.
const DETAIL_REFRESH_MS = 2000;

const SERIES_STYLES = [
  { color: '#2563eb', dash: '' },
  { color: '#c2410c', dash: '7 4' },
  { color: '#15803d', dash: '2 3' },
  { color: '#7c3aed', dash: '10 3 2 3' },
  { color: '#0f766e', dash: '4 4' },
  { color: '#b91c1c', dash: '1 2' },
  { color: '#a16207', dash: '' },
  { color: '#1e3a8a', dash: '6 2' },
  { color: '#be185d', dash: '3 2 1 2' },
  { color: '#4d7c0f', dash: '8 2 2 2 2 2' },
];
const CHART = { w: 640, h: 290, left: 46, right: 64, top: 14, bottom: 36 };

function chartedRemovals(rows) {
  // Only removals that drained have samples; queued ones have none yet.
  return rows.filter((r) => r.drain_started_at).slice(0, CHART_SERIES_MAX);
}

/**
 * Samples for the charted removals (of `rows`, sorted as the table shows
 * them): all of them once, then only those taken since the last one held
 * (`samples_after`). A finished removal's are fetched once more, then kept.
 */
export async function loadChartDetails(rows) {
  const wanted = chartedRemovals(rows);
  await Promise.all(wanted.map(async (r) => {
    const cached = details.get(r.removal_id);
    if (cached && (cached.final || Date.now() - cached.fetchedAt < DETAIL_REFRESH_MS)) return;
    const last = cached && cached.samples[cached.samples.length - 1];
    const query = last ? `?samples_after=${encodeURIComponent(last.at)}` : '';
    try {
      const { data } = await api('GET', `/api/v1/osds/removals/${encodeURIComponent(r.removal_id)}${query}`);
      const samples = last ? cached.samples.concat(data.samples) : data.samples;
      details.set(r.removal_id, { samples, final: TERMINAL.has(data.state), fetchedAt: Date.now() });
    } catch (e) {
      console.warn(`removal ${r.removal_id}:`, e);
    }
  }));
  const keep = new Set(wanted.map((r) => r.removal_id));
  for (const id of details.keys()) if (!keep.has(id)) details.delete(id);
}

function chartSeries(rows) {
  return chartedRemovals(rows).map((r) => {
    const d = details.get(r.removal_id);
    const samples = d ? d.samples : [];
    const t0 = r.drain_started_at || (samples[0] && samples[0].at) || 0;
    const points = thin(samples.map((s) => ({ t: Math.max(0, (s.at - t0) / 1000), pgs: s.pgs })), 300);
    // Styled by removal id, so a line keeps its look when others come and go.
    return { r, style: SERIES_STYLES[r.removal_id % SERIES_STYLES.length], points };
  }).filter((s) => s.points.length > 0);
}

/** At most `max` points, keeping the first and the last. */
function thin(points, max) {
  if (points.length <= max) return points;
  const step = (points.length - 1) / (max - 1);
  const out = [];
  for (let i = 0; i < max; i += 1) out.push(points[Math.round(i * step)]);
  return out;
}

export function renderChart(rows) {
  const series = chartSeries(rows);
  const drained = rows.filter((r) => r.drain_started_at).length;
  $('removal-chart-caption').textContent = drained > series.length && series.length
    ? `PGs remaining over time (${series.length} of ${drained} drains: running ones first)`
    : 'PGs remaining over time';
  const box = $('removal-chart');
  const legend = $('removal-chart-legend');
  const area = plotArea(CHART, box, legend, series.length ? null : 'The chart shows each removal’s PGs once its drain has started.');
  if (!area) return;
  const { w, height, left, top, plotW, plotH } = area;
  const tMax = Math.max(10, ...series.map((s) => s.points[s.points.length - 1].t));
  const yMaxRaw = Math.max(1, ...series.map((s) => Math.max(s.r.pgs_at_start || 0, ...s.points.map((p) => p.pgs))));
  const yStep = niceStep(yMaxRaw, 4, [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000]);
  const yMax = Math.ceil(yMaxRaw / yStep) * yStep;
  const tStep = niceStep(tMax, 6, [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400]);
  const x = (t) => left + (t / tMax) * plotW;
  const y = (p) => top + plotH - (p / yMax) * plotH;

  const root = svg('svg', { viewBox: `0 0 ${w} ${height}`, class: 'chart', role: 'img', 'aria-labelledby': 'removal-chart-caption removal-chart-desc' });
  root.append(svg('desc', { id: 'removal-chart-desc' }, series.map((s) => {
    const last = s.points[s.points.length - 1];
    return `${osdName(s.r.osd_id)}: ${last.pgs} PGs left after ${fmtDuration(last.t)}.`;
  }).join(' ')));
  const grid = svg('g', { class: 'grid' });
  for (let v = 0; v <= yMax; v += yStep) {
    grid.append(svg('line', { x1: left, x2: left + plotW, y1: y(v), y2: y(v) }),
      svg('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(v)));
  }
  for (let t = 0; t <= tMax + 1e-9; t += tStep) {
    grid.append(svg('line', { x1: x(t), x2: x(t), y1: top, y2: top + plotH, class: 'vertical' }),
      svg('text', { x: x(t), y: top + plotH + 16, 'text-anchor': x(t) > left + plotW - 24 ? 'end' : 'middle' }, t === 0 ? '0' : fmtDuration(t)));
  }
  grid.append(svg('text', { x: left + plotW / 2, y: height - 3, 'text-anchor': 'middle', class: 'axis-title' }, 'time since the drain started'),
    svg('text', { x: 12, y: top + plotH / 2, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 12 ${top + plotH / 2})` }, 'PGs left'));
  root.append(grid);

  const labelY = spreadLabels(series.map((s) => y(s.points[s.points.length - 1].pgs)), top + 4, top + plotH + 4);
  const labelX = left + plotW + 8;
  series.forEach((s, i) => {
    const pts = s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.pgs).toFixed(1)}`).join(' ');
    const last = s.points[s.points.length - 1];
    const g = svg('g', { class: 'series', 'data-testid': 'chart-series', 'data-osd-id': s.r.osd_id, 'data-removal-id': s.r.removal_id, 'data-points': s.points.length });
    g.append(svg('polyline', { points: pts, fill: 'none', stroke: s.style.color, 'stroke-width': 2.2, 'stroke-dasharray': s.style.dash || null, 'stroke-linejoin': 'round' },
      svg('title', {}, `${osdName(s.r.osd_id)} on ${s.r.host}: ${last.pgs} PGs left after ${fmtDuration(last.t)}`)));
    g.append(svg('circle', { cx: x(last.t), cy: y(last.pgs), r: 3.5, fill: s.style.color }));
    g.append(svg('line', { x1: x(last.t) + 4, y1: y(last.pgs), x2: labelX - 2, y2: labelY[i] - 4, stroke: s.style.color, 'stroke-width': 0.8, 'stroke-opacity': 0.55, class: 'leader' }));
    g.append(svg('text', { x: labelX, y: labelY[i], fill: s.style.color, class: 'series-label', 'data-testid': 'chart-label' }, osdName(s.r.osd_id)));
    root.append(g);
  });
  box.replaceChildren(root);
  legend.replaceChildren(...series.map((s) => {
    const last = s.points[s.points.length - 1];
    return h('li', {},
      svg('svg', { viewBox: '0 0 28 8', width: 28, height: 8, 'aria-hidden': 'true' },
        svg('line', { x1: 1, x2: 27, y1: 4, y2: 4, stroke: s.style.color, 'stroke-width': 2.5, 'stroke-dasharray': s.style.dash || null })),
      h('span', { class: 'mono' }, osdName(s.r.osd_id)), h('span', { class: 'muted small nowrap' }, `${s.r.host} · ${last.pgs} left`));
  }));
}
