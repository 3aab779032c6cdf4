// Held devices: disks a zap wiped, which specs skip until released. Listed
// in a callout over the hosts table; released from there or from a row.
import { api } from './api.js';
import { $, h, rerender } from './dom.js';
import { fmtClock, plural } from './format.js';
import { confirmAction, notify, runAction, showPanelError } from './notices.js';
import { refreshers, register, signature } from './refresh.js';

const held = { rows: [], sig: '' };
const SHOWN_MAX = 20;

register('held', 'held devices', loadHeld, 2000);

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
  const shown = held.rows.slice(0, SHOWN_MAX);
  box.replaceChildren(
    h('strong', {}, `${plural(held.rows.length, 'held device')}`),
    h('span', { class: 'muted' }, ' — specs skip these until you release them.'),
    h('ul', { class: 'held-list' }, shown.map((hd) => h('li', { 'data-testid': 'held-device', 'data-host': hd.host, 'data-path': hd.path },
      h('span', { class: 'mono' }, `${hd.host}:${hd.path}`), ' — ', hd.reason, h('span', { class: 'muted small' }, ` (since ${fmtClock(hd.since)})`), ' ',
      h('button', { type: 'button', class: 'btn small needs-admin', onclick: (e) => releaseDevice(e.currentTarget, hd.host, hd.path, hd.reason) }, 'Release…')))),
    held.rows.length > shown.length ? h('p', { class: 'muted small' }, `and ${held.rows.length - shown.length} more (search the hosts to see them)`) : '');
}

export async function releaseDevice(button, host, path, reason) {
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
