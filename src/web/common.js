// osdkeeper dashboard: the parts that hold no page state. Loaded before
// app.js, which builds the page from them: DOM and formatting helpers, the
// API client with its token form, notices and confirmations, and the
// throttled refreshers every panel uses.
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
/** What the API client tells the page (app.js sets these). */
const apiHooks = {
  /** A call could not reach the daemon. */
  unreachable() {},
  /** A token was entered after a 401. */
  tokenEntered() {},
};
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
      apiHooks.unreachable();
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
      apiHooks.tokenEntered();
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
