// Two cluster benchmarks side by side (/api/v1/benchmarks/compare), as
// `osdkeeper bench compare A B` prints them: per pass MB/s, IOPS, average
// and maximum latency of A and B and the change from A to B in percent,
// marked better or worse (more MB/s and IOPS, less latency is better);
// then how the clusters differed and each run's methodology warnings.
import { api } from './api.js';
import { emptyState, h } from './dom.js';
import { fmtClock } from './format.js';
import { PASSES, fmtFigure, metricByName, runName, shapeText } from './bench-values.js';

const cache = { key: '', data: null, error: null };
const NOISE_PERCENT = 1;

/**
 * The comparison of runs `a` and `b`, fetched again only when either run
 * changed (`version`) or the last fetch failed. Resolves to a string that
 * changes whenever what renderComparison shows does.
 */
export async function loadComparison(a, b) {
  if (!a || !b || a.bench_id === b.bench_id) {
    cache.key = '';
    cache.data = null;
    cache.error = null;
    return '';
  }
  const key = `${a.bench_id}.${a.version}/${b.bench_id}.${b.version}`;
  if (key === cache.key && !cache.error) return key;
  try {
    const { data } = await api('GET', `/api/v1/benchmarks/compare?a=${a.bench_id}&b=${b.bench_id}`);
    cache.data = data;
    cache.error = null;
  } catch (e) {
    cache.data = null;
    cache.error = e.message;
  }
  cache.key = key;
  return `${key}|${cache.error || ''}`;
}

/** "+35.2 %", and whether that is better, worse or no change. */
function change(m) {
  if (m.change_percent === null || m.change_percent === undefined) return { text: '—', kind: 'none' };
  const p = m.change_percent;
  const text = `${p >= 0 ? '+' : ''}${p.toFixed(1)} %`;
  // Under 1 % is within any benchmark's run-to-run noise: neither better nor worse.
  if (Math.abs(p) < NOISE_PERCENT) return { text, kind: 'same' };
  const metric = metricByName(m.name);
  const better = metric ? (p > 0) === metric.higherIsBetter : null;
  return { text: `${p > 0 ? '▲' : '▼'} ${text}`, kind: better === null ? 'none' : better ? 'better' : 'worse' };
}

function runHead(which, run) {
  return h('div', { class: 'compare-run', 'data-testid': `compare-run-${which.toLowerCase()}` },
    h('span', { class: 'compare-which' }, which), ' ',
    h('strong', {}, runName(run)),
    h('div', { class: 'muted small' }, [fmtClock(run.created_at), `${run.seconds} s per pass`, shapeText(run)].filter(Boolean).join(' · ')));
}

function table(passes) {
  const rows = [];
  for (const p of passes) {
    const passName = (PASSES.find((x) => x.pass === p.pass) || { name: p.pass }).name;
    p.metrics.forEach((m, k) => {
      const metric = metricByName(m.name) || { key: '', name: m.name };
      const c = change(m);
      rows.push(h('tr', { 'data-testid': 'compare-row', 'data-pass': p.pass, 'data-metric': m.name, class: k === 0 ? 'first-of-pass' : null },
        k === 0 ? h('th', { scope: 'rowgroup', rowspan: p.metrics.length }, passName) : '',
        h('td', {}, m.name),
        h('td', { class: 'num', 'data-testid': 'compare-a' }, fmtFigure(metric, m.a)),
        h('td', { class: 'num', 'data-testid': 'compare-b' }, fmtFigure(metric, m.b)),
        h('td', { class: `num change ${c.kind}`, 'data-testid': 'compare-change', 'data-change': m.change_percent ?? '' }, c.text)));
    });
  }
  return h('table', { class: 'data compact compare-table', 'data-testid': 'compare-table' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Pass'), h('th', { scope: 'col' }, 'Metric'),
      h('th', { scope: 'col', class: 'num' }, 'A'), h('th', { scope: 'col', class: 'num' }, 'B'), h('th', { scope: 'col', class: 'num' }, 'Change'))),
    h('tbody', {}, rows));
}

/** Draws the comparison into `box`. */
export function renderComparison(box) {
  if (cache.error) {
    box.replaceChildren(h('p', { class: 'error-text' }, `Could not compare: ${cache.error}`));
    return;
  }
  const c = cache.data;
  if (!c) {
    box.replaceChildren(emptyState('Pick two different runs in the table, A and B, to see them side by side.'));
    return;
  }
  const parts = [runHead('A', c.a), runHead('B', c.b)];
  parts.push(c.passes.length ? table(c.passes) : emptyState('Neither run measured a pass.'));
  if (c.differences.length) {
    parts.push(h('div', { class: 'callout warn small', 'data-testid': 'compare-differences' },
      h('strong', {}, 'The clusters differ: '), c.differences.join('; '), '. The change says less about the disks.'));
  }
  const warnings = [['A', c.a], ['B', c.b]].flatMap(([which, r]) => r.warnings.map((w) => h('li', {}, h('strong', {}, `${which}: `), w)));
  if (warnings.length) parts.push(h('ul', { class: 'bench-warnings', 'data-testid': 'compare-warnings' }, warnings));
  box.replaceChildren(...parts);
}
