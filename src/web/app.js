// osdkeeper dashboard.
//
// One page over the daemon's JSON API (/api/v1, see /api/v1/openapi.json):
// removals with progress and a chart, the OSD list to schedule removals
// from, the event log, hosts and their devices (paged on the server), and
// specs with their dry-run. It stays live through /api/v1/stream and
// refetches only the panel a stream message names, throttled per panel.
//
// Rules kept throughout: every text that came from the API reaches the DOM
// through textContent or attributes (never innerHTML); the API token lives
// in sessionStorage and only ever travels in the Authorization header.
'use strict';

// ───────────────────────── 1. DOM and formatting helpers ─────────────────────────

const $ = (id) => document.getElementById(id);
const SVG_NS = 'http://www.w3.org/2000/svg';

/** Appends children: nodes as they are, anything else as text (escaped by the DOM). */
function appendAll(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function setProps(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  return el;
}

/** h('td', {class: 'x'}, 'text', child): an HTML element. */
function h(tag, props, ...children) {
  return appendAll(setProps(document.createElement(tag), props), children);
}

/** svg('line', {x1: 0, ...}): an SVG element. */
function svg(tag, props, ...children) {
  return appendAll(setProps(document.createElementNS(SVG_NS, tag), props), children);
}

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** "7 s", "4 min 10 s", "2 h 5 min", "3 d 4 h". */
function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 && m < 10 ? `${m} min ${s % 60} s` : `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return m % 60 ? `${hrs} h ${m % 60} min` : `${hrs} h`;
  const d = Math.floor(hrs / 24);
  return hrs % 24 ? `${d} d ${hrs % 24} h` : `${d} d`;
}

/** A clock time for a server timestamp (ms); the date too when it is not today. */
function fmtClock(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' })} ${time}`;
}

function fmtBytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < units.length - 1) {
    n /= 1024;
    i += 1;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function fmtRate(pgsPerMin) {
  if (pgsPerMin === null || pgsPerMin === undefined || !Number.isFinite(pgsPerMin)) return '—';
  return `${pgsPerMin >= 10 ? Math.round(pgsPerMin) : pgsPerMin.toFixed(1)} PGs/min`;
}

function osdName(id) {
  return `osd.${id}`;
}

/** Join ["a", "b", "c"] as "a, b and c". */
function joinAnd(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

// Server timestamps are turned into ages with the server's clock, estimated
// from inventories' age_s (or the Date header), so a skewed browser clock
// does not make hosts look stale.
const clock = { offsetMs: 0, fromInventory: false };

function serverNow() {
  return Date.now() + clock.offsetMs;
}

function noteServerDate(res) {
  if (clock.fromInventory) return;
  const date = Date.parse(res.headers.get('date') || '');
  // The Date header has whole seconds; only trust it for large skews.
  if (Number.isFinite(date) && Math.abs(date - Date.now()) > 5000) clock.offsetMs = date - Date.now();
}

/** An element whose text is "N ago" for a server timestamp, kept current by the ticker. */
function agoEl(tag, atMs, props = {}) {
  const el = h(tag, { ...props, 'data-ago': atMs });
  el.textContent = `${fmtDuration((serverNow() - atMs) / 1000)} ago`;
  return el;
}

function tickAges() {
  for (const el of document.querySelectorAll('[data-ago]')) {
    el.textContent = `${fmtDuration((serverNow() - Number(el.dataset.ago)) / 1000)} ago`;
  }
}

/** A stable string for "did this data change?", ignoring keys that change on every read. */
function signature(value, ignore = []) {
  return JSON.stringify(value, (k, v) => (ignore.includes(k) ? undefined : v));
}

/**
 * Live panels are re-rendered every second or so; this keeps the keyboard
 * focus on "the same" control afterwards (same row, same control), so that
 * a Stop or Release button stays reachable while its row updates.
 */
function rerender(container, render) {
  const active = document.activeElement;
  const key = active && container.contains(active) ? focusKey(active) : null;
  render();
  if (!key) return;
  for (const el of container.querySelectorAll('button, input, select, a[href]')) {
    if (focusKey(el) === key) {
      el.focus();
      return;
    }
  }
}

function focusKey(el) {
  const row = el.closest('[data-removal-id], [data-osd-id], [data-host], [data-service-name]');
  const rowKey = row ? ['removalId', 'osdId', 'host', 'path', 'serviceName'].map((k) => row.dataset[k] || '').join('/') : '';
  return `${rowKey}|${el.id || el.dataset.testid || el.textContent}`;
}

function badge(text, kind, props = {}) {
  return h('span', { ...props, class: `badge ${kind || ''}`.trim() }, text);
}

function emptyState(text) {
  return h('p', { class: 'empty' }, text);
}

// ───────────────────────── 2. API client and token ─────────────────────────

const TOKEN_KEY = 'osdkeeper.token';
const auth = { token: sessionStorage.getItem(TOKEN_KEY) || '', pending: null };

class ApiError extends Error {
  constructor(status, message, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

function authHeaders(extra = {}) {
  const headers = { ...extra };
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  return headers;
}

async function readBody(res) {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 500) };
  }
}

/**
 * One API call. A 401 asks for the token and retries; any other failure
 * throws an ApiError carrying the daemon's own message.
 * `yaml` sends the body as YAML text, `json` as JSON.
 */
async function api(method, path, { json, yaml } = {}) {
  for (;;) {
    const headers = authHeaders({ Accept: 'application/json' });
    let body;
    if (yaml !== undefined) {
      headers['Content-Type'] = 'application/yaml';
      body = yaml;
    } else if (json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(json);
    }
    let res;
    try {
      res = await fetch(path, { method, headers, body, cache: 'no-store' });
    } catch (e) {
      distrustStream();
      throw new ApiError(0, `cannot reach the daemon (${e.message})`, null);
    }
    noteServerDate(res);
    const data = await readBody(res);
    if (res.status === 401) {
      await askToken((data && data.error) || 'the daemon needs an API token');
      continue;
    }
    if (!res.ok) throw new ApiError(res.status, (data && data.error) || `HTTP ${res.status}`, data);
    return { data, headers: res.headers, status: res.status };
  }
}

/** Shows the token form once, however many calls are waiting for it. */
function askToken(reason) {
  if (auth.pending) return auth.pending;
  auth.pending = new Promise((resolve) => {
    const dialog = $('token-dialog');
    $('token-reason').textContent = auth.token ? `The token was refused: ${reason}` : reason;
    const input = $('token-input');
    input.value = '';
    const form = $('token-form');
    const onSubmit = (e) => {
      e.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      auth.token = value;
      sessionStorage.setItem(TOKEN_KEY, value);
      form.removeEventListener('submit', onSubmit);
      dialog.close();
      auth.pending = null;
      resolve();
      // The stream was refused too: reconnect it with the token.
      reconnectStreamNow();
    };
    form.addEventListener('submit', onSubmit);
    dialog.showModal();
    input.focus();
  });
  return auth.pending;
}

// ───────────────────────── 3. Notices, panel errors, confirmation ─────────────────────────

function notify(text, kind = 'info') {
  const close = h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Dismiss' }, '×');
  const el = h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': `notice-${kind}` },
    h('strong', {}, kind === 'error' ? 'Error: ' : kind === 'ok' ? 'Done: ' : ''), text, close);
  close.addEventListener('click', () => el.remove());
  $('notices').append(el);
  // Errors stay until dismissed: they may explain why something did not happen.
  if (kind !== 'error') setTimeout(() => el.remove(), 8000);
}

function showPanelError(id, err) {
  const el = $(id);
  if (!err) {
    el.hidden = true;
    el.textContent = '';
    return;
  }
  el.hidden = false;
  el.textContent = err.message || String(err);
}

/**
 * A modal confirmation; resolves to true only for the confirm button.
 * `body` is a list of nodes or strings. Focus starts on Cancel, the safe choice.
 */
function confirmAction({ title, body, ok = 'Confirm', danger = true }) {
  return new Promise((resolve) => {
    const dialog = $('confirm-dialog');
    $('confirm-title').textContent = title;
    $('confirm-body').replaceChildren(...body.map((b) => (b instanceof Node ? b : h('p', {}, b))));
    const okBtn = $('confirm-ok');
    okBtn.textContent = ok;
    okBtn.className = danger ? 'btn danger' : 'btn primary';
    dialog.returnValue = '';
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}

/** Runs an action from a button: disables it meanwhile and reports failures. */
async function runAction(button, what, fn) {
  if (button) button.disabled = true;
  try {
    return await fn();
  } catch (e) {
    notify(`${what}: ${e.message}`, 'error');
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

// ───────────────────────── 4. Throttled refreshers ─────────────────────────

// A busy cluster sends many stream messages a second (every host poll says
// "hosts"). Each panel has one Refresher: at most one fetch in flight, at most
// one start per `gapMs`, and requests made meanwhile collapse into one rerun.
class Refresher {
  constructor(name, load, gapMs) {
    this.name = name;
    this.load = load;
    this.gapMs = gapMs;
    this.last = 0;
    this.running = null;
    this.again = false;
    this.timer = null;
  }

  /** Refresh soon, respecting the gap. */
  request() {
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(0, this.last + this.gap() - Date.now());
    this.timer = setTimeout(() => this.run(), wait);
  }

  /** Refresh right away (after a user action); resolves when that data is shown. */
  async now() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.running) {
      await this.running;
      // The finished fetch may have started before the action: fetch again.
      return this.now();
    }
    return this.run();
  }

  gap() {
    return typeof this.gapMs === 'function' ? this.gapMs() : this.gapMs;
  }

  async run() {
    this.timer = null;
    this.last = Date.now();
    this.running = (async () => {
      try {
        await this.load();
      } catch (e) {
        console.warn(`refresh ${this.name}:`, e);
      }
    })();
    await this.running;
    this.running = null;
    if (this.again) {
      this.again = false;
      this.request();
    }
  }
}

// ───────────────────────── 5. Live stream (fetch + ReadableStream) ─────────────────────────

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
      break;
    }
    case 'removals':
      refreshers.removals.request();
      refreshers.osds.request();
      break;
    case 'hosts':
      refreshers.hosts.request();
      refreshers.held.request();
      refreshers.hostSummary.request();
      break;
    case 'specs':
      refreshers.specs.request();
      break;
    case 'resync':
      refreshAll();
      break;
    default:
      break;
  }
}

// ───────────────────────── 6. Header summary ─────────────────────────

const summary = { hosts: null, unreachable: null, osds: null, osdsUp: null, activeRemovals: null, specs: null };

function renderSummary() {
  const items = [
    ['Hosts', summary.hosts, 'summary-hosts'],
    ['Unreachable', summary.unreachable, 'summary-unreachable'],
    ['OSDs up', summary.osds === null ? null : `${summary.osdsUp}/${summary.osds}`, 'summary-osds'],
    ['Removing', summary.activeRemovals, 'summary-removals'],
    ['Specs', summary.specs, 'summary-specs'],
  ];
  const nodes = [];
  for (const [label, value, testid] of items) {
    const warn = label === 'Unreachable' && value > 0;
    nodes.push(h('div', { class: `summary-item${warn ? ' warn' : ''}`, 'data-testid': testid },
      h('dt', {}, label), h('dd', {}, value === null ? '…' : String(value))));
  }
  $('summary').replaceChildren(...nodes);
}

// ───────────────────────── 7. Hosts and devices (paged on the server) ─────────────────────────

// At 2000 hosts and 20000 devices only one page of hosts is ever fetched
// and rendered; the search runs on the server (`q`).
const hosts = { q: '', offset: 0, limit: 20, total: 0, rows: [], sig: '', seq: 0 };
const allHosts = { rows: [] };
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

/** All hosts (names and reachability only), for the header and the unreachable list. */
async function loadHostSummary() {
  try {
    const { data } = await api('GET', '/api/v1/hosts');
    allHosts.rows = data;
    summary.hosts = data.length;
    const down = data.filter((hst) => hst.unreachable_since);
    summary.unreachable = down.length;
    renderSummary();
    renderUnreachable(down);
  } catch (e) {
    showPanelError('hosts-error', new Error(`Could not load hosts: ${e.message}`));
  }
}

function renderUnreachable(down) {
  const box = $('unreachable');
  if (!down.length) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  const shown = down.slice(0, 12);
  box.replaceChildren(
    h('strong', {}, `${plural(down.length, 'host')} unreachable: `),
    ...shown.map((hst) => h('button', { type: 'button', class: 'link', title: hst.last_error || '',
      onclick: () => searchHosts(hst.name) }, `${hst.name} (since ${fmtClock(hst.unreachable_since)})`)),
    down.length > shown.length ? h('span', { class: 'muted' }, ` and ${down.length - shown.length} more`) : '');
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
    await Promise.all([refreshers.held.now(), refreshers.hosts.now()]);
  });
}

// ───────────────────────── 8. OSDs and scheduling removals ─────────────────────────

const osds = { rows: [], sig: '', selected: new Set(), filter: '' };
const OSD_ROWS_SHOWN = 200;

async function loadOsds() {
  try {
    const { data } = await api('GET', '/api/v1/osds');
    showPanelError('osds-error', null);
    summary.osds = data.filter((o) => !o.destroyed).length;
    summary.osdsUp = data.filter((o) => o.up && !o.destroyed).length;
    renderSummary();
    const sig = signature(data);
    if (sig === osds.sig) return;
    osds.sig = sig;
    osds.rows = data;
    // Forget selections the cluster no longer allows (removed, or being removed).
    const removable = new Set(data.filter(isRemovable).map((o) => o.id));
    for (const id of [...osds.selected]) if (!removable.has(id)) osds.selected.delete(id);
    rerender($('osd-table'), renderOsds);
  } catch (e) {
    showPanelError('osds-error', new Error(`Could not load the OSDs: ${e.message}`));
  }
}

function isRemovable(o) {
  return !o.removal && !o.destroyed;
}

function osdMatches(o, filter) {
  if (!filter) return true;
  const f = filter.toLowerCase().replace(/^osd\./, '');
  if (/^\d+$/.test(f)) return String(o.id) === f;
  return (o.host || '').toLowerCase().includes(f) || o.devices.some((d) => d.toLowerCase().includes(f));
}

function renderOsds() {
  const matching = osds.rows.filter((o) => osdMatches(o, osds.filter));
  const shown = matching.slice(0, OSD_ROWS_SHOWN);
  const table = h('table', { class: 'data osds' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col', class: 'select' }, h('span', { class: 'sr-only' }, 'Select')),
      h('th', { scope: 'col' }, 'OSD'), h('th', { scope: 'col' }, 'Host'), h('th', { scope: 'col' }, 'Devices'),
      h('th', { scope: 'col', class: 'num' }, 'Weight'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col', class: 'num' }, 'PGs'),
      h('th', { scope: 'col' }, 'Removal'))),
    h('tbody', {}, shown.map(osdRow)));
  $('osd-table').replaceChildren(shown.length ? table : emptyState(osds.rows.length ? 'No OSD matches this filter.' : 'No OSDs in the cluster.'));
  $('osd-count').textContent = matching.length > shown.length
    ? `Showing ${shown.length} of ${matching.length} matching OSDs: narrow the filter to see the others.`
    : `${plural(matching.length, 'OSD')}${osds.filter ? ' match' : ''}.`;
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
    if (checkbox.checked) osds.selected.add(o.id);
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
  const chosen = osds.rows.filter((o) => osds.selected.has(o.id));
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
    await Promise.all([refreshers.removals.now(), refreshers.osds.now()]);
  });
  updateScheduleButton();
}

// ───────────────────────── 9. Removals: progress and chart ─────────────────────────

const removals = { rows: [], details: new Map(), sig: '' };
const TERMINAL = new Set(['done', 'cancelled']);
const STOPPABLE = new Set(['queued', 'draining', 'waiting-safe']);
const CHART_SERIES_MAX = 6;
// A removal's detail holds all its samples (hours of them on a real drain):
// a running one's is refetched at most this often, not on every update.
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
    summary.activeRemovals = data.filter((r) => !TERMINAL.has(r.state)).length;
    renderSummary();
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

/** Samples for the charted removals; a finished removal's are fetched once more, then kept. */
async function loadChartDetails() {
  const wanted = chartedRemovals();
  await Promise.all(wanted.map(async (r) => {
    const cached = removals.details.get(r.removal_id);
    if (cached && cached.state === r.state && (TERMINAL.has(r.state) || Date.now() - cached.fetchedAt < DETAIL_REFRESH_MS)) return;
    try {
      const { data } = await api('GET', `/api/v1/osds/removals/${encodeURIComponent(r.removal_id)}`);
      removals.details.set(r.removal_id, { ...data, fetchedAt: Date.now() });
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
    await Promise.all([refreshers.removals.now(), refreshers.osds.now()]);
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

// ───────────────────────── 10. Specs: list, dry-run preview, editor ─────────────────────────

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
    summary.specs = data.length;
    renderSummary();
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

// ───────────────────────── 11. Event log ─────────────────────────

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

// ───────────────────────── 12. Wiring ─────────────────────────

// Gaps grow with the cluster: listing 9000 OSDs is not free, so a big
// cluster's OSD list is refreshed less often than a small one's.
const refreshers = {
  removals: new Refresher('removals', loadRemovals, 1000),
  osds: new Refresher('osds', loadOsds, () => (osds.rows.length > 2000 ? 15000 : 2000)),
  hosts: new Refresher('hosts', loadHostPage, 2000),
  hostSummary: new Refresher('host summary', loadHostSummary, () => (allHosts.rows.length > 500 ? 15000 : 3000)),
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
    renderOsds();
  }, 150));
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
