// Server timestamps are turned into ages with the server's clock, estimated
// from inventories' age_s (or the Date header), so a skewed browser clock
// does not make hosts look stale.
import { h } from './dom.js';
import { fmtDuration } from './format.js';

const clock = { offsetMs: 0, fromInventory: false };

export function serverNow() {
  return Date.now() + clock.offsetMs;
}

export function noteServerDate(res) {
  if (clock.fromInventory) return;
  const date = Date.parse(res.headers.get('date') || '');
  // The Date header has whole seconds; only trust it for large skews.
  if (Number.isFinite(date) && Math.abs(date - Date.now()) > 5000) clock.offsetMs = date - Date.now();
}

/** taken_at + age_s is the server's "now" when it answered. */
export function learnServerClock(hostRows) {
  const inv = hostRows.find((r) => r.inventory);
  if (!inv) return;
  clock.offsetMs = inv.inventory.taken_at + inv.inventory.age_s * 1000 - Date.now();
  clock.fromInventory = true;
}

/** An element whose text is "N ago" for a server timestamp, kept current by the ticker. */
export function agoEl(tag, atMs, props = {}) {
  const el = h(tag, { ...props, 'data-ago': atMs });
  el.textContent = `${fmtDuration((serverNow() - atMs) / 1000)} ago`;
  return el;
}

export function tickAges() {
  for (const el of document.querySelectorAll('[data-ago]')) {
    el.textContent = `${fmtDuration((serverNow() - Number(el.dataset.ago)) / 1000)} ago`;
  }
}
