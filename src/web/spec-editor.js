// The spec editor. Apply is offered for exactly the text that was last
// previewed by a dry-run without errors: any edit takes it away again.
import { api } from './api.js';
import { $, h } from './dom.js';
import { joinAnd } from './format.js';
import { confirmAction, notify, runAction } from './notices.js';
import { showStoredSpec } from './spec-list.js';
import { renderPreview, renderSpecFailure } from './spec-preview.js';

// The field report's spec, so a first look shows what a spec does.
const PREFILLED_SPEC = `service_type: osd
service_id: osd_spec_F5-422_SSDs
placement:
  host_pattern: 'f5-422-*'
encrypted: true
data_devices:
  rotational: 0
`;

const editor = { previewedText: null, lastPreview: null };

export function initSpecEditor() {
  $('spec-editor').value = PREFILLED_SPEC;
  $('spec-editor').addEventListener('input', onEditorInput);
  $('spec-dry-run').addEventListener('click', dryRunEditor);
  $('spec-apply').addEventListener('click', applyEditor);
}

function onEditorInput() {
  const text = $('spec-editor').value;
  const applicable = editor.previewedText !== null && text === editor.previewedText;
  $('spec-apply').disabled = !applicable;
  const result = $('spec-editor-result');
  const stale = result.querySelector('[data-testid=preview]') && !applicable;
  result.classList.toggle('stale', Boolean(stale));
  let hint = result.querySelector('.stale-hint');
  if (stale && !hint) {
    hint = h('p', { class: 'callout warn small stale-hint' }, 'The text changed since this dry-run: run it again before applying.');
    result.prepend(hint);
  } else if (!stale && hint) {
    hint.remove();
  }
}

async function dryRunEditor() {
  const text = $('spec-editor').value;
  const result = $('spec-editor-result');
  editor.previewedText = null;
  $('spec-apply').disabled = true;
  result.classList.remove('stale');
  result.replaceChildren(h('p', { class: 'muted' }, 'Running the dry-run…'));
  await runAction($('spec-dry-run'), 'Dry run', async () => {
    try {
      const { data } = await api('POST', '/api/v1/specs?dry_run=true', { yaml: text });
      editor.lastPreview = data;
      result.replaceChildren(renderPreview(data));
      if (!(data.errors && data.errors.length)) editor.previewedText = text;
    } catch (e) {
      result.replaceChildren(renderSpecFailure(e));
    }
  });
  onEditorInput();
}

async function applyEditor() {
  const text = editor.previewedText;
  if (text === null || text !== $('spec-editor').value) return;
  const rows = (editor.lastPreview && editor.lastPreview.preview) || [];
  const names = [...new Set(rows.map((r) => r.service_name))];
  const planned = rows.filter((r) => r.planned_osds.length);
  const body = [
    names.length ? `The daemon stores ${joinAnd(names)} and keeps creating OSDs on the disks it matches.` : 'The daemon stores this spec; it matches no host right now.',
  ];
  const empty = (editor.lastPreview && editor.lastPreview.empty_placements) || [];
  for (const why of empty) body.push(h('p', { class: 'callout warn' }, why));
  if (planned.length) {
    body.push(h('ul', { class: 'plan' }, planned.map((r) => h('li', {}, h('strong', {}, r.host), `: new OSDs on ${joinAnd(r.planned_osds.map((p) => p.data))}`))));
  } else {
    body.push('No OSD is created now: no free disk matches.');
  }
  const ok = await confirmAction({ title: 'Apply this spec?', body, ok: 'Apply the spec', danger: true });
  if (!ok) return;
  await runAction($('spec-apply'), 'Applying the spec', async () => {
    try {
      const confirmed = empty.length ? '&allow_empty_placement=true' : '';
      const { data } = await api('POST', `/api/v1/specs?dry_run=false${confirmed}`, { yaml: text });
      const stored = data.stored || [];
      notify(`Stored ${joinAnd(stored.map((s) => `${s.service_name} (version ${s.version})`)) || 'the spec'}`, 'ok');
      $('spec-editor-result').replaceChildren(h('p', { class: 'callout ok', 'data-testid': 'spec-applied' },
        `Applied: ${joinAnd(stored.map((s) => s.service_name))}. The reconciler creates its OSDs; watch the event log.`));
      editor.previewedText = null;
      await showStoredSpec(stored.length ? stored[0].service_name : null);
    } catch (e) {
      $('spec-editor-result').replaceChildren(renderSpecFailure(e));
      throw e;
    }
  });
  onEditorInput();
}
