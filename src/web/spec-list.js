// The stored specs: the list, and the one selected with its source, its
// history and a fresh dry-run of it against the current inventories.
import { api } from './api.js';
import { serverNow } from './clock.js';
import { $, badge, emptyState, h, rerender } from './dom.js';
import { fmtClock, plural } from './format.js';
import { confirmAction, notify, runAction, showPanelError } from './notices.js';
import { register, signature } from './refresh.js';
import { Role } from './kinds.js';
import { may } from './role.js';
import { renderPreview, renderSpecFailure } from './spec-preview.js';

// `seq` numbers selections: a slow answer for an earlier one is dropped.
const specs = { list: [], sig: '', selected: null, selectedVersion: null, seq: 0 };

const refresher = register('specs', 'specs', loadSpecs, 1000);

async function loadSpecs() {
  try {
    const { data } = await api('GET', '/api/v1/specs');
    showPanelError('specs-error', null);
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

/** Once a spec was applied: the list with it, and it selected. */
export async function showStoredSpec(name) {
  await refresher.now();
  if (name) selectSpec(name);
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
          h('button', { type: 'button', class: 'btn small needs-operate', onclick: () => editSpecCopy(detail.source) }, 'Edit in the editor'),
          h('button', { type: 'button', class: 'btn small danger-outline needs-operate', 'data-testid': 'spec-delete',
            onclick: (e) => deleteSpec(e.currentTarget, detail.service_name) }, 'Delete…'))),
      h('details', {}, h('summary', {}, `Source (version ${detail.version})`), h('pre', { class: 'code' }, detail.source)),
      h('details', {}, h('summary', {}, `History (${plural(detail.history.length, 'change')})`),
        h('ul', { class: 'small' }, detail.history.map(([version, action, at]) => h('li', {}, `version ${version}: ${action} at ${fmtClock(at)}`)))),
      h('div', { class: 'dry-run-head' }, h('h5', {}, 'Dry-run now'),
        h('button', { type: 'button', class: 'btn small needs-operate', onclick: () => dryRunStored(seq, detail.source, previewBox) }, 'Run again')),
      previewBox);
    await dryRunStored(seq, detail.source, previewBox);
  } catch (e) {
    if (seq !== specs.seq) return;
    box.replaceChildren(h('p', { class: 'error-text', role: 'alert' }, `Could not load ${name}: ${e.message}`));
  }
}

/** The stored spec's dry-run against the current inventories (nothing is stored). */
async function dryRunStored(seq, source, box) {
  if (!may(Role.OPERATE)) {
    // A dry-run is asked on the apply route, which needs operate.
    box.replaceChildren(h('p', { class: 'muted' }, 'A dry-run needs a token with the operate role.'));
    return;
  }
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

/**
 * Puts a copy in the editor. The editor reacts to its input event as when
 * the text is typed (Apply needs a new dry-run), so this module needs
 * nothing from spec-editor.js, which imports this one.
 */
function editSpecCopy(source) {
  const editor = $('spec-editor');
  editor.value = source;
  editor.dispatchEvent(new Event('input'));
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
    await refresher.now();
  });
}
