// A spec's dry-run as the page shows it, for a stored spec and for the
// editor's text alike: OSDs to create per host, then per host what was
// skipped and why; or the validation errors that stopped it.
import { h } from './dom.js';
import { fmtDuration, joinAnd, plural } from './format.js';

export function renderPreview(result) {
  const out = h('div', { class: 'preview', 'data-testid': 'preview' });
  if (result.errors && result.errors.length) out.append(renderSpecErrors(result.errors));
  const confirm = new Set(result.empty_placements || []);
  for (const n of result.notes || []) {
    const text = `${n.service_id || '<unnamed>'}: ${n.note}`;
    out.append(h('p', { class: n.note.startsWith('NO HOST MATCHES') ? 'callout warn' : 'callout' }, text));
  }
  if (confirm.size) {
    out.append(h('p', { class: 'callout warn', 'data-testid': 'empty-placement' },
      'Applying stores a spec that selects no host now: the apply asks you to confirm it.'));
  }
  if (result.hosts_without_inventory && result.hosts_without_inventory.length) {
    out.append(h('p', { class: 'callout warn' }, `No inventory yet for ${joinAnd(result.hosts_without_inventory)}: their disks are not in this preview.`));
  }
  for (const f of result.refresh_failures || []) out.append(h('p', { class: 'callout warn' }, `Refresh failed: ${typeof f === 'string' ? f : JSON.stringify(f)}`));
  const rows = result.preview || [];
  const planned = rows.reduce((n, r) => n + osdsOf(r).length, 0);
  const hostsWith = rows.filter((r) => osdsOf(r).length).length;
  out.append(h('p', { class: 'preview-summary', 'data-testid': 'preview-summary' },
    planned ? `${plural(planned, 'OSD')} to create on ${plural(hostsWith, 'host')}.` : 'No OSDs to create: no free disk matches.'));
  if (rows.length) out.append(previewTable(rows));
  for (const r of rows) out.append(previewHostDetails(r));
  return out;
}

/** A failed dry-run or apply: the validation table when there is one, else the message. */
export function renderSpecFailure(err) {
  if (err.body && Array.isArray(err.body.errors) && err.body.errors.length) return renderSpecErrors(err.body.errors);
  return h('p', { class: 'error-text', role: 'alert', 'data-testid': 'spec-failure' }, err.message);
}

// The planned OSDs of a row; none when ceph-volume would refuse ({error}).
function osdsOf(r) {
  return Array.isArray(r.planned_osds) ? r.planned_osds : [];
}

function previewTable(rows) {
  const body = h('tbody', {});
  for (const r of rows) {
    const osdsPlanned = osdsOf(r).length ? osdsOf(r) : [null];
    const refused = Array.isArray(r.planned_osds) ? null : r.planned_osds.error;
    for (const p of osdsPlanned) {
      body.append(h('tr', { 'data-testid': 'preview-row', 'data-host': r.host, 'data-path': p ? p.data : '' },
        h('td', { class: 'mono' }, r.service_name || `osd.${r.service_id}`),
        h('td', {}, r.host),
        h('td', { class: 'mono' }, p ? p.data : h('span', { class: refused ? 'error-text' : 'muted' }, refused || 'nothing to create')),
        h('td', { class: 'mono' }, (p && p.db) || '—'),
        h('td', { class: 'mono' }, (p && p.wal) || '—'),
        h('td', { class: 'num muted small' }, r.inventory_age_s === null || r.inventory_age_s === undefined ? '—' : fmtDuration(r.inventory_age_s))));
    }
  }
  return h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
    h('caption', { class: 'sr-only' }, 'OSDs the spec would create'),
    h('thead', {}, h('tr', {}, ['Service', 'Host', 'Data', 'DB', 'WAL', 'Inventory age'].map((t, i) => h('th', { scope: 'col', class: i === 5 ? 'num' : '' }, t)))),
    body));
}

function previewHostDetails(r) {
  const warnings = r.warnings || [];
  // Devices a role took that ceph-volume would not use read like the skipped ones.
  const skipped = (r.skipped || []).concat(r.unused || []);
  const commands = r.commands || [];
  if (!warnings.length && !skipped.length && !commands.length) return '';
  const el = h('div', { class: 'preview-host', 'data-testid': 'preview-host', 'data-host': r.host });
  for (const w of warnings) el.append(h('p', { class: 'callout warn small' }, h('strong', {}, `${r.host}: `), w));
  const details = h('details', {}, h('summary', {},
    h('strong', {}, r.host), ` — ${plural(skipped.length, 'disk')} not chosen${commands.length ? `, ${plural(commands.length, 'command')}` : ''}`));
  if (skipped.length) {
    details.append(h('ul', { class: 'small' }, skipped.map((s) => h('li', {}, h('span', { class: 'mono' }, s.path), ': ', s.reasons.join('; ')))));
  }
  if (commands.length) details.append(h('pre', { class: 'code small' }, commands.map((c) => `ceph-volume ${c}`).join('\n')));
  el.append(details);
  return el;
}

function renderSpecErrors(errors) {
  return h('div', { class: 'spec-errors', role: 'alert', 'data-testid': 'spec-errors' },
    h('p', { class: 'error-text' }, h('strong', {}, `${plural(errors.length, 'invalid document')}; nothing was applied.`)),
    h('div', { class: 'table-wrap' }, h('table', { class: 'data compact' },
      h('thead', {}, h('tr', {}, ['Document', 'Line', 'Service', 'Field', 'Value', 'Problem'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, errors.map((e) => h('tr', { 'data-testid': 'spec-error', 'data-field': e.field || '' },
        h('td', { class: 'num' }, e.doc === undefined || e.doc === null ? '—' : String(e.doc)),
        h('td', { class: 'num' }, e.line === undefined || e.line === null ? '—' : String(e.line)),
        h('td', { class: 'mono' }, e.service_id || '—'),
        h('td', { class: 'mono' }, e.field || '—'),
        h('td', { class: 'mono' }, e.value === undefined || e.value === null ? '—' : String(e.value)),
        h('td', {}, e.error)))))));
}
