// osdkeeper dashboard.
//
// One page over the daemon's JSON API (/api/v1, see /api/v1/openapi.json):
// removals with progress and a chart, the OSD list to schedule removals
// from, the event log, hosts and their devices, and specs with their
// dry-run. It stays live through /api/v1/stream and refetches only what a
// stream message names, throttled per panel. Every fetch is bounded at
// 2000 hosts: the header comes from /api/v1/summary, hosts and OSDs are
// paged and searched on the server, a chart fetches only new samples.
//
// The helpers it uses (h, api, notify, Refresher, ...) are in common.js,
// loaded first; the rules written there hold here too.
'use strict';

// ───────────────────────── 1. Live stream (fetch + ReadableStream) ─────────────────────────

// EventSource cannot send the Authorization header, so the stream is read
// with fetch. While it is down the panels are polled and it reconnects with
// exponential backoff.
const live = { controller: null, backoffMs: 1000, reconnectTimer: null, pollTimer: null, watchdog: null };
const POLL_MS = 4000;
const STREAM_SILENCE_MS = 40000; // the daemon sends a keep-alive every 15 s

function setLiveStatus(state, detail) {
  const el = $('live-status');
  el.dataset.state = state;
  const labels = {
    connecting: 'Connecting…',
    live: 'Live',
    polling: 'Reconnecting — polling every few seconds',
  };
  el.querySelector('.label').textContent = labels[state] || state;
  el.title = detail || '';
}

/**
 * An API call could not reach the daemon while the stream looks fine: a
 * daemon shutting down can keep old streams open while refusing new
 * connections. Reconnect, so that the indicator tells the truth.
 */
function distrustStream() {
  if (live.controller && $('live-status').dataset.state === 'live') live.controller.abort(new Error('the daemon stopped answering'));
}

apiHooks.unreachable = distrustStream;
apiHooks.tokenEntered = reconnectStreamNow;

function reconnectStreamNow() {
  if (live.controller) live.controller.abort();
  clearTimeout(live.reconnectTimer);
  live.backoffMs = 1000;
  connectStream();
}

function scheduleReconnect() {
  clearTimeout(live.reconnectTimer);
  const delay = live.backoffMs * (0.8 + Math.random() * 0.4);
  live.backoffMs = Math.min(live.backoffMs * 2, 30000);
  live.reconnectTimer = setTimeout(connectStream, delay);
}

function startPolling() {
  if (live.pollTimer) return;
  live.pollTimer = setInterval(refreshAll, POLL_MS);
}

function stopPolling() {
  clearInterval(live.pollTimer);
  live.pollTimer = null;
}

function armWatchdog(controller) {
  clearTimeout(live.watchdog);
  // A connection can die without an error (a sleeping laptop, a proxy):
  // silence longer than the keep-alive interval means it is gone.
  live.watchdog = setTimeout(() => controller.abort(new Error('no data from the stream')), STREAM_SILENCE_MS);
}

async function connectStream() {
  const controller = new AbortController();
  live.controller = controller;
  if ($('live-status').dataset.state !== 'polling') setLiveStatus('connecting');
  try {
    const res = await fetch('/api/v1/stream', {
      headers: authHeaders({ Accept: 'text/event-stream' }),
      signal: controller.signal,
      cache: 'no-store',
    });
    if (res.status === 401) {
      const data = await readBody(res);
      // askToken reconnects the stream once the token is entered.
      askToken((data && data.error) || 'the daemon needs an API token');
      setLiveStatus('polling', 'waiting for the API token');
      return;
    }
    if (!res.ok || !res.body) throw new Error(`the stream answered HTTP ${res.status}`);
    armWatchdog(controller);
    await readServerSentEvents(res.body, controller, onStreamMessage);
    throw new Error('the stream ended');
  } catch (e) {
    if (live.controller !== controller) return; // replaced by a newer connection
    clearTimeout(live.watchdog);
    setLiveStatus('polling', e && e.message);
    startPolling();
    scheduleReconnect();
  }
}

/** Parses `event:` / `data:` lines and calls onMessage(type, data) per message. */
async function readServerSentEvents(body, controller, onMessage) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let type = '';
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    armWatchdog(controller);
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop(); // an incomplete last line waits for the next chunk
    for (const line of lines) {
      if (line === '') {
        if (type || data.length) onMessage(type || 'message', data.join('\n'));
        type = '';
        data = [];
      } else if (line.startsWith(':')) {
        // keep-alive comment
      } else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') type = val;
        else if (field === 'data') data.push(val);
      }
    }
  }
}

function onStreamMessage(type, data) {
  switch (type) {
    case 'hello':
      live.backoffMs = 1000;
      stopPolling();
      setLiveStatus('live');
      // Whatever happened while we were not connected: fetch it all once.
      refreshAll();
      break;
    case 'event': {
      let ev;
      try {
        ev = JSON.parse(data);
      } catch {
        return;
      }
      addEvents([ev]);
      onEventKind(ev);
      break;
    }
    case 'removals':
      refreshers.removals.request();
      refreshers.summary.request();
      refreshOsdPicker(namedInMessage(data, 'osds'));
      break;
    case 'hosts': {
      // Every poll of every host says so: at 2000 hosts, many a second.
      // Only a named host on the page shown makes it refetch.
      const names = namedInMessage(data, 'hosts');
      if (names === null || hosts.rows.some((row) => names.includes(row.host))) refreshers.hosts.request();
      refreshers.summary.request();
      break;
    }
    case 'specs':
      refreshers.specs.request();
      refreshers.summary.request();
      break;
    case 'resync':
      refreshAll();
      break;
    default:
      break;
  }
}

/** The list a `hosts` or `removals` message names, or null when it names none (refetch anyway). */
function namedInMessage(data, key) {
  try {
    const list = JSON.parse(data)[key];
    return Array.isArray(list) && list.length ? list : null;
  } catch {
    return null;
  }
}

/** Hosts added or removed are announced by their event, not by a `hosts` message. */
function onEventKind(ev) {
  if (ev.kind === 'host-added' || ev.kind === 'host-removed') {
    refreshers.summary.request();
    refreshers.hosts.request();
  }
}

// ───────────────────────── 2. Header summary ─────────────────────────

// One call (/api/v1/summary) for the counts, however many hosts there are.
const summary = { data: null };

async function loadSummary() {
  const { data } = await api('GET', '/api/v1/summary');
  const before = summary.data;
  summary.data = data;
  renderSummary();
  // What else the counts say is out of date: the unreachable hosts' list
  // (a rare change, shown at once), held devices (a zap holds one, a
  // release frees one), the pager's total (hosts added or removed).
  if (data.unreachable_hosts.join('\n') !== unreachable.names) refreshers.unreachable.now();
  if (before && before.held_devices !== data.held_devices) {
    refreshers.held.request();
    refreshers.hosts.request();
  }
  if (!hosts.q && hosts.loaded && data.hosts !== hosts.total) refreshers.hosts.request();
}

function renderSummary() {
  const d = summary.data;
  const osdsUp = d && d.osds !== null ? `${d.osds_up}/${d.osds}` : d ? '—' : null;
  const items = [
    ['Hosts', d && d.hosts, 'summary-hosts'],
    ['Unreachable', d && d.unreachable_hosts.length, 'summary-unreachable'],
    ['Free disks', d && d.available_devices, 'summary-devices', d && `${d.available_devices} of ${d.devices} devices available to specs, ${d.held_devices} held`],
    ['OSDs up', osdsUp, 'summary-osds', d && (d.cluster_error || `${d.osds_in} of ${d.osds} in`)],
    ['Removing', d && d.active_removals, 'summary-removals'],
    ['Specs', d && d.specs, 'summary-specs'],
  ];
  const nodes = [];
  for (const [label, value, testid, title] of items) {
    const warn = label === 'Unreachable' && value > 0;
    nodes.push(h('div', { class: `summary-item${warn ? ' warn' : ''}`, 'data-testid': testid, title },
      h('dt', {}, label), h('dd', {}, value === null ? '…' : String(value))));
  }
  $('summary').replaceChildren(...nodes);
}

// ───────────────────────── 3. Hosts and devices (paged on the server) ─────────────────────────

// At 2000 hosts and 20000 devices only one page of hosts is ever fetched
// and rendered; the search runs on the server (`q`).
const hosts = { q: '', offset: 0, limit: 20, total: 0, rows: [], sig: '', seq: 0, loaded: false };
const unreachable = { names: '', shown: 12 };
const held = { rows: [], sig: '' };

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
      refreshers.hosts.request();
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

/** taken_at + age_s is the server's "now" when it answered. */
function learnServerClock(rows) {
  const inv = rows.find((r) => r.inventory);
  if (!inv) return;
  clock.offsetMs = inv.inventory.taken_at + inv.inventory.age_s * 1000 - Date.now();
  clock.fromInventory = true;
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
      h('th', { scope: 'col' }, 'Why not available'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))));
  for (const host of hosts.rows) table.append(hostGroup(host));
  $('host-table').replaceChildren(hosts.rows.length ? table : emptyState(hosts.q ? 'No host matches this search.' : 'No hosts yet.'));
}

function hostGroup(host) {
  const body = h('tbody', { class: 'host-group', 'data-testid': 'host', 'data-host': host.host });
  body.append(h('tr', { class: 'host-row' }, h('th', { colspan: 8, scope: 'rowgroup' }, hostHeader(host))));
  if (!host.inventory) {
    body.append(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No inventory yet: the agent has not answered a poll.')));
  } else if (host.devices.length === 0) {
    body.append(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'The agent reported no devices.')));
  }
  for (const dev of host.devices) body.append(deviceRow(host, dev));
  return body;
}

function hostHeader(host) {
  const devs = host.devices;
  const available = devs.filter((d) => d.available).length;
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
  }
  parts.push(h('span', { class: 'small host-counts' }, inv
    ? `${plural(devs.length, 'device')} · ${available} available${heldCount ? ` · ${heldCount} held` : ''}`
    : 'no inventory yet'));
  const head = h('div', { class: 'host-head' }, parts);
  const extra = [];
  if (host.last_error) extra.push(h('div', { class: 'host-error', 'data-testid': 'host-last-error' }, h('strong', {}, 'Last error: '), host.last_error));
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
    ? h('button', { type: 'button', class: 'btn small', 'data-testid': 'release-device',
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
    h('td', { class: 'right' }, actions));
}

/** The unreachable hosts (a few, with since when and why), when the summary counts any. */
async function loadUnreachable() {
  if (!summary.data) return; // the summary asks again once it has loaded
  const names = summary.data.unreachable_hosts.join('\n');
  let rows = [];
  let total = 0;
  if (names) {
    try {
      const { data, headers } = await api('GET', `/api/v1/hosts?unreachable=true&limit=${unreachable.shown}`);
      rows = data;
      total = Number(headers.get('x-total-count') || data.length);
    } catch (e) {
      showPanelError('hosts-error', new Error(`Could not load the unreachable hosts: ${e.message}`));
      return;
    }
  }
  unreachable.names = names;
  renderUnreachable(rows, total);
}

function renderUnreachable(rows, total) {
  const box = $('unreachable');
  if (!rows.length) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  box.replaceChildren(
    h('strong', {}, `${plural(total, 'host')} unreachable: `),
    ...rows.map((hst) => h('button', { type: 'button', class: 'link', title: hst.last_error || '', 'data-testid': 'unreachable-host',
      onclick: () => searchHosts(hst.name) }, `${hst.name} (since ${fmtClock(hst.unreachable_since)})`)),
    total > rows.length ? h('span', { class: 'muted' }, ` and ${total - rows.length} more`) : '');
}

function searchHosts(text) {
  $('host-search').value = text;
  hosts.q = text;
  hosts.offset = 0;
  refreshers.hosts.now();
  $('hosts-panel').scrollIntoView({ behavior: 'smooth' });
}

async function loadHeld() {
  try {
    const { data } = await api('GET', '/api/v1/devices/held');
    const sig = signature(data);
    if (sig === held.sig) return;
    held.sig = sig;
    held.rows = data;
    rerender($('held-devices'), renderHeld);
  } catch (e) {
    showPanelError('hosts-error', new Error(`Could not load held devices: ${e.message}`));
  }
}

function renderHeld() {
  const box = $('held-devices');
  if (!held.rows.length) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  const shown = held.rows.slice(0, 20);
  box.replaceChildren(
    h('strong', {}, `${plural(held.rows.length, 'held device')}`),
    h('span', { class: 'muted' }, ' — specs skip these until you release them.'),
    h('ul', { class: 'held-list' }, shown.map((hd) => h('li', { 'data-testid': 'held-device', 'data-host': hd.host, 'data-path': hd.path },
      h('span', { class: 'mono' }, `${hd.host}:${hd.path}`), ' — ', hd.reason, h('span', { class: 'muted small' }, ` (since ${fmtClock(hd.since)})`), ' ',
      h('button', { type: 'button', class: 'btn small', onclick: (e) => releaseDevice(e.currentTarget, hd.host, hd.path, hd.reason) }, 'Release…')))),
    held.rows.length > shown.length ? h('p', { class: 'muted small' }, `and ${held.rows.length - shown.length} more (search the hosts to see them)`) : '');
}

async function releaseDevice(button, host, path, reason) {
  const ok = await confirmAction({
    title: `Release ${path} on ${host}?`,
    body: [
      `It is held because: ${reason}.`,
      'Once released, specs may use it again: a stored spec that matches this disk will create an OSD on it at the next reconcile.',
    ],
    ok: 'Release the device',
  });
  if (!ok) return;
  await runAction(button, `Releasing ${path} on ${host}`, async () => {
    await api('POST', '/api/v1/devices/release', { json: { host, path } });
    notify(`Released ${path} on ${host}`, 'ok');
    await Promise.all([refreshers.held.now(), refreshers.hosts.now(), refreshers.summary.now()]);
  });
}

// ───────────────────────── 4. OSDs and scheduling removals ─────────────────────────

// The picker shows one page of OSDs, filtered on the server (`q`): at 2000
// hosts the cluster has about 9000, and the page never asks for them all.
// Selected OSDs are remembered with their rows, so that a selection survives
// a change of filter.
const osds = { rows: [], total: 0, sig: '', selected: new Map(), filter: '', seq: 0 };
const OSD_PAGE = 100;
// OSDs not named by a `removals` message still change (a drain moves PGs
// onto them): the page shown is refetched at least this often meanwhile.
const OSD_STALE_MS = 30000;

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

/** After a `removals` message: refetch the picker if it shows (or holds) a named OSD, or is stale. */
function refreshOsdPicker(named) {
  const r = refreshers.osds;
  const shown = named === null || named.some((id) => osds.selected.has(id) || osds.rows.some((o) => o.id === id));
  if (shown || Date.now() - r.last > OSD_STALE_MS) r.request();
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
      h('th', { scope: 'col' }, 'Removal'))),
    h('tbody', {}, shown.map(osdRow)));
  $('osd-table').replaceChildren(shown.length ? table : emptyState(osds.filter ? 'No OSD matches this filter.' : 'No OSDs in the cluster.'));
  $('osd-count').textContent = osds.total > shown.length
    ? `Showing ${shown.length} of ${osds.total} matching OSDs: narrow the filter to see the others.`
    : `${plural(osds.total, 'OSD')}${osds.filter ? ' match' : ''}.`;
  updateScheduleButton();
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
    h('td', {}, o.host || '—'),
    h('td', { class: 'mono' }, o.devices.join(', ') || '—'),
    h('td', { class: 'num' }, o.crush_weight === null ? '—' : o.crush_weight.toFixed(3)),
    h('td', {}, status),
    h('td', { class: 'num' }, o.pgs === null ? '—' : String(o.pgs)),
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
  const ok = await confirmAction({
    title: `Remove ${plural(chosen.length, 'OSD')}?`,
    body,
    ok: chosen.length === 1 ? `Remove ${osdName(chosen[0].id)}` : `Remove ${chosen.length} OSDs`,
  });
  if (!ok) return;
  await runAction($('rm-schedule'), 'Scheduling the removal', async () => {
    const ids = chosen.map((o) => o.id);
    await api('POST', '/api/v1/osds/removals', { json: { ids, ...options } });
    notify(`Scheduled the removal of ${joinAnd(ids.map(osdName))}`, 'ok');
    osds.selected.clear();
    for (const id of ['rm-replace', 'rm-force', 'rm-zap']) $(id).checked = false;
    await Promise.all([refreshers.removals.now(), refreshers.osds.now(), refreshers.summary.now()]);
  });
  updateScheduleButton();
}

// ───────────────────────── 5. Removals: progress and chart ─────────────────────────

const removals = { rows: [], details: new Map(), sig: '' };
const TERMINAL = new Set(['done', 'cancelled']);
const STOPPABLE = new Set(['queued', 'draining', 'waiting-safe']);
const CHART_SERIES_MAX = 6;
// A running removal's new samples are fetched at most this often.
const DETAIL_REFRESH_MS = 2000;

function stateKind(state) {
  if (state === 'done') return 'ok';
  if (state === 'cancelled' || state === 'restoring') return 'neutral';
  if (state === 'queued') return 'info';
  return 'active';
}

async function loadRemovals() {
  try {
    const { data } = await api('GET', '/api/v1/osds/removals?history=20');
    showPanelError('removals-error', null);
    removals.rows = sortRemovals(data);
    await loadChartDetails();
    // pgs_per_min and eta_s move on every read: always re-render; it is a small table.
    rerender($('removals-table'), renderRemovals);
    renderChart();
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

function chartedRemovals() {
  // Only removals that drained have samples; queued ones have none yet.
  return removals.rows.filter((r) => r.drain_started_at).slice(0, CHART_SERIES_MAX);
}

/**
 * Samples for the charted removals: all of them once, then only those taken
 * since the last one held (`samples_after`). A finished removal's are
 * fetched once more, then kept.
 */
async function loadChartDetails() {
  const wanted = chartedRemovals();
  await Promise.all(wanted.map(async (r) => {
    const cached = removals.details.get(r.removal_id);
    if (cached && (cached.final || Date.now() - cached.fetchedAt < DETAIL_REFRESH_MS)) return;
    const last = cached && cached.samples[cached.samples.length - 1];
    const query = last ? `?samples_after=${encodeURIComponent(last.at)}` : '';
    try {
      const { data } = await api('GET', `/api/v1/osds/removals/${encodeURIComponent(r.removal_id)}${query}`);
      const samples = last ? cached.samples.concat(data.samples) : data.samples;
      removals.details.set(r.removal_id, { samples, final: TERMINAL.has(data.state), fetchedAt: Date.now() });
    } catch (e) {
      console.warn(`removal ${r.removal_id}:`, e);
    }
  }));
  const keep = new Set(wanted.map((r) => r.removal_id));
  for (const id of removals.details.keys()) if (!keep.has(id)) removals.details.delete(id);
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
  h('td', { class: 'num' }, fmtRate(r.pgs_per_min)),
  h('td', { class: 'num', 'data-testid': 'removal-eta' }, r.eta_s === null ? '—' : fmtDuration(r.eta_s)),
  h('td', { class: 'waiting' }, waiting),
  h('td', { class: 'right' }, canStop
    ? h('button', { type: 'button', class: 'btn small', 'data-testid': 'removal-stop',
      onclick: (e) => stopRemoval(e.currentTarget, r) }, 'Stop…')
    : ''));
}

function progressBar(r) {
  const start = r.pgs_at_start;
  const left = r.state === 'done' ? 0 : r.pgs_now;
  let pct = 0;
  let label;
  if (start === null || start === undefined) {
    label = r.state === 'queued' ? 'waiting to start' : 'no PG count yet';
  } else if (start === 0) {
    pct = 100;
    label = 'held no PGs';
  } else {
    const now = left === null || left === undefined ? start : left;
    pct = Math.max(0, Math.min(100, ((start - now) / start) * 100));
    label = `${now} of ${start} PGs left`;
  }
  if (r.state === 'done') pct = 100;
  const fill = h('div', { class: 'fill' });
  fill.style.width = `${pct.toFixed(1)}%`;
  return h('div', { class: 'progress-cell' },
    h('div', {
      class: `progress ${stateKind(r.state)}`, role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100,
      'aria-valuenow': Math.round(pct), 'aria-valuetext': label, 'aria-label': `${osdName(r.osd_id)} drain progress`,
      'data-testid': 'removal-progress',
    }, fill),
    h('div', { class: 'small', 'data-testid': 'removal-pgs' }, label,
      r.bytes_now !== null && !TERMINAL.has(r.state) ? h('span', { class: 'muted' }, ` · ${fmtBytes(r.bytes_now)} used`) : ''));
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

// The chart: PGs remaining against time since each drain started, so that
// removals begun at different times can be compared. Series differ by colour
// and by dash pattern, and carry their OSD's name at the end of the line.
const SERIES_STYLES = [
  { color: '#2563eb', dash: '' },
  { color: '#c2410c', dash: '7 4' },
  { color: '#15803d', dash: '2 3' },
  { color: '#7c3aed', dash: '10 3 2 3' },
  { color: '#0f766e', dash: '4 4' },
  { color: '#b91c1c', dash: '1 2' },
];
const CHART = { w: 640, h: 260, left: 46, right: 70, top: 14, bottom: 36 };

function chartSeries() {
  return chartedRemovals().map((r) => {
    const d = removals.details.get(r.removal_id);
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

/** Round tick steps for 0..max with at most about `count` ticks. */
function niceStep(max, count, steps) {
  for (const s of steps) if (max / s <= count) return s;
  return steps[steps.length - 1] * Math.ceil(max / count / steps[steps.length - 1]);
}

function renderChart() {
  const series = chartSeries();
  const box = $('removal-chart');
  const legend = $('removal-chart-legend');
  if (!series.length) {
    box.replaceChildren(emptyState('The chart shows each removal’s PGs once its drain has started.'));
    legend.replaceChildren();
    return;
  }
  const { w, h: height, left, right, top, bottom } = CHART;
  const plotW = w - left - right;
  const plotH = height - top - bottom;
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
      svg('text', { x: x(t), y: top + plotH + 16, 'text-anchor': 'middle' }, t === 0 ? '0' : fmtDuration(t)));
  }
  grid.append(svg('text', { x: left + plotW / 2, y: height - 3, 'text-anchor': 'middle', class: 'axis-title' }, 'time since the drain started'),
    svg('text', { x: 12, y: top + plotH / 2, 'text-anchor': 'middle', class: 'axis-title', transform: `rotate(-90 12 ${top + plotH / 2})` }, 'PGs left'));
  root.append(grid);

  for (const s of series) {
    const pts = s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.pgs).toFixed(1)}`).join(' ');
    const last = s.points[s.points.length - 1];
    const g = svg('g', { class: 'series', 'data-testid': 'chart-series', 'data-osd-id': s.r.osd_id, 'data-removal-id': s.r.removal_id, 'data-points': s.points.length });
    g.append(svg('polyline', { points: pts, fill: 'none', stroke: s.style.color, 'stroke-width': 2.2, 'stroke-dasharray': s.style.dash || null, 'stroke-linejoin': 'round' },
      svg('title', {}, `${osdName(s.r.osd_id)} on ${s.r.host}: ${last.pgs} PGs left after ${fmtDuration(last.t)}`)));
    g.append(svg('circle', { cx: x(last.t), cy: y(last.pgs), r: 3.5, fill: s.style.color }));
    g.append(svg('text', { x: x(last.t) + 6, y: y(last.pgs) - 6, fill: s.style.color, class: 'series-label' }, osdName(s.r.osd_id)));
    root.append(g);
  }
  box.replaceChildren(root);
  legend.replaceChildren(...series.map((s) => {
    const last = s.points[s.points.length - 1];
    return h('li', {},
      svg('svg', { viewBox: '0 0 28 8', width: 28, height: 8, 'aria-hidden': 'true' },
        svg('line', { x1: 1, x2: 27, y1: 4, y2: 4, stroke: s.style.color, 'stroke-width': 2.5, 'stroke-dasharray': s.style.dash || null })),
      h('span', { class: 'mono' }, osdName(s.r.osd_id)), ` on ${s.r.host} · ${s.r.state} · ${last.pgs} PGs left`);
  }));
}

// ───────────────────────── 6. Specs: list, dry-run preview, editor ─────────────────────────

const PREFILLED_SPEC = `service_type: osd
service_id: osd_spec_F5-422_SSDs
placement:
  host_pattern: 'f5-422-*'
encrypted: true
data_devices:
  rotational: 0
`;

const specs = { list: [], sig: '', selected: null, selectedVersion: null, previewedText: null, lastPreview: null, seq: 0 };

async function loadSpecs() {
  try {
    const { data } = await api('GET', '/api/v1/specs');
    showPanelError('specs-error', null);
    const sig = signature(data);
    if (sig === specs.sig) return;
    specs.sig = sig;
    specs.list = data;
    rerender($('spec-list'), renderSpecList);
    const current = data.find((s) => s.service_name === specs.selected);
    if (specs.selected && !current) {
      specs.selected = null;
      $('spec-detail').replaceChildren(emptyState('That spec was removed.'));
    } else if (current && current.version !== specs.selectedVersion) {
      selectSpec(current.service_name);
    }
  } catch (e) {
    showPanelError('specs-error', new Error(`Could not load specs: ${e.message}`));
  }
}

function renderSpecList() {
  const list = $('spec-list');
  if (!specs.list.length) {
    list.replaceChildren(h('li', { class: 'empty' }, 'No stored specs. Apply one with the editor.'));
    return;
  }
  list.replaceChildren(...specs.list.map((s) => h('li', {},
    h('button', {
      type: 'button', class: `spec-item${s.service_name === specs.selected ? ' selected' : ''}`,
      'data-testid': 'spec-item', 'data-service-name': s.service_name,
      'aria-pressed': String(s.service_name === specs.selected),
      onclick: () => selectSpec(s.service_name),
    },
    h('span', { class: 'mono strong' }, s.service_name),
    h('span', { class: 'muted small' }, ` version ${s.version} · updated ${fmtClock(s.updated_at)}`),
    s.unmanaged ? badge('unmanaged', 'neutral') : ''))));
}

/** Shows a stored spec with its source, history and a fresh dry-run of it. */
async function selectSpec(name) {
  const seq = ++specs.seq;
  specs.selected = name;
  renderSpecList();
  const box = $('spec-detail');
  box.replaceChildren(h('p', { class: 'muted' }, `Loading ${name}…`));
  try {
    const { data: detail } = await api('GET', `/api/v1/specs/${encodeURIComponent(name)}`);
    if (seq !== specs.seq) return;
    specs.selectedVersion = detail.version;
    const previewBox = h('div', { 'data-testid': 'spec-detail-preview' }, h('p', { class: 'muted' }, 'Running its dry-run…'));
    box.replaceChildren(
      h('div', { class: 'spec-detail-head' },
        h('h4', {}, detail.service_name),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'btn small', onclick: () => editSpecCopy(detail.source) }, 'Edit in the editor'),
          h('button', { type: 'button', class: 'btn small danger-outline', 'data-testid': 'spec-delete',
            onclick: (e) => deleteSpec(e.currentTarget, detail.service_name) }, 'Delete…'))),
      h('details', {}, h('summary', {}, `Source (version ${detail.version})`), h('pre', { class: 'code' }, detail.source)),
      h('details', {}, h('summary', {}, `History (${plural(detail.history.length, 'change')})`),
        h('ul', { class: 'small' }, detail.history.map(([version, action, at]) => h('li', {}, `version ${version}: ${action} at ${fmtClock(at)}`)))),
      h('div', { class: 'dry-run-head' }, h('h5', {}, 'Dry-run now'),
        h('button', { type: 'button', class: 'btn small', onclick: () => dryRunStored(seq, detail.source, previewBox) }, 'Run again')),
      previewBox);
    await dryRunStored(seq, detail.source, previewBox);
  } catch (e) {
    if (seq !== specs.seq) return;
    box.replaceChildren(h('p', { class: 'error-text', role: 'alert' }, `Could not load ${name}: ${e.message}`));
  }
}

/** The stored spec's dry-run against the current inventories (nothing is stored). */
async function dryRunStored(seq, source, box) {
  box.replaceChildren(h('p', { class: 'muted' }, 'Running its dry-run…'));
  try {
    const { data } = await api('POST', '/api/v1/specs?dry_run=true', { yaml: source });
    if (seq !== specs.seq) return;
    box.replaceChildren(h('p', { class: 'muted small' }, `As of ${fmtClock(serverNow())}.`), renderPreview(data));
  } catch (e) {
    if (seq !== specs.seq) return;
    box.replaceChildren(renderSpecFailure(e));
  }
}

function editSpecCopy(source) {
  const editor = $('spec-editor');
  editor.value = source;
  onEditorInput();
  editor.focus();
}

async function deleteSpec(button, name) {
  const ok = await confirmAction({
    title: `Delete the spec ${name}?`,
    body: ['Its OSDs stay as they are; no new OSDs will be created for it.'],
    ok: 'Delete the spec',
  });
  if (!ok) return;
  await runAction(button, `Deleting ${name}`, async () => {
    await api('DELETE', `/api/v1/specs/${encodeURIComponent(name)}`);
    notify(`Deleted the spec ${name}`, 'ok');
    await refreshers.specs.now();
  });
}

/** The dry-run as tables: OSDs to create per host, then per host what was skipped and why. */
function renderPreview(result) {
  const out = h('div', { class: 'preview', 'data-testid': 'preview' });
  if (result.errors && result.errors.length) out.append(renderSpecErrors(result.errors));
  for (const note of result.notes || []) out.append(h('p', { class: 'callout' }, note));
  if (result.hosts_without_inventory && result.hosts_without_inventory.length) {
    out.append(h('p', { class: 'callout warn' }, `No inventory yet for ${joinAnd(result.hosts_without_inventory)}: their disks are not in this preview.`));
  }
  for (const f of result.refresh_failures || []) out.append(h('p', { class: 'callout warn' }, `Refresh failed: ${typeof f === 'string' ? f : JSON.stringify(f)}`));
  const rows = result.preview || [];
  const planned = rows.reduce((n, r) => n + r.planned_osds.length, 0);
  const hostsWith = rows.filter((r) => r.planned_osds.length).length;
  out.append(h('p', { class: 'preview-summary', 'data-testid': 'preview-summary' },
    planned ? `${plural(planned, 'OSD')} to create on ${plural(hostsWith, 'host')}.` : 'No OSDs to create: no free disk matches.'));
  if (rows.length) out.append(previewTable(rows));
  for (const r of rows) out.append(previewHostDetails(r));
  return out;
}

function previewTable(rows) {
  const body = h('tbody', {});
  for (const r of rows) {
    const osdsPlanned = r.planned_osds.length ? r.planned_osds : [null];
    for (const p of osdsPlanned) {
      body.append(h('tr', { 'data-testid': 'preview-row', 'data-host': r.host, 'data-path': p ? p.data : '' },
        h('td', { class: 'mono' }, r.service_name || `osd.${r.service_id}`),
        h('td', {}, r.host),
        h('td', { class: 'mono' }, p ? p.data : h('span', { class: 'muted' }, 'nothing to create')),
        h('td', { class: 'mono' }, (p && p.db) || '—'),
        h('td', { class: 'mono' }, (p && p.wal) || '—'),
        h('td', { class: 'num muted small' }, r.inventory_age_s === null || r.inventory_age_s === undefined ? '—' : fmtDuration(r.inventory_age_s))));
    }
  }
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
    h('caption', { class: 'sr-only' }, 'OSDs the spec would create'),
    h('thead', {}, h('tr', {}, ['Service', 'Host', 'Data', 'DB', 'WAL', 'Inventory age'].map((t, i) => h('th', { scope: 'col', class: i === 5 ? 'num' : '' }, t)))),
    body));
}

function previewHostDetails(r) {
  const warnings = r.warnings || [];
  const skipped = r.skipped || [];
  const commands = r.commands || [];
  if (!warnings.length && !skipped.length && !commands.length) return '';
  const el = h('div', { class: 'preview-host', 'data-testid': 'preview-host', 'data-host': r.host });
  for (const w of warnings) el.append(h('p', { class: 'callout warn small' }, h('strong', {}, `${r.host}: `), w));
  const details = h('details', {}, h('summary', {},
    h('strong', {}, r.host), ` — ${plural(skipped.length, 'disk')} not chosen${commands.length ? `, ${plural(commands.length, 'command')}` : ''}`));
  if (skipped.length) {
    details.append(h('ul', { class: 'small' }, skipped.map((s) => h('li', {}, h('span', { class: 'mono' }, s.path), ': ', s.reasons.join('; ')))));
  }
  if (commands.length) details.append(h('pre', { class: 'code small' }, commands.map((c) => `ceph-volume ${c}`).join('\n')));
  el.append(details);
  return el;
}

function renderSpecErrors(errors) {
  return h('div', { class: 'spec-errors', role: 'alert', 'data-testid': 'spec-errors' },
    h('p', { class: 'error-text' }, h('strong', {}, `${plural(errors.length, 'invalid document')}; nothing was applied.`)),
    h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
      h('thead', {}, h('tr', {}, ['Document', 'Line', 'Service', 'Field', 'Value', 'Problem'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, errors.map((e) => h('tr', { 'data-testid': 'spec-error', 'data-field': e.field || '' },
        h('td', { class: 'num' }, e.doc === undefined || e.doc === null ? '—' : String(e.doc)),
        h('td', { class: 'num' }, e.line === undefined || e.line === null ? '—' : String(e.line)),
        h('td', { class: 'mono' }, e.service_id || '—'),
        h('td', { class: 'mono' }, e.field || '—'),
        h('td', { class: 'mono' }, e.value === undefined || e.value === null ? '—' : String(e.value)),
        h('td', {}, e.error)))))));
}

/** A failed dry-run or apply: the validation table when there is one, else the message. */
function renderSpecFailure(err) {
  if (err.body && Array.isArray(err.body.errors) && err.body.errors.length) return renderSpecErrors(err.body.errors);
  return h('p', { class: 'error-text', role: 'alert', 'data-testid': 'spec-failure' }, err.message);
}

function onEditorInput() {
  const text = $('spec-editor').value;
  const applicable = specs.previewedText !== null && text === specs.previewedText;
  $('spec-apply').disabled = !applicable;
  const result = $('spec-editor-result');
  const stale = result.querySelector('[data-testid=preview]') && !applicable;
  result.classList.toggle('stale', Boolean(stale));
  let hint = result.querySelector('.stale-hint');
  if (stale && !hint) {
    hint = h('p', { class: 'callout warn small stale-hint' }, 'The text changed since this dry-run: run it again before applying.');
    result.prepend(hint);
  } else if (!stale && hint) {
    hint.remove();
  }
}

async function dryRunEditor() {
  const text = $('spec-editor').value;
  const result = $('spec-editor-result');
  specs.previewedText = null;
  $('spec-apply').disabled = true;
  result.classList.remove('stale');
  result.replaceChildren(h('p', { class: 'muted' }, 'Running the dry-run…'));
  await runAction($('spec-dry-run'), 'Dry run', async () => {
    try {
      const { data } = await api('POST', '/api/v1/specs?dry_run=true', { yaml: text });
      specs.lastPreview = data;
      result.replaceChildren(renderPreview(data));
      if (!(data.errors && data.errors.length)) specs.previewedText = text;
    } catch (e) {
      result.replaceChildren(renderSpecFailure(e));
    }
  });
  onEditorInput();
}

async function applyEditor() {
  const text = specs.previewedText;
  if (text === null || text !== $('spec-editor').value) return;
  const rows = (specs.lastPreview && specs.lastPreview.preview) || [];
  const names = [...new Set(rows.map((r) => r.service_name))];
  const planned = rows.filter((r) => r.planned_osds.length);
  const body = [
    names.length ? `The daemon stores ${joinAnd(names)} and keeps creating OSDs on the disks it matches.` : 'The daemon stores this spec; it matches no host right now.',
  ];
  if (planned.length) {
    body.push(h('ul', { class: 'plan' }, planned.map((r) => h('li', {}, h('strong', {}, r.host), `: new OSDs on ${joinAnd(r.planned_osds.map((p) => p.data))}`))));
  } else {
    body.push('No OSD is created now: no free disk matches.');
  }
  const ok = await confirmAction({ title: 'Apply this spec?', body, ok: 'Apply the spec', danger: true });
  if (!ok) return;
  await runAction($('spec-apply'), 'Applying the spec', async () => {
    try {
      const { data } = await api('POST', '/api/v1/specs?dry_run=false', { yaml: text });
      const stored = data.stored || [];
      notify(`Stored ${joinAnd(stored.map((s) => `${s.service_name} (version ${s.version})`)) || 'the spec'}`, 'ok');
      $('spec-editor-result').replaceChildren(h('p', { class: 'callout ok', 'data-testid': 'spec-applied' },
        `Applied: ${joinAnd(stored.map((s) => s.service_name))}. The reconciler creates its OSDs; watch the event log.`));
      specs.previewedText = null;
      await refreshers.specs.now();
      if (stored.length) selectSpec(stored[0].service_name);
    } catch (e) {
      $('spec-editor-result').replaceChildren(renderSpecFailure(e));
      throw e;
    }
  });
  onEditorInput();
}

// ───────────────────────── 7. Event log ─────────────────────────

const events = { lastId: 0, seen: new Set() };
const EVENTS_KEPT = 300;

async function loadEvents() {
  try {
    const path = events.lastId ? `/api/v1/events?after=${events.lastId}&limit=1000` : '/api/v1/events?limit=200';
    const { data } = await api('GET', path);
    showPanelError('events-error', null);
    addEvents(data);
  } catch (e) {
    showPanelError('events-error', new Error(`Could not load events: ${e.message}`));
  }
}

/** Inserts new events in id order, newest at the top, keeping the last EVENTS_KEPT. */
function addEvents(list) {
  const fresh = list.filter((e) => !events.seen.has(e.id)).sort((a, b) => a.id - b.id);
  if (!fresh.length) return;
  const log = $('event-log');
  const firstLoad = events.seen.size === 0;
  for (const ev of fresh) {
    events.seen.add(ev.id);
    events.lastId = Math.max(events.lastId, ev.id);
    const li = eventItem(ev, !firstLoad);
    // Usually the newest: goes first. An older one (a race between the
    // initial fetch and the stream) goes where its id belongs.
    let before = log.firstElementChild;
    while (before && Number(before.dataset.id) > ev.id) before = before.nextElementSibling;
    log.insertBefore(li, before);
  }
  while (log.children.length > EVENTS_KEPT) {
    const last = log.lastElementChild;
    events.seen.delete(Number(last.dataset.id));
    last.remove();
  }
  const empty = log.querySelector('.empty');
  if (empty) empty.remove();
}

function eventItem(ev, isNew) {
  const levelText = { info: 'Info', warning: 'Warning', error: 'Error' }[ev.level] || ev.level;
  const meta = [ev.host, ev.subject].filter(Boolean).join(' · ');
  return h('li', { class: `event level-${ev.level}${isNew ? ' new' : ''}`, 'data-testid': 'event', 'data-id': ev.id, 'data-kind': ev.kind, 'data-level': ev.level },
    h('time', { datetime: new Date(ev.at).toISOString(), title: new Date(ev.at).toString() }, fmtClock(ev.at)),
    badge(levelText, `level ${ev.level}`),
    h('div', { class: 'event-text' }, h('span', { class: 'msg' }, ev.message),
      meta ? h('span', { class: 'meta' }, ` ${meta}`) : ''));
}

// ───────────────────────── 8. Wiring ─────────────────────────

// Every fetch is bounded (a page of hosts, of OSDs, a summary); at 2000
// hosts the summary, which every host poll asks for, is fetched less often.
const refreshers = {
  removals: new Refresher('removals', loadRemovals, 1000),
  osds: new Refresher('osds', loadOsds, 2000),
  hosts: new Refresher('hosts', loadHostPage, 2000),
  summary: new Refresher('summary', loadSummary, () => (summary.data && summary.data.hosts > 500 ? 5000 : 2000)),
  unreachable: new Refresher('unreachable hosts', loadUnreachable, 3000),
  held: new Refresher('held devices', loadHeld, 2000),
  specs: new Refresher('specs', loadSpecs, 1000),
  events: new Refresher('events', loadEvents, 1000),
};

function refreshAll() {
  for (const r of Object.values(refreshers)) r.request();
}

function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

function bindControls() {
  $('host-search').addEventListener('input', debounce((e) => {
    hosts.q = e.target.value.trim();
    hosts.offset = 0;
    refreshers.hosts.now();
  }, 250));
  $('host-page-size').addEventListener('change', (e) => {
    hosts.limit = Number(e.target.value);
    hosts.offset = 0;
    refreshers.hosts.now();
  });
  const page = (delta) => () => {
    hosts.offset = delta === 0 ? 0 : Math.max(0, hosts.offset + delta * hosts.limit);
    refreshers.hosts.now();
  };
  $('host-first').addEventListener('click', page(0));
  $('host-prev').addEventListener('click', page(-1));
  $('host-next').addEventListener('click', page(1));

  $('osd-filter').addEventListener('input', debounce((e) => {
    osds.filter = e.target.value.trim();
    refreshers.osds.now();
  }, 250));
  $('rm-schedule').addEventListener('click', scheduleRemoval);
  $('rm-clear').addEventListener('click', () => {
    osds.selected.clear();
    for (const cb of $('osd-table').querySelectorAll('input[type=checkbox]')) cb.checked = false;
    updateScheduleButton();
  });

  $('spec-editor').addEventListener('input', onEditorInput);
  $('spec-dry-run').addEventListener('click', dryRunEditor);
  $('spec-apply').addEventListener('click', applyEditor);

  // Without a token nothing works: the token form cannot be dismissed.
  $('token-dialog').addEventListener('cancel', (e) => e.preventDefault());
}

function boot() {
  $('spec-editor').value = PREFILLED_SPEC;
  $('event-log').append(h('li', { class: 'empty' }, 'No events yet.'));
  renderSummary();
  bindControls();
  refreshAll();
  connectStream();
  setInterval(tickAges, 1000);
}

boot();
