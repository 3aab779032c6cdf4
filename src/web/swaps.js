// Swaps: old OSDs out, new disks in, each copy moved once (osd replace).
// A row per swap: its way and phase, the OSDs out and the disks in with
// the OSDs made on them, what the hand-over still has to move, and what
// it waits on or how it ended. Refreshed by the swap events.
import { api } from './api.js';
import { $, badge, emptyState, h, rerender } from './dom.js';
import { fmtBytes, fmtClock, osdName } from './format.js';
import { SwapPhase } from './kinds.js';
import { showPanelError } from './notices.js';
import { register } from './refresh.js';

const swaps = { rows: [] };

register('swaps', 'swaps', loadSwaps, 1000);

async function loadSwaps() {
  try {
    const { data } = await api('GET', '/api/v1/swaps?history=10');
    showPanelError('swaps-error', null);
    swaps.rows = data.slice().sort((a, b) => b.swap_id - a.swap_id);
    rerender($('swaps-table'), renderSwaps);
  } catch (e) {
    showPanelError('swaps-error', new Error(`Could not load swaps: ${e.message}`));
  }
}

function stateKind(state) {
  if (state === SwapPhase.DONE) return 'ok';
  if (state === SwapPhase.FAILED) return 'bad';
  if (state === SwapPhase.STOPPED) return 'warn';
  return 'info';
}

function renderSwaps() {
  const box = $('swaps-table');
  if (!swaps.rows.length) {
    box.replaceChildren(emptyState('No swaps yet: `osdkeeper osd replace ID --with HOST:DEV` moves an OSD\'s data to a new disk once.'));
    return;
  }
  const table = h('table', { class: 'data swaps' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Swap'), h('th', { scope: 'col' }, 'Host'), h('th', { scope: 'col' }, 'Way'),
      h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Out'), h('th', { scope: 'col' }, 'In'),
      h('th', { scope: 'col' }, 'Left to move'), h('th', { scope: 'col' }, 'Started'), h('th', { scope: 'col' }, 'Waiting on'))),
    h('tbody', {}, swaps.rows.map(swapRow)));
  box.replaceChildren(table);
}

function swapRow(s) {
  const notes = [];
  if (s.waiting_on) notes.push(h('div', {}, s.waiting_on));
  if (s.last_error) notes.push(h('div', { class: 'error-text' }, h('strong', {}, 'Last error: '), s.last_error));
  if (s.ending) notes.push(h('div', { class: 'muted small' }, s.ending));
  const left = s.pgs_left == null ? '–' : `${s.pgs_left} PGs, ${fmtBytes(s.bytes_left || 0)}`;
  const made = (d) => `${d.path}${d.osd == null ? '' : ` → ${osdName(d.osd)}`}`;
  return h('tr', { 'data-testid': 'swap', 'data-state': s.state, 'data-host': s.host },
    h('td', {}, String(s.swap_id)),
    h('td', { class: 'nowrap' }, s.host),
    h('td', {}, `${s.way} (${s.method}${s.encrypted ? ', encrypted' : ''})`),
    h('td', {}, badge(s.state, stateKind(s.state))),
    h('td', {}, s.osds.map(osdName).join(', ')),
    h('td', { class: 'mono small' }, s.disks.map(made).join(', ')),
    h('td', { class: 'small' }, `${left}; ${s.handed} entries issued`),
    h('td', { class: 'small' }, fmtClock(s.created_at)),
    h('td', { class: 'small' }, notes));
}
