// Cluster benchmarks (`osdkeeper bench cluster`, stored with their
// history): the chart of each run's figures per pass (bench-chart.js), the
// runs with their label, cluster, figures and methodology warnings, and
// two of them compared (bench-compare.js). Runs are started from the CLI;
// the page follows a running one until it ends.
import { api } from './api.js';
import { $, badge, h, rerender } from './dom.js';
import { fmtClock, plural } from './format.js';
import { renderBenchChart } from './bench-chart.js';
import { loadComparison, renderComparison } from './bench-compare.js';
import { FINISHED, METRICS, PASSES, metricByKey, passResult, shapeText } from './bench-values.js';
import { BenchPhase } from './kinds.js';
import { showPanelError } from './notices.js';
import { register, signature } from './refresh.js';

// The newest runs listed; the API keeps them all.
const RUNS_LISTED = 30;
// A running benchmark changes phase without an event: looked at this often.
const RUNNING_REFRESH_MS = 3000;

// `open`: the runs whose warnings the user unfolded, kept unfolded when the table is redrawn.
const bench = { runs: [], sig: '', metric: 'mb', a: null, b: null, picked: false, timer: null, open: new Set() };

const refresher = register('benchmarks', 'benchmarks', loadBenchmarks, 1000);

export function initBenchmarks() {
  const group = $('bench-metric');
  group.replaceChildren(...METRICS.map((m) => h('label', { class: 'seg' },
    h('input', { type: 'radio', name: 'bench-metric', value: m.key, checked: m.key === bench.metric, 'data-testid': 'bench-metric' }),
    h('span', {}, m.title))));
  group.addEventListener('change', (e) => {
    bench.metric = e.target.value;
    drawChart();
  });
}

async function loadBenchmarks() {
  clearTimeout(bench.timer);
  try {
    const { data } = await api('GET', `/api/v1/benchmarks/cluster?limit=${RUNS_LISTED}`);
    showPanelError('benchmarks-error', null);
    bench.runs = data;
    choosePair();
    const compared = await loadComparison(runById(bench.a), runById(bench.b));
    const sig = signature([data, bench.a, bench.b, compared]);
    if (data.some((r) => !FINISHED.has(r.phase))) bench.timer = setTimeout(() => refresher.request(), RUNNING_REFRESH_MS);
    if (sig === bench.sig) return;
    bench.sig = sig;
    render();
  } catch (e) {
    showPanelError('benchmarks-error', new Error(`Could not load the cluster benchmarks: ${e.message}`));
  }
}

function runById(id) {
  return bench.runs.find((r) => r.bench_id === id) || null;
}

const comparable = (r) => r.results.length > 0;

/** Until the user picks, A and B are the two newest finished runs with figures (B the newer). */
function choosePair() {
  if (bench.picked && runById(bench.a) && runById(bench.b)) return;
  const done = bench.runs.filter((r) => comparable(r) && FINISHED.has(r.phase));
  bench.picked = false;
  bench.b = done[0] ? done[0].bench_id : null;
  bench.a = done[1] ? done[1].bench_id : null;
}

function render() {
  drawChart();
  rerender($('bench-table'), renderTable);
  renderComparison($('bench-compare'));
  const n = bench.runs.length;
  $('bench-count').textContent = n >= RUNS_LISTED ? `The newest ${n} runs; osdkeeper bench ls lists them all.` : '';
}

function drawChart() {
  renderBenchChart($('bench-chart'), $('bench-chart-legend'), bench.runs, metricByKey(bench.metric), { a: bench.a, b: bench.b });
}

function pick(which, id) {
  bench[which] = id;
  bench.picked = true;
  refresher.now();
}

function picker(which, r) {
  return h('input', {
    type: 'radio', name: `bench-${which}`, value: r.bench_id, 'data-testid': `bench-pick-${which}`,
    'aria-label': `Compare: run #${r.bench_id} as ${which.toUpperCase()}`,
    checked: bench[which] === r.bench_id, disabled: !comparable(r), onchange: () => pick(which, r.bench_id),
  });
}

function stateBadge(r) {
  if (r.phase === BenchPhase.DONE) return badge('done', 'ok');
  if (r.phase === BenchPhase.FAILED) return badge('failed', 'bad');
  if (r.phase === BenchPhase.QUEUED) return badge('queued', 'info');
  return badge(r.phase, 'active');
}

function notes(r) {
  const out = [];
  if (r.failure) out.push(h('div', { class: 'error-text small', 'data-testid': 'bench-failure' }, r.failure));
  if (r.warnings.length) {
    const details = h('details', { class: 'bench-warnings-cell', 'data-testid': 'bench-warnings', open: bench.open.has(r.bench_id) },
      h('summary', {}, badge(`⚠ ${plural(r.warnings.length, 'warning')}`, 'warn')),
      h('ul', { class: 'bench-warnings' }, r.warnings.map((w) => h('li', {}, w))));
    details.addEventListener('toggle', () => (details.open ? bench.open.add(r.bench_id) : bench.open.delete(r.bench_id)));
    out.push(details);
  }
  return out.length ? out : '—';
}

function runRow(r) {
  const when = [fmtClock(r.created_at), `${r.seconds} s per pass`, shapeText(r)].filter(Boolean).join(' · ');
  const pool = r.own_pool ? `pool ${r.pool}, made for the run and removed` : `pool ${r.pool}, given; only the run's objects removed`;
  return h('tr', { 'data-testid': 'bench-run', 'data-bench-id': r.bench_id, 'data-phase': r.phase },
    h('td', { class: 'pick' }, picker('a', r)),
    h('td', { class: 'pick' }, picker('b', r)),
    h('td', { class: 'run' }, h('span', { class: 'mono' }, `#${r.bench_id}`), ' ',
      r.label ? h('strong', { 'data-testid': 'bench-run-label' }, r.label) : h('span', { class: 'muted' }, 'no label'),
      h('div', { class: 'muted small', title: pool }, when)),
    h('td', {}, stateBadge(r)),
    PASSES.map(({ pass }) => {
      const res = passResult(r, pass);
      return h('td', { class: 'num', 'data-testid': 'bench-mb', 'data-pass': pass, title: res ? `${res.iops.toFixed(0)} IOPS, avg latency ${res.avg_latency_s.toFixed(4)} s, max ${res.max_latency_s.toFixed(4)} s` : null },
        res ? res.bandwidth_mb_s.toFixed(1) : '—');
    }),
    h('td', { class: 'bench-notes' }, notes(r)));
}

function renderTable() {
  if (!bench.runs.length) {
    $('bench-table').replaceChildren(h('p', { class: 'empty' }, 'No cluster benchmark yet. Run ',
      h('code', {}, 'osdkeeper bench cluster --label "before the disk swap"'), ' (and again after a change): each run is kept, charted and comparable here.'));
    return;
  }
  const head = (text, cls, title) => h('th', { scope: 'col', class: cls || null, title: title || null }, text);
  $('bench-table').replaceChildren(h('table', { class: 'data bench-runs' },
    h('thead', {}, h('tr', {}, head('A', 'pick', 'The earlier run of the comparison'), head('B', 'pick', 'The later run of the comparison'),
      head('Run'), head('State'), PASSES.map(({ name }) => head(`${name} MB/s`, 'num')), head('Notes'))),
    h('tbody', {}, bench.runs.map(runRow))));
}
