// Removals: each one's phase, drain progress, rate and ETA (or that it
// stalled, and why), what it waits on, and a Stop button while it can
// still be undone; live ones above finished ones. The chart beside the
// table is in removal-chart.js.
import { api } from './api.js';
import { $, badge, emptyState, h, rerender } from './dom.js';
import { fmtBytes, fmtClock, fmtDuration, fmtRate, osdName, plural } from './format.js';
import { Phase } from './kinds.js';
import { confirmAction, notify, runAction, showPanelError } from './notices.js';
import { STOPPABLE, TERMINAL, stateKind } from './phases.js';
import { refreshers, register } from './refresh.js';
import { loadChartDetails, renderChart } from './removal-chart.js';

// From this many live removals on, rows are grouped under their host with
// the host's totals, and drawn compact (one line each): the field report's
// swap runs ten drains at once and an operator reads them host by host.
const GROUP_FROM = 5;
// Finished removals shown below the live ones until "show all" is pressed.
const FINISHED_SHOWN = 5;

const removals = { rows: [], finishedShown: FINISHED_SHOWN };

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
  const live = removals.rows.filter((r) => !TERMINAL.has(r.state));
  const finished = removals.rows.filter((r) => TERMINAL.has(r.state));
  // Many at once: the table takes the panel's width and the chart goes below it.
  box.closest('.removals-layout').classList.toggle('stacked', live.length >= GROUP_FROM);
  box.replaceChildren(
    live.length ? liveTable(live) : emptyState('No removal is running.'),
    finished.length ? finishedBlock(finished) : '');
}

const headCell = (text, cls) => h('th', { scope: 'col', class: cls || null }, text);

function liveTable(live) {
  const grouped = live.length >= GROUP_FROM;
  // Compact rows leave the rate to the host's line (and the ETA's tooltip):
  // the table must fit an 800 px window without scrolling sideways.
  const table = h('table', { class: `data removals${grouped ? ' compact' : ''}`, 'data-testid': 'removals-live', 'data-grouped': String(grouped) },
    h('thead', {}, h('tr', {},
      headCell('OSD'), headCell('State'), headCell('Progress', 'progress-col'), grouped ? '' : headCell('Rate', 'num'), headCell('ETA', 'num'),
      headCell('Waiting on'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))));
  if (!grouped) {
    table.append(h('tbody', {}, live.map((r) => removalRow(r, { showHost: true, compact: false }))));
    return table;
  }
  const byHost = new Map();
  for (const r of live) byHost.set(r.host, [...(byHost.get(r.host) || []), r]);
  for (const [host, rows] of [...byHost].sort((a, b) => a[0].localeCompare(b[0]))) {
    table.append(h('tbody', { class: 'removal-group', 'data-testid': 'removal-host-group', 'data-host': host },
      h('tr', { class: 'group-row' }, h('th', { colspan: 6, scope: 'rowgroup' }, hostTotals(host, rows))),
      rows.map((r) => removalRow(r, { showHost: false, compact: true }))));
  }
  return table;
}

/** A host's line over its removals: how many, PGs left of those at start, the rate, the last ETA. */
function hostTotals(host, rows) {
  const counted = rows.filter((r) => r.pgs_at_start !== null);
  const start = counted.reduce((n, r) => n + r.pgs_at_start, 0);
  const left = counted.reduce((n, r) => n + (r.pgs_now === null ? r.pgs_at_start : r.pgs_now), 0);
  const rate = rows.reduce((n, r) => n + (r.pgs_per_min || 0), 0);
  const etas = rows.map((r) => r.eta_s).filter((e) => e !== null);
  const waiting = rows.length - counted.length;
  const parts = [plural(rows.length, 'removal')];
  if (counted.length) parts.push(`${left} of ${start} PGs left`);
  if (waiting) parts.push(`${waiting} not draining yet`);
  if (rate > 0) parts.push(fmtRate(rate));
  if (etas.length) parts.push(`last done in ${fmtDuration(Math.max(...etas))}`);
  return h('div', { class: 'host-head' },
    h('span', { class: 'host-name' }, host),
    h('span', { class: 'small host-counts', 'data-testid': 'removal-host-totals' }, parts.join(' · ')));
}

function finishedBlock(finished) {
  const shown = finished.slice(0, removals.finishedShown);
  const more = finished.length - shown.length;
  const table = h('table', { class: 'data removals compact finished', 'data-testid': 'removals-finished' },
    h('thead', {}, h('tr', {},
      headCell('OSD'), headCell('State'), headCell('Progress', 'progress-col'), headCell('Finished'), headCell('Outcome'))),
    h('tbody', {}, shown.map(finishedRow)));
  const toggle = more > 0
    ? h('button', { type: 'button', class: 'btn link small', onclick: () => { removals.finishedShown = finished.length; renderRemovals(); } }, `Show ${more} more`)
    : finished.length > FINISHED_SHOWN
      ? h('button', { type: 'button', class: 'btn link small', onclick: () => { removals.finishedShown = FINISHED_SHOWN; renderRemovals(); } }, 'Show fewer')
      : '';
  return h('div', { class: 'finished-block' }, h('h3', { class: 'finished-title' }, `Finished (${finished.length})`), table, toggle);
}

function rowProps(r) {
  const left = r.pgs_now;
  const start = r.pgs_at_start;
  return {
    'data-testid': 'removal', 'data-osd-id': r.osd_id, 'data-removal-id': r.removal_id, 'data-state': r.state,
    'data-pgs-left': left === null ? '' : left, 'data-pgs-start': start === null ? '' : start,
  };
}

function osdCell(r, { showHost, compact }) {
  const options = [r.replace && 'replace', r.force && 'force', r.zap && 'zap'].filter(Boolean);
  const devices = r.devices.join(', ');
  const name = h('span', { class: 'mono strong nowrap', title: devices ? `${r.host}: ${devices}` : r.host }, osdName(r.osd_id));
  const badges = options.map((o) => badge(o, 'neutral small'));
  if (compact) return h('td', { class: 'nowrap' }, name, ' ', badges, showHost ? h('span', { class: 'muted small nowrap' }, ` ${r.host}`) : '');
  return h('td', {}, h('div', {}, name, ' ', badges),
    showHost ? h('div', { class: 'muted small nowrap' }, r.host) : '',
    devices ? h('div', { class: 'muted small mono' }, devices) : '');
}

function removalRow(r, layout) {
  const waiting = [];
  if (r.stalled) {
    const why = `Stalled since ${fmtClock(r.stalled.since)}: ${r.stalled.reason || 'the cluster gives no reason'}`;
    waiting.push(h('div', { 'data-testid': 'removal-stalled', class: layout.compact ? 'one-line' : null, title: why }, why));
  }
  if (r.waiting_on) waiting.push(h('div', { 'data-testid': 'removal-waiting-on', class: layout.compact ? 'one-line' : null, title: r.waiting_on }, r.waiting_on));
  if (r.last_error) waiting.push(h('div', { class: `error-text${layout.compact ? ' one-line' : ''}`, title: r.last_error }, h('strong', {}, 'Error: '), r.last_error));
  if (r.note && !layout.compact) waiting.push(h('div', { class: 'muted small' }, r.note));
  if (r.stop_requested) waiting.push(h('div', { class: 'small' }, badge('stop requested', 'neutral')));
  if (!waiting.length) waiting.push('—');
  const canStop = STOPPABLE.has(r.state) && !r.stop_requested;
  return h('tr', rowProps(r),
    osdCell(r, layout),
    h('td', {}, badge(r.state, stateKind(r.state), { 'data-testid': 'removal-state' })),
    h('td', { class: 'progress-col' }, progressBar(r, layout.compact)),
    layout.compact ? '' : h('td', { class: 'num' }, rate(r)),
    h('td', { class: 'num', 'data-testid': 'removal-eta', title: layout.compact ? rate(r) : null }, eta(r)),
    h('td', { class: 'waiting' }, waiting),
    h('td', { class: 'right' }, canStop
      ? h('button', { type: 'button', class: 'btn small needs-operate', 'data-testid': 'removal-stop',
        onclick: (e) => stopRemoval(e.currentTarget, r) }, 'Stop…')
      : ''));
}

function finishedRow(r) {
  const outcome = r.last_error
    ? h('span', { class: 'error-text one-line', title: r.last_error }, r.last_error)
    : h('span', { class: 'muted small one-line', title: r.note || '' }, r.note || (r.state === Phase.DONE ? 'removed' : 'stopped; weight restored'));
  return h('tr', rowProps(r),
    osdCell(r, { showHost: true, compact: true }),
    h('td', {}, badge(r.state, stateKind(r.state), { 'data-testid': 'removal-state' })),
    h('td', { class: 'progress-col' }, progressBar(r, true)),
    h('td', { class: 'nowrap', 'data-testid': 'removal-finished-at' }, fmtClock(r.finished_at)),
    h('td', { class: 'waiting' }, outcome));
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

function progressBar(r, compact) {
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
  // Bytes still to move off the OSD when the cluster says, else what it still uses.
  let used = '';
  if (!TERMINAL.has(r.state) && r.bytes_left !== null && r.bytes_left !== undefined) used = `${fmtBytes(r.bytes_left)} to move`;
  else if (!TERMINAL.has(r.state) && r.bytes_now !== null) used = `${fmtBytes(r.bytes_now)} used`;
  const fill = h('div', { class: 'fill' });
  fill.style.width = `${pct.toFixed(1)}%`;
  return h('div', { class: `progress-cell${compact ? ' inline' : ''}` },
    h('div', {
      class: `progress ${stateKind(r.state)}`, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100,
      'aria-valuenow': Math.round(pct), 'aria-valuetext': label, 'aria-label': `${osdName(r.osd_id)} drain progress`,
      'data-testid': 'removal-progress',
    }, fill),
    h('div', { class: 'small', 'data-testid': 'removal-pgs', title: used || null }, label,
      used && !compact ? h('span', { class: 'muted' }, ` · ${used}`) : ''));
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
