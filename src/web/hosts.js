// Hosts and their devices. At 2000 hosts and 20000 devices only one page
// of hosts is ever fetched and rendered; the search runs on the server (`q`).
import { api } from './api.js';
import { agoEl, learnServerClock, tickAges } from './clock.js';
import { $, badge, debounce, emptyState, h, rerender } from './dom.js';
import { fmtBytes, fmtClock, osdName, plural } from './format.js';
import { releaseDevice } from './held.js';
import { showPanelError } from './notices.js';
import { register, signature } from './refresh.js';

const hosts = { q: '', offset: 0, limit: 20, total: 0, rows: [], sig: '', seq: 0, loaded: false };

const refresher = register('hosts', 'hosts', loadHostPage, 2000);

export function initHosts() {
  $('host-search').addEventListener('input', debounce((e) => {
    hosts.q = e.target.value.trim();
    hosts.offset = 0;
    refresher.now();
  }, 250));
  $('host-page-size').addEventListener('change', (e) => {
    hosts.limit = Number(e.target.value);
    hosts.offset = 0;
    refresher.now();
  });
  const page = (delta) => () => {
    hosts.offset = delta === 0 ? 0 : Math.max(0, hosts.offset + delta * hosts.limit);
    refresher.now();
  };
  $('host-first').addEventListener('click', page(0));
  $('host-prev').addEventListener('click', page(-1));
  $('host-next').addEventListener('click', page(1));
}

/**
 * After a `hosts` message. Every poll of every host says so: at 2000 hosts,
 * many a second. Only a named host on the page shown makes it refetch.
 */
export function hostsPolled(names) {
  if (names === null || hosts.rows.some((row) => names.includes(row.host))) refresher.request();
}

/** From each summary: hosts were added or removed, so the pager's total is out of date. */
export function noteHostCount(count) {
  if (!hosts.q && hosts.loaded && count !== hosts.total) refresher.request();
}

/** Shows the hosts matching `text` (an unreachable host clicked in the callout). */
export function searchHosts(text) {
  $('host-search').value = text;
  hosts.q = text;
  hosts.offset = 0;
  refresher.now();
  $('hosts-panel').scrollIntoView({ behavior: 'smooth' });
}

async function loadHostPage() {
  const seq = ++hosts.seq;
  const params = new URLSearchParams({ offset: String(hosts.offset), limit: String(hosts.limit) });
  if (hosts.q) params.set('q', hosts.q);
  try {
    const { data, headers } = await api('GET', `/api/v1/devices?${params}`);
    if (seq !== hosts.seq) return;
    showPanelError('hosts-error', null);
    hosts.total = Number(headers.get('x-total-count') || data.length);
    hosts.loaded = true;
    if (hosts.offset > 0 && hosts.offset >= hosts.total) {
      // The page we were on is gone (fewer hosts now): show the last one.
      hosts.offset = Math.max(0, Math.floor((hosts.total - 1) / hosts.limit) * hosts.limit);
      refresher.request();
      return;
    }
    learnServerClock(data);
    renderPager();
    // A re-poll changes only taken_at: then just move the ages, keeping the
    // table (and the focus and selection in it) as it is.
    const sig = signature(data, ['age_s', 'taken_at']);
    hosts.rows = data;
    if (sig === hosts.sig) {
      updateInventoryAges(data);
      return;
    }
    hosts.sig = sig;
    rerender($('host-table'), renderHostTable);
  } catch (e) {
    showPanelError('hosts-error', new Error(`Could not load hosts and devices: ${e.message}`));
  }
}

function updateInventoryAges(rows) {
  for (const host of rows) {
    if (!host.inventory) continue;
    const group = $('host-table').querySelector(`tbody[data-host="${CSS.escape(host.host)}"]`);
    const age = group && group.querySelector('[data-testid="inventory-age"] [data-ago]');
    if (age) age.dataset.ago = host.inventory.taken_at;
  }
  tickAges();
}

function renderPager() {
  const { offset, limit, total } = hosts;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  const what = hosts.q ? ` matching “${hosts.q}”` : '';
  $('host-range').textContent = total === 0 ? `No hosts${what}` : `Hosts ${first}–${last} of ${total}${what}`;
  $('host-first').disabled = offset === 0;
  $('host-prev').disabled = offset === 0;
  $('host-next').disabled = offset + limit >= total;
}

function renderHostTable() {
  const table = h('table', { class: 'data devices' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Device'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col', class: 'num' }, 'Size'),
      h('th', { scope: 'col' }, 'Model'), h('th', { scope: 'col' }, 'Available'), h('th', { scope: 'col' }, 'OSDs'),
      h('th', { scope: 'col' }, 'Why not available'), h('th', { scope: 'col' }, 'Probe'),
      h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))));
  for (const host of hosts.rows) table.append(hostGroup(host));
  $('host-table').replaceChildren(hosts.rows.length ? table : emptyState(hosts.q ? 'No host matches this search.' : 'No hosts yet.'));
}

function hostGroup(host) {
  const body = h('tbody', { class: 'host-group', 'data-testid': 'host', 'data-host': host.host });
  body.append(h('tr', { class: 'host-row' }, h('th', { colspan: 9, scope: 'rowgroup' }, hostHeader(host))));
  if (!host.inventory) {
    body.append(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'No inventory yet: the agent has not answered a poll.')));
  } else if (host.devices.length === 0) {
    body.append(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'The agent reported no devices.')));
  }
  for (const dev of host.devices) body.append(deviceRow(host, dev));
  return body;
}

function hostHeader(host) {
  const devs = host.devices;
  // As the rows show them: a held disk says Held, not Yes, so it is not counted as available.
  const available = devs.filter((d) => d.available && !d.held).length;
  const heldCount = devs.filter((d) => d.held).length;
  const parts = [
    h('span', { class: 'host-name' }, host.host),
    h('span', { class: 'muted small' }, host.addr),
  ];
  if (host.unreachable_since) {
    parts.push(badge('Unreachable', 'bad', { 'data-testid': 'host-unreachable' }),
      h('span', { class: 'small' }, 'since ', fmtClock(host.unreachable_since), ' (', agoEl('span', host.unreachable_since), ')'));
  } else {
    parts.push(badge('Reachable', 'ok'));
  }
  const inv = host.inventory;
  if (inv) {
    parts.push(h('span', { class: 'small muted', 'data-testid': 'inventory-age' },
      `inventory from ${inv.source}, `, agoEl('span', inv.taken_at)));
    if (!inv.can_create_osds) parts.push(badge('cannot create OSDs', 'warn', { title: inv.note || '' }));
    if (inv.ceph_release) parts.push(h('span', { class: 'small muted', 'data-testid': 'host-ceph-release' }, `ceph-volume ${inv.ceph_release}`));
  }
  // Its ceph-volume is of a major release the cluster runs nowhere (`domain::release_mismatch`).
  if (host.release_mismatch) parts.push(badge('release mismatch', 'warn', { 'data-testid': 'host-release-mismatch' }));
  parts.push(h('span', { class: 'small host-counts' }, inv
    ? `${plural(devs.length, 'device')} · ${available} available${heldCount ? ` · ${heldCount} held` : ''}`
    : 'no inventory yet'));
  const head = h('div', { class: 'host-head' }, parts);
  const extra = [];
  if (host.last_error) extra.push(h('div', { class: 'host-error', 'data-testid': 'host-last-error' }, h('strong', {}, 'Last error: '), host.last_error));
  if (host.release_mismatch) extra.push(h('div', { class: 'small' }, 'Release: ', host.release_mismatch));
  if (inv && inv.note) extra.push(h('div', { class: 'small muted' }, 'Note: ', inv.note));
  if (host.refresh_error) extra.push(h('div', { class: 'host-error' }, 'Refresh failed: ', host.refresh_error));
  return [head, ...extra];
}

function deviceRow(host, dev) {
  const type = (dev.type || 'unknown').toUpperCase();
  const availability = dev.held
    ? badge('Held', 'warn')
    : dev.available
      ? badge('✓ Yes', 'ok')
      : badge('✗ No', 'neutral');
  const reasons = [];
  if (dev.held) reasons.push(h('div', { class: 'held-reason' }, h('strong', {}, 'Held: '), dev.held));
  if (dev.rejected_reasons.length) reasons.push(h('div', {}, dev.rejected_reasons.join('; ')));
  const actions = dev.held
    ? h('button', { type: 'button', class: 'btn small needs-admin', 'data-testid': 'release-device',
      onclick: (e) => releaseDevice(e.currentTarget, host.host, dev.path, dev.held) }, 'Release…')
    : '';
  return h('tr', { 'data-testid': 'device', 'data-path': dev.path, 'data-type': dev.type, 'data-available': String(dev.available) },
    h('td', { class: 'mono' }, dev.path),
    h('td', {}, badge(type, `type-${dev.type}`)),
    h('td', { class: 'num', title: dev.size_bytes ? `${dev.size_bytes} bytes` : '' }, dev.human_readable_size || fmtBytes(dev.size_bytes)),
    h('td', {}, [dev.vendor, dev.model].filter(Boolean).join(' ') || '—'),
    h('td', {}, availability),
    h('td', {}, dev.osd_ids.length ? dev.osd_ids.map((id) => osdName(id)).join(', ') : '—'),
    h('td', { class: 'reasons' }, reasons.length ? reasons : '—'),
    h('td', { class: 'probe', 'data-testid': 'device-probe' }, probeCell(dev.probe)),
    h('td', { class: 'right' }, actions));
}

/** A disk's latest probe (`device probe`): its four figures, and whether it is an outlier, under way or failed. */
function probeCell(p) {
  if (!p) return '—';
  const parts = [];
  if (p.figures) {
    const mb = (bps) => Math.round(bps / 1048576);
    const f = p.figures;
    parts.push(h('div', { class: 'small mono', title: p.by_slot ? 'no serial/WWN: the results belong to the slot' : '' },
      `w ${mb(f.seq_write_bps)} / r ${mb(f.seq_read_bps)} MB/s · 4k r ${Math.round(f.rand_read_iops)} / sync w ${Math.round(f.sync_write_iops)} IOPS`),
    h('div', { class: 'small muted' }, `${p.mode} probe #${p.probe_id}`));
  }
  if (p.outlier) parts.push(badge('Outlier', 'warn', { title: p.outlier, 'data-testid': 'probe-outlier' }));
  if (p.pending) parts.push(badge('Probing…', 'neutral'));
  else if (p.failure) parts.push(h('div', { class: 'small', title: p.failure }, 'last probe failed'));
  return parts.length ? parts : '—';
}
