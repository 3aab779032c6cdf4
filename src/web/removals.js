// Removals: each one's phase, drain progress, rate and ETA (or that it
// stalled, and why), what it waits on, and a Stop button while it can
// still be undone. The chart beside the
// table is in removal-chart.js.
import { api } from './api.js';
import { $, badge, emptyState, h, rerender } from './dom.js';
import { fmtBytes, fmtClock, fmtDuration, fmtRate, osdName } from './format.js';
import { Phase } from './kinds.js';
import { confirmAction, notify, runAction, showPanelError } from './notices.js';
import { STOPPABLE, TERMINAL, stateKind } from './phases.js';
import { refreshers, register } from './refresh.js';
import { loadChartDetails, renderChart } from './removal-chart.js';

const removals = { rows: [] };

register('removals', 'removals', loadRemovals, 1000);

async function loadRemovals() {
  try {
    const { data } = await api('GET', '/api/v1/osds/removals?history=20');
    showPanelError('removals-error', null);
    removals.rows = sortRemovals(data);
    await loadChartDetails(removals.rows);
    // pgs_per_min and eta_s move on every read: always re-render; it is a small table.
    rerender($('removals-table'), renderRemovals);
    renderChart(removals.rows);
  } catch (e) {
    showPanelError('removals-error', new Error(`Could not load removals: ${e.message}`));
  }
}

/** Running ones first (oldest request first), then finished ones, newest first. */
function sortRemovals(rows) {
  const active = rows.filter((r) => !TERMINAL.has(r.state)).sort((a, b) => a.requested_at - b.requested_at);
  const finished = rows.filter((r) => TERMINAL.has(r.state)).sort((a, b) => (b.finished_at || 0) - (a.finished_at || 0));
  return [...active, ...finished];
}

function renderRemovals() {
  const box = $('removals-table');
  if (!removals.rows.length) {
    box.replaceChildren(emptyState('No removals yet. Choose OSDs under “Schedule a removal”.'));
    return;
  }
  const table = h('table', { class: 'data removals' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'OSD'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col', class: 'progress-col' }, 'Progress'),
      h('th', { scope: 'col', class: 'num' }, 'Rate'), h('th', { scope: 'col', class: 'num' }, 'ETA'),
      h('th', { scope: 'col' }, 'Waiting on'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
    h('tbody', {}, removals.rows.map(removalRow)));
  box.replaceChildren(table);
}

function removalRow(r) {
  const left = r.pgs_now;
  const start = r.pgs_at_start;
  const options = [r.replace && 'replace', r.force && 'force', r.zap && 'zap'].filter(Boolean);
  const waiting = [];
  if (r.stalled) {
    waiting.push(h('div', { 'data-testid': 'removal-stalled' },
      `Stalled since ${fmtClock(r.stalled.since)}: ${r.stalled.reason || 'the cluster gives no reason'}`));
  }
  if (r.waiting_on) waiting.push(h('div', { 'data-testid': 'removal-waiting-on' }, r.waiting_on));
  if (r.last_error) waiting.push(h('div', { class: 'error-text' }, h('strong', {}, 'Error: '), r.last_error));
  if (r.note) waiting.push(h('div', { class: 'muted small' }, r.note));
  if (r.stop_requested && !TERMINAL.has(r.state)) waiting.push(h('div', { class: 'small' }, badge('stop requested', 'neutral')));
  if (!waiting.length) waiting.push(TERMINAL.has(r.state) ? `finished ${fmtClock(r.finished_at)}` : '—');
  const canStop = STOPPABLE.has(r.state) && !r.stop_requested;
  return h('tr', {
    'data-testid': 'removal', 'data-osd-id': r.osd_id, 'data-removal-id': r.removal_id, 'data-state': r.state,
    'data-pgs-left': left === null ? '' : left, 'data-pgs-start': start === null ? '' : start,
  },
  h('td', {}, h('div', { class: 'mono strong' }, osdName(r.osd_id)), h('div', { class: 'muted small' }, r.host),
    options.length ? h('div', {}, options.map((o) => badge(o, 'neutral small'))) : '',
    r.devices.length ? h('div', { class: 'muted small mono' }, r.devices.join(', ')) : ''),
  h('td', {}, badge(r.state, stateKind(r.state), { 'data-testid': 'removal-state' })),
  h('td', { class: 'progress-col' }, progressBar(r)),
  h('td', { class: 'num' }, rate(r)),
  h('td', { class: 'num', 'data-testid': 'removal-eta' }, eta(r)),
  h('td', { class: 'waiting' }, waiting),
  h('td', { class: 'right' }, canStop
    ? h('button', { type: 'button', class: 'btn small needs-operate', 'data-testid': 'removal-stop',
      onclick: (e) => stopRemoval(e.currentTarget, r) }, 'Stop…')
    : ''));
}

/** Bytes per second where the ETA counts bytes, else PGs per minute. */
function rate(r) {
  if (r.eta_basis === 'bytes' && r.bytes_per_s !== null && r.bytes_per_s !== undefined) return `${fmtBytes(r.bytes_per_s)}/s`;
  return fmtRate(r.pgs_per_min);
}

/** No ETA while stalled: one that kept shrinking while nothing moves would mislead. */
function eta(r) {
  if (r.stalled) return 'stalled';
  return r.eta_s === null || r.eta_s === undefined ? '—' : fmtDuration(r.eta_s);
}

function progressBar(r) {
  const start = r.pgs_at_start;
  const left = r.state === Phase.DONE ? 0 : r.pgs_now;
  let pct = 0;
  let label;
  if (start === null || start === undefined) {
    label = r.state === Phase.QUEUED ? 'waiting to start' : 'no PG count yet';
  } else if (start === 0) {
    pct = 100;
    label = 'held no PGs';
  } else {
    const now = left === null || left === undefined ? start : left;
    pct = Math.max(0, Math.min(100, ((start - now) / start) * 100));
    label = `${now} of ${start} PGs left`;
  }
  if (r.state === Phase.DONE) pct = 100;
  const fill = h('div', { class: 'fill' });
  fill.style.width = `${pct.toFixed(1)}%`;
  return h('div', { class: 'progress-cell' },
    h('div', {
      class: `progress ${stateKind(r.state)}`, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100,
      'aria-valuenow': Math.round(pct), 'aria-valuetext': label, 'aria-label': `${osdName(r.osd_id)} drain progress`,
      'data-testid': 'removal-progress',
    }, fill),
    h('div', { class: 'small', 'data-testid': 'removal-pgs' }, label,
      r.bytes_left !== null && r.bytes_left !== undefined && !TERMINAL.has(r.state)
        ? h('span', { class: 'muted' }, ` · ${fmtBytes(r.bytes_left)} to move`)
        : r.bytes_now !== null && !TERMINAL.has(r.state) ? h('span', { class: 'muted' }, ` · ${fmtBytes(r.bytes_now)} used`) : ''));
}

async function stopRemoval(button, r) {
  const ok = await confirmAction({
    title: `Stop the removal of ${osdName(r.osd_id)}?`,
    body: [
      `${osdName(r.osd_id)} on ${r.host} is ${r.state}. Stopping puts its CRUSH weight back (or marks it in again), so the placement groups that left it move back.`,
      'Nothing has been stopped, purged or wiped yet.',
    ],
    ok: `Stop removing ${osdName(r.osd_id)}`,
  });
  if (!ok) return;
  await runAction(button, `Stopping the removal of ${osdName(r.osd_id)}`, async () => {
    await api('POST', '/api/v1/osds/removals/stop', { json: { ids: [r.osd_id] } });
    notify(`Asked to stop the removal of ${osdName(r.osd_id)}`, 'ok');
    await Promise.all([refreshers.removals.now(), refreshers.osds.now(), refreshers.summary.now()]);
  });
}
