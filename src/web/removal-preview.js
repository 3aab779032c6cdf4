// The removal dialog's preview: what removing the chosen OSDs together
// would do, from POST /api/v1/osds/removals/preview (the same as
// `osd rm --dry-run`). The daemon refuses a removal with blockers unless
// told to ignore them, so the dialog offers that only when there are some.
import { api } from './api.js';
import { h } from './dom.js';
import { fmtBytes, fmtDuration, joinAnd, osdName } from './format.js';

const pct = (f) => (f === null || f === undefined ? '—' : `${(f * 100).toFixed(1)}%`);

/** { nodes, blockers, ignore }: what to show, and the checkbox to ignore the blockers (null without any). */
export async function removalPreview(ids) {
  let p;
  try {
    ({ data: p } = await api('POST', '/api/v1/osds/removals/preview', { json: { ids } }));
  } catch (e) {
    const ignore = h('input', { type: 'checkbox', 'data-testid': 'rm-ignore-blockers' });
    const nodes = [
      h('p', { class: 'callout warn small', 'data-testid': 'removal-preview' }, `No preview: ${e.message}. The daemon removes only with the check skipped.`),
      h('label', {}, ignore, ' Remove without the preview\'s check (recorded with the removal)'),
    ];
    return { nodes, blockers: [String(e.message)], ignore };
  }
  const eta = p.eta_s === null ? `unknown (${p.eta_basis})` : `${fmtDuration(p.eta_s)} (${p.eta_basis})`;
  const summary = h('p', { 'data-testid': 'removal-preview' },
    `Moves ${p.pgs_to_move} PGs (${fmtBytes(p.bytes_to_move)}) onto ${joinAnd(p.receivers.map((r) => osdName(r.osd))) || 'no other OSD'}; ETA ${eta}; ok-to-stop now: ${p.ok_to_stop ? 'yes' : `no (${p.ok_to_stop_message})`}.`);
  const nodes = [summary];
  const fullest = [...p.receivers].sort((a, b) => (b.fullness_after ?? 0) - (a.fullness_after ?? 0))[0];
  if (fullest) {
    nodes.push(h('p', {}, `Fullest receiver afterwards: ${osdName(fullest.osd)} ${pct(fullest.fullness_before)} → ${pct(fullest.fullness_after)} (backfillfull at ${pct(p.backfillfull_ratio)}).`));
  }
  for (const w of p.warnings) nodes.push(h('p', { class: 'callout warn small' }, w));
  if (!p.blockers.length) return { nodes, blockers: [], ignore: null };
  nodes.push(h('ul', { class: 'plan callout warn', 'data-testid': 'removal-blockers' }, p.blockers.map((b) => h('li', {}, b))));
  const ignore = h('input', { type: 'checkbox', 'data-testid': 'rm-ignore-blockers' });
  nodes.push(h('label', {}, ignore, ' Remove anyway, ignoring these blockers (recorded with the removal)'));
  return { nodes, blockers: p.blockers, ignore };
}
