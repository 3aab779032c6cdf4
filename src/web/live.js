// The live stream (/api/v1/stream) and the indicator in the header.
// EventSource cannot send the Authorization header, so the stream is read
// with fetch. While it is down the panels are polled and it reconnects with
// exponential backoff. What each message refetches is decided by main.js.
import { onUnreachable, readBody } from './api.js';
import { $ } from './dom.js';
import { StreamMessage } from './kinds.js';
import { refreshAll } from './refresh.js';
import { askToken, authHeaders, onTokenEntered } from './token.js';

const live = { controller: null, backoffMs: 1000, reconnectTimer: null, pollTimer: null, watchdog: null, onMessage: null };
const POLL_MS = 4000;
const STREAM_SILENCE_MS = 40000; // the daemon sends a keep-alive every 15 s

/** Connects, and keeps reconnecting; `onMessage(type, data)` gets every message but `hello`. */
export function startLive(onMessage) {
  live.onMessage = onMessage;
  onUnreachable(distrustStream);
  onTokenEntered(reconnectStreamNow);
  connectStream();
}

/** The list a `hosts` or `removals` message names, or null when it names none (refetch anyway). */
export function namedInMessage(data, key) {
  try {
    const list = JSON.parse(data)[key];
    return Array.isArray(list) && list.length ? list : null;
  } catch {
    return null;
  }
}

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
  if (type !== StreamMessage.HELLO) {
    live.onMessage(type, data);
    return;
  }
  live.backoffMs = 1000;
  stopPolling();
  setLiveStatus('live');
  // Whatever happened while we were not connected: fetch it all once.
  refreshAll();
}
