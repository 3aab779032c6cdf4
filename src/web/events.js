// The event log, newest first. Events arrive from the stream one by one and
// from /api/v1/events after a reconnect; both go through addEvents.
import { api } from './api.js';
import { $, badge, h } from './dom.js';
import { fmtClock } from './format.js';
import { showPanelError } from './notices.js';
import { register } from './refresh.js';

const events = { lastId: 0, seen: new Set() };
const EVENTS_KEPT = 300;

register('events', 'events', loadEvents, 1000);

export function initEvents() {
  $('event-log').append(h('li', { class: 'empty' }, 'No events yet.'));
}

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
export function addEvents(list) {
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
  // `actor`: the token whose request recorded it (absent: the daemon on its own).
  const meta = [ev.host, ev.subject, ev.actor ? `by ${ev.actor}` : ''].filter(Boolean).join(' · ');
  return h('li', { class: `event level-${ev.level}${isNew ? ' new' : ''}`, 'data-testid': 'event', 'data-id': ev.id, 'data-kind': ev.kind, 'data-level': ev.level },
    h('time', { datetime: new Date(ev.at).toISOString(), title: new Date(ev.at).toString() }, fmtClock(ev.at)),
    badge(levelText, `level ${ev.level}`),
    h('div', { class: 'event-text' }, h('span', { class: 'msg' }, ev.message),
      meta ? h('span', { class: 'meta' }, ` ${meta}`) : ''));
}
