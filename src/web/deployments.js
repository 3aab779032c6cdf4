// Deployments: each spec's new OSDs on a host, step by step (prepared,
// activated, started, up and in), what a deployment waits on, and why an
// attempt failed in ceph-volume's or the cluster's words.
import { api } from './api.js';
import { $, badge, emptyState, h, rerender } from './dom.js';
import { fmtClock, osdName } from './format.js';
import { DeployPhase } from './kinds.js';
import { showPanelError } from './notices.js';
import { register } from './refresh.js';

const deployments = { rows: [] };

register('deployments', 'deployments', loadDeployments, 1000);

async function loadDeployments() {
  try {
    const { data } = await api('GET', '/api/v1/deployments?history=10');
    showPanelError('deployments-error', null);
    deployments.rows = data.slice().sort((a, b) => b.deployment_id - a.deployment_id);
    rerender($('deployments-table'), renderDeployments);
  } catch (e) {
    showPanelError('deployments-error', new Error(`Could not load deployments: ${e.message}`));
  }
}

/** The badge style of a deployment's state. */
function stateKind(state) {
  if (state === DeployPhase.DONE) return 'ok';
  if (state === DeployPhase.FAILED || state === DeployPhase.GAVE_UP) return 'bad';
  return 'info';
}

/** How far one OSD got. */
function osdStep(o) {
  if (o.verified) return 'up and in';
  if (o.started) return 'started';
  if (o.activated) return 'activated';
  return 'prepared';
}

function renderDeployments() {
  const box = $('deployments-table');
  if (!deployments.rows.length) {
    box.replaceChildren(emptyState('No deployments yet: applied specs make OSDs here when their disks are free.'));
    return;
  }
  const table = h('table', { class: 'data deployments' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Host'), h('th', { scope: 'col' }, 'Spec'), h('th', { scope: 'col' }, 'State'),
      h('th', { scope: 'col' }, 'Disks'), h('th', { scope: 'col' }, 'OSDs'), h('th', { scope: 'col' }, 'Started'),
      h('th', { scope: 'col' }, 'Waiting on'))),
    h('tbody', {}, deployments.rows.map(deploymentRow)));
  box.replaceChildren(table);
}

function deploymentRow(d) {
  const notes = [];
  if (d.waiting_on) notes.push(h('div', {}, d.waiting_on));
  if (d.failure) notes.push(h('div', { class: 'error-text' }, h('strong', {}, 'Failed: '), d.failure));
  if (d.retry_at && d.state === DeployPhase.FAILED) notes.push(h('div', { class: 'muted small' }, `next attempt at ${fmtClock(d.retry_at)}`));
  const attempt = d.attempt > 1 ? ` (attempt ${d.attempt})` : '';
  return h('tr', { 'data-testid': 'deployment', 'data-state': d.state, 'data-host': d.host },
    h('td', { class: 'nowrap' }, d.host),
    h('td', {}, d.service_name),
    h('td', {}, badge(`${d.state}${attempt}`, stateKind(d.state))),
    h('td', { class: 'mono small' }, d.disks.join(', ')),
    h('td', {}, d.osds.length ? d.osds.map((o) => h('div', {}, `${osdName(o.id)} on ${o.device}: ${osdStep(o)}`)) : '–'),
    h('td', { class: 'small' }, fmtClock(d.created_at)),
    h('td', { class: 'small' }, notes));
}
