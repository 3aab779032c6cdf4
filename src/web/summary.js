// The header's counts: one call (/api/v1/summary), however many hosts
// there are. The counts also tell other panels they are out of date.
import { api } from './api.js';
import { $, h } from './dom.js';
import { noteHostCount } from './hosts.js';
import { refreshers, register } from './refresh.js';
import { noteUnreachable } from './unreachable.js';

const summary = { data: null };

// Every host poll asks for the summary: at 2000 hosts it is fetched less often.
register('summary', 'summary', loadSummary, () => (summary.data && summary.data.hosts > 500 ? 5000 : 2000));

export function initSummary() {
  renderSummary();
}

async function loadSummary() {
  const { data } = await api('GET', '/api/v1/summary');
  const before = summary.data;
  summary.data = data;
  renderSummary();
  // What else the counts say is out of date: the unreachable hosts' list
  // (a rare change, shown at once), held devices (a zap holds one, a
  // release frees one), the pager's total (hosts added or removed).
  noteUnreachable(data.unreachable_hosts);
  if (before && before.held_devices !== data.held_devices) {
    refreshers.held.request();
    refreshers.hosts.request();
  }
  noteHostCount(data.hosts);
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
