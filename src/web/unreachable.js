// The callout over the hosts table naming unreachable hosts: a few, with
// since when and why, fetched only when the summary counts any.
import { api } from './api.js';
import { $, h } from './dom.js';
import { fmtClock, plural } from './format.js';
import { searchHosts } from './hosts.js';
import { showPanelError } from './notices.js';
import { register } from './refresh.js';

// `wanted`: the names the latest summary gave (null before it loaded);
// `names`: those the callout shows.
const unreachable = { wanted: null, names: '', shown: 12 };

const refresher = register('unreachable', 'unreachable hosts', loadUnreachable, 3000);

/** From each summary: a change of the list is rare, and shown at once. */
export function noteUnreachable(names) {
  unreachable.wanted = names.join('\n');
  if (unreachable.wanted !== unreachable.names) refresher.now();
}

async function loadUnreachable() {
  if (unreachable.wanted === null) return; // the summary asks again once it has loaded
  const names = unreachable.wanted;
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
