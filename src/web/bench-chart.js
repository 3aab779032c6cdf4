// The cluster benchmarks chart: one slot per run, oldest on the left, and
// a line per pass (write, seq, rand) through the chosen figure (MB/s by
// default; IOPS or latency on demand). Consecutive runs with the same
// label share a bracket under the axis and a dashed line parts the
// groups, so a jump between "before the disk swap" and "after" stands out.
// Every point's tooltip has the pass's four figures; a run with
// methodology warnings carries a ⚠ above its slot.
import { decimalStep, plotArea, spreadLabels, stepDecimals } from './chart.js';
import { h, svg } from './dom.js';
import { fmtClock } from './format.js';
import { PASSES, fmtFigure, fmtMetric, passLine, passResult, runName } from './bench-values.js';

// The newest runs drawn; older ones stay in the table.
export const CHART_RUNS_MAX = 12;
const CHART = { w: 640, h: 300, left: 54, right: 14, top: 24, bottom: 50 };
const STYLES = {
  write: { color: '#c2410c', dash: '', marker: 'circle' },
  seq: { color: '#2563eb', dash: '7 4', marker: 'square' },
  rand: { color: '#15803d', dash: '2 3', marker: 'diamond' },
};
// Figures are written beside the points while slots are this wide.
const VALUE_LABELS_FROM_PX = 70;
// A 11 px label's average character width, to cut labels to their bracket.
const CHAR_PX = 6.2;

/** Runs with at least one pass measured, oldest first, the newest CHART_RUNS_MAX. */
export function chartedRuns(runs) {
  return runs.filter((r) => r.results.length > 0).slice(0, CHART_RUNS_MAX).reverse();
}

/** Consecutive runs with the same label: [{ label, from, to }] by slot index. */
function labelGroups(runs) {
  const groups = [];
  runs.forEach((r, i) => {
    const last = groups[groups.length - 1];
    if (last && last.label === r.label) last.to = i;
    else groups.push({ label: r.label, from: i, to: i });
  });
  return groups;
}

function marker(kind, x, y, color) {
  if (kind === 'square') return svg('rect', { x: x - 3.6, y: y - 3.6, width: 7.2, height: 7.2, fill: color });
  if (kind === 'diamond') return svg('path', { d: `M${x} ${y - 5}L${x + 5} ${y}L${x} ${y + 5}L${x - 5} ${y}Z`, fill: color });
  return svg('circle', { cx: x, cy: y, r: 4, fill: color });
}

function cut(text, px) {
  const max = Math.max(1, Math.floor(px / CHAR_PX));
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

function runTooltip(run) {
  const lines = [`${runName(run)}, ${fmtClock(run.created_at)}`, ...run.results.map(passLine)];
  for (const w of run.warnings) lines.push(`⚠ ${w}`);
  return lines.join('\n');
}

/**
 * Draws `runs` (newest first, as the API lists them) into `box`; `metric`
 * is one of METRICS; the runs `picked.a` and `picked.b` (ids) are the
 * comparison's, tagged A and B under their ids.
 */
export function renderBenchChart(box, legend, runs, metric, picked = {}) {
  const shown = chartedRuns(runs);
  const area = plotArea(CHART, box, legend, shown.length ? null : 'Each run appears here once a pass is measured, one point per pass.');
  if (!area) return;
  const { w, height, left, top, plotW, plotH } = area;
  const slotW = plotW / shown.length;
  const x = (i) => left + slotW * (i + 0.5);
  const values = shown.flatMap((r) => r.results.map((p) => p[metric.field])).filter(Number.isFinite);
  const yStep = decimalStep(Math.max(...values, 1e-6), 5);
  const yMax = Math.ceil(Math.max(...values, 1e-6) / yStep) * yStep;
  const y = (v) => top + plotH - (v / yMax) * plotH;
  const decimals = stepDecimals(yStep);

  const root = svg('svg', { viewBox: `0 0 ${w} ${height}`, class: 'chart bench-chart', role: 'img', 'aria-labelledby': 'bench-chart-caption bench-chart-desc', 'data-metric': metric.key });
  root.append(svg('desc', { id: 'bench-chart-desc' }, shown.map((r) => `${runName(r)}: ${r.results.map((p) => `${p.pass} ${fmtMetric(metric, p[metric.field])}`).join(', ')}.`).join(' ')));
  const grid = svg('g', { class: 'grid' });
  for (let i = 0; i * yStep <= yMax + 1e-12; i += 1) {
    const v = i * yStep;
    grid.append(svg('line', { x1: left, x2: left + plotW, y1: y(v), y2: y(v) }),
      svg('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, v.toFixed(decimals)));
  }
  grid.append(svg('text', { x: 12, y: top + plotH / 2, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 12 ${top + plotH / 2})` }, metric.name));
  root.append(grid);

  // Slots: a hover area with the whole run, its id under the axis, a ⚠ for warnings.
  shown.forEach((r, i) => {
    const slot = svg('g', { class: 'bench-slot', 'data-testid': 'bench-slot', 'data-bench-id': r.bench_id, 'data-warnings': r.warnings.length });
    slot.append(svg('rect', { x: left + slotW * i, y: top, width: slotW, height: plotH, class: 'slot-hit' }, svg('title', {}, runTooltip(r))),
      svg('text', { x: x(i), y: top + plotH + 14, 'text-anchor': 'middle', class: 'slot-id' }, `#${r.bench_id}`,
        ['a', 'b'].filter((k) => picked[k] === r.bench_id).map((k) => svg('tspan', { class: 'pick-tag', 'data-testid': `bench-slot-${k}` }, ` ${k.toUpperCase()}`))));
    if (r.warnings.length) {
      slot.append(svg('text', { x: x(i), y: top - 8, 'text-anchor': 'middle', class: 'slot-warning', 'data-testid': 'bench-slot-warning' },
        '⚠', svg('title', {}, r.warnings.join('\n'))));
    }
    root.append(slot);
  });

  // Label brackets under the ids, and a dashed line between groups.
  const groups = labelGroups(shown);
  groups.forEach((g, k) => {
    const x1 = left + slotW * g.from + 4;
    const x2 = left + slotW * (g.to + 1) - 4;
    const yb = top + plotH + 22;
    const text = g.label || 'no label';
    const el = svg('g', { class: `bench-group${g.label ? '' : ' unlabelled'}`, 'data-testid': 'bench-label', 'data-label': g.label || '', 'data-runs': shown.slice(g.from, g.to + 1).map((r) => r.bench_id).join(',') });
    el.append(svg('path', { d: `M${x1} ${yb - 4}V${yb}H${x2}V${yb - 4}`, class: 'bracket' }),
      svg('text', { x: (x1 + x2) / 2, y: yb + 14, 'text-anchor': 'middle' }, cut(text, x2 - x1 + 8), svg('title', {}, text)));
    root.append(el);
    if (k > 0) root.append(svg('line', { x1: left + slotW * g.from, x2: left + slotW * g.from, y1: top - 2, y2: top + plotH + 24, class: 'group-divider' }));
  });

  // One line per pass, points on top, figures beside them when there is room.
  const points = [];
  for (const { pass, name } of PASSES) {
    const style = STYLES[pass];
    const pts = shown.map((r, i) => ({ r, i, res: passResult(r, pass) })).filter((p) => p.res && Number.isFinite(p.res[metric.field]));
    if (!pts.length) continue;
    const g = svg('g', { class: 'series', 'data-testid': 'bench-series', 'data-pass': pass });
    if (pts.length > 1) {
      g.append(svg('polyline', { points: pts.map((p) => `${x(p.i).toFixed(1)},${y(p.res[metric.field]).toFixed(1)}`).join(' '), fill: 'none', stroke: style.color, 'stroke-width': 2, 'stroke-dasharray': style.dash || null, 'stroke-linejoin': 'round' }));
    }
    for (const p of pts) {
      const v = p.res[metric.field];
      const dot = svg('g', { class: 'bench-point', 'data-testid': 'bench-point', 'data-bench-id': p.r.bench_id, 'data-pass': pass, 'data-value': v, tabindex: 0 },
        marker(style.marker, x(p.i), y(v), style.color),
        svg('title', {}, `${runName(p.r)}, ${fmtClock(p.r.created_at)}\n${passLine(p.res)}`));
      g.append(dot);
      points.push({ i: p.i, y: y(v), text: fmtFigure(metric, v), color: style.color, name });
    }
    root.append(g);
  }
  if (slotW >= VALUE_LABELS_FROM_PX) {
    shown.forEach((_, i) => {
      const here = points.filter((p) => p.i === i);
      const ys = spreadLabels(here.map((p) => p.y), top + 4, top + plotH, 13);
      here.forEach((p, k) => root.append(svg('text', { x: x(i) + 8, y: ys[k], fill: p.color, class: 'point-value', 'data-testid': 'bench-value' }, p.text)));
    });
  }
  box.replaceChildren(root);
  legend.replaceChildren(...PASSES.map(({ pass, name }) => {
    const style = STYLES[pass];
    return h('li', {},
      svg('svg', { viewBox: '0 0 28 10', width: 28, height: 10, 'aria-hidden': 'true' },
        svg('line', { x1: 1, x2: 27, y1: 5, y2: 5, stroke: style.color, 'stroke-width': 2.2, 'stroke-dasharray': style.dash || null }),
        marker(style.marker, 14, 5, style.color)),
      h('span', {}, name));
  }), h('li', { class: 'muted small' }, shown.length < runs.filter((r) => r.results.length).length
    ? `the newest ${shown.length} runs with results; hover a point for all four figures`
    : 'hover a point for all four figures'));
}
