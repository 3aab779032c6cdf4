// The OSD picker and scheduling removals from it. It shows one page of
// OSDs, filtered on the server (`q`): at 2000 hosts the cluster has about
// 9000, and the page never asks for them all. Selected OSDs are remembered
// with their rows, so that a selection survives a change of filter. Each
// OSD's latest `bench osds` rate is shown, and under an OSD much slower
// than comparable ones, the daemon's verdict in full.
import { api } from './api.js';
import { $, badge, debounce, emptyState, h, rerender } from './dom.js';
import { fmtBenchRate, fmtWeight, joinAnd, osdName, plural } from './format.js';
import { confirmAction, notify, runAction, showPanelError } from './notices.js';
import { stateKind } from './phases.js';
import { removalPreview } from './removal-preview.js';
import { refreshers, register, signature } from './refresh.js';

const osds = { rows: [], total: 0, sig: '', selected: new Map(), filter: '', seq: 0 };
const OSD_PAGE = 100;
// OSDs not named by a `removals` message still change (a drain moves PGs
// onto them): the page shown is refetched at least this often meanwhile.
const OSD_STALE_MS = 30000;

const refresher = register('osds', 'osds', loadOsds, 2000);

export function initOsds() {
  $('osd-filter').addEventListener('input', debounce((e) => {
    osds.filter = e.target.value.trim();
    refresher.now();
  }, 250));
  $('rm-schedule').addEventListener('click', scheduleRemoval);
  $('rm-clear').addEventListener('click', () => {
    osds.selected.clear();
    for (const cb of $('osd-table').querySelectorAll('input[type=checkbox]')) cb.checked = false;
    updateScheduleButton();
  });
}

/** After a `removals` message: refetch the picker if it shows (or holds) a named OSD, or is stale. */
export function refreshOsdPicker(named) {
  const shown = named === null || named.some((id) => osds.selected.has(id) || osds.rows.some((o) => o.id === id));
  if (shown || Date.now() - refresher.last > OSD_STALE_MS) refresher.request();
}

async function loadOsds() {
  const seq = ++osds.seq;
  const params = new URLSearchParams({ limit: String(OSD_PAGE) });
  if (osds.filter) params.set('q', osds.filter);
  try {
    const { data, headers } = await api('GET', `/api/v1/osds?${params}`);
    if (seq !== osds.seq) return;
    showPanelError('osds-error', null);
    osds.total = Number(headers.get('x-total-count') || data.length);
    // Keep the selected rows current; forget selections the cluster no
    // longer allows (removed, or being removed).
    for (const o of data) {
      if (!osds.selected.has(o.id)) continue;
      if (isRemovable(o)) osds.selected.set(o.id, o);
      else osds.selected.delete(o.id);
    }
    const sig = signature([osds.filter, osds.total, data]);
    if (sig === osds.sig) return;
    osds.sig = sig;
    osds.rows = data;
    rerender($('osd-table'), renderOsds);
  } catch (e) {
    showPanelError('osds-error', new Error(`Could not load the OSDs: ${e.message}`));
  }
}

function isRemovable(o) {
  return !o.removal && !o.destroyed;
}

function renderOsds() {
  const shown = osds.rows;
  const table = h('table', { class: 'data osds' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'select' }, h('span', { class: 'sr-only' }, 'Select')),
      h('th', { scope: 'col' }, 'OSD'), h('th', { scope: 'col' }, 'Host'), h('th', { scope: 'col' }, 'Devices'),
      h('th', { scope: 'col', class: 'num' }, 'Weight'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col', class: 'num' }, 'PGs'),
      h('th', { scope: 'col', class: 'num', title: 'Its latest osdkeeper bench osds' }, 'Bench'), h('th', { scope: 'col' }, 'Removal'))),
    h('tbody', {}, shown.map(osdRows)));
  $('osd-table').replaceChildren(shown.length ? table : emptyState(osds.filter ? 'No OSD matches this filter.' : 'No OSDs in the cluster.'));
  $('osd-count').textContent = osds.total > shown.length
    ? `Showing ${shown.length} of ${osds.total} matching OSDs: narrow the filter to see the others.`
    : `${plural(osds.total, 'OSD')}${osds.filter ? ' match' : ''}.`;
  updateScheduleButton();
}

const OSD_COLUMNS = 9;

/** The OSD's row, and under a slow one the sentence saying why it is an outlier. */
function osdRows(o) {
  const row = osdRow(o);
  if (!o.bench_outlier) return row;
  row.classList.add('has-outlier');
  return [row, h('tr', { class: 'outlier-row', 'data-testid': 'osd-outlier', 'data-osd-id': o.id },
    h('td', {}), h('td', { colspan: OSD_COLUMNS - 1 }, `⚠ ${o.bench_outlier}`))];
}

function benchCell(o) {
  if (o.bench_bytes_per_sec === null || o.bench_bytes_per_sec === undefined) return h('td', { class: 'num muted' }, '—');
  return h('td', { class: 'num', 'data-testid': 'osd-bench' }, fmtBenchRate(o.bench_bytes_per_sec),
    o.bench_outlier ? [' ', badge('Outlier', 'warn', { title: o.bench_outlier })] : '');
}

function osdRow(o) {
  const removable = isRemovable(o);
  const checkbox = h('input', {
    type: 'checkbox', id: `osd-select-${o.id}`, 'data-testid': 'osd-select', value: o.id,
    'aria-label': `Select ${osdName(o.id)} on ${o.host || 'unknown host'}`,
    disabled: !removable, checked: osds.selected.has(o.id),
  });
  checkbox.addEventListener('change', () => {
    if (checkbox.checked) osds.selected.set(o.id, o);
    else osds.selected.delete(o.id);
    updateScheduleButton();
  });
  const status = [badge(o.up ? 'up' : 'down', o.up ? 'ok' : 'bad'), ' ', badge(o.in ? 'in' : 'out', o.in ? 'ok' : 'neutral')];
  if (o.destroyed) status.push(' ', badge('destroyed', 'bad'));
  return h('tr', { 'data-testid': 'osd-row', 'data-osd-id': o.id, class: osds.selected.has(o.id) ? 'selected' : '' },
    h('td', { class: 'select' }, checkbox),
    h('td', {}, h('label', { for: `osd-select-${o.id}`, class: 'mono' }, osdName(o.id))),
    h('td', { class: 'nowrap' }, o.host || '—'),
    h('td', { class: 'mono' }, o.devices.join(', ') || '—'),
    h('td', { class: 'num' }, fmtWeight(o.crush_weight)),
    h('td', {}, status),
    h('td', { class: 'num' }, o.pgs === null ? '—' : String(o.pgs)),
    benchCell(o),
    h('td', {}, o.removal ? badge(o.removal, stateKind(o.removal)) : '—'));
}

function updateScheduleButton() {
  const n = osds.selected.size;
  const button = $('rm-schedule');
  button.disabled = n === 0;
  button.textContent = n ? `Remove ${plural(n, 'selected OSD')}…` : 'Remove selected OSDs…';
  $('rm-clear').disabled = n === 0;
  for (const tr of $('osd-table').querySelectorAll('tr[data-osd-id]')) {
    tr.classList.toggle('selected', osds.selected.has(Number(tr.dataset.osdId)));
  }
}

/** One sentence per OSD saying exactly what the removal will do to it. */
function describeRemoval(o, { replace, force, zap }) {
  const steps = [];
  const pgs = o.pgs === null ? 'its placement groups' : plural(o.pgs, 'PG');
  steps.push(force
    ? `taken out without waiting for ${pgs} to move (a fresh safe-to-destroy is still required)`
    : `drained (${pgs} move to other OSDs)`);
  steps.push('stopped');
  steps.push(replace ? `destroyed, keeping the id ${o.id} for its replacement disk` : 'purged from the cluster');
  const disks = o.devices.length ? o.devices.join(', ') : '(no device known)';
  const diskWord = o.devices.length === 1 ? 'disk' : 'disks';
  if (zap) steps.push(`its ${diskWord} ${disks} wiped`);
  let sentence = `${osdName(o.id)} will be ${joinAnd(steps)}`;
  if (!zap) sentence += `; its ${diskWord} ${disks} will be left as they are`;
  return `${sentence}. (Host ${o.host || 'unknown'}.)`;
}

async function scheduleRemoval() {
  const options = { replace: $('rm-replace').checked, force: $('rm-force').checked, zap: $('rm-zap').checked };
  const chosen = [...osds.selected.values()].sort((a, b) => a.id - b.id);
  if (!chosen.length) return;
  const body = [h('ul', { class: 'plan', 'data-testid': 'removal-plan' }, chosen.map((o) => h('li', {}, describeRemoval(o, options))))];
  if (options.zap) body.push('Wiping erases all data on those disks. Afterwards they are held: no spec uses them until you release them.');
  if (options.force) body.push('Force skips waiting for the drain: if other copies of the data are missing, data can become unavailable.');
  body.push('You can stop a removal until its daemon is stopped; the weight is then put back.');
  const preview = await removalPreview(chosen.map((o) => o.id));
  body.push(...preview.nodes);
  const ok = await confirmAction({
    title: `Remove ${plural(chosen.length, 'OSD')}?`,
    body,
    ok: chosen.length === 1 ? `Remove ${osdName(chosen[0].id)}` : `Remove ${chosen.length} OSDs`,
  });
  if (!ok) return;
  await runAction($('rm-schedule'), 'Scheduling the removal', async () => {
    const ids = chosen.map((o) => o.id);
    const ignore = preview.ignore ? preview.ignore.checked : false;
    await api('POST', '/api/v1/osds/removals', { json: { ids, ...options, ignore_preview_blockers: ignore } });
    notify(`Scheduled the removal of ${joinAnd(ids.map(osdName))}`, 'ok');
    osds.selected.clear();
    for (const id of ['rm-replace', 'rm-force', 'rm-zap']) $(id).checked = false;
    await Promise.all([refreshers.removals.now(), refreshers.osds.now(), refreshers.summary.now()]);
  });
  updateScheduleButton();
}
