// The cluster health strip under the header: what `ceph -s` says (health
// and its checks in Ceph's words, PG states, degraded and misplaced
// objects, recovery and client throughput), so the page replaces it. The
// daemon shares one `ceph status` among all dashboards for a few seconds.
import { api } from './api.js';
import { $, badge, h } from './dom.js';
import { fmtBytes, fmtClock } from './format.js';
import { refreshers, register } from './refresh.js';

const HEALTH_REFRESH_MS = 5000;
const HEALTH_KIND = { HEALTH_OK: 'ok', HEALTH_WARN: 'warn', HEALTH_ERR: 'bad' };
// PG states shown by name before the rest are summed up as "N more states".
const PG_STATES_SHOWN = 4;

const health = { data: null, error: null };

register('health', 'health', loadHealth, HEALTH_REFRESH_MS);

export function initHealth() {
  setInterval(() => refreshers.health.request(), HEALTH_REFRESH_MS);
}

async function loadHealth() {
  try {
    const { data } = await api('GET', '/api/v1/cluster/status');
    health.data = data;
    health.error = null;
  } catch (e) {
    health.error = e.message;
  }
  renderHealth();
}

function rate(bytes) {
  return `${fmtBytes(bytes)}/s`;
}

function item(label, testid, ...content) {
  return h('div', { class: 'health-item', 'data-testid': testid }, h('span', { class: 'health-label' }, label), ...content);
}

function renderHealth() {
  const strip = $('health-strip');
  const d = health.data;
  if (health.error || !d || !d.health) {
    const why = health.error || (d && d.error) || 'not read yet';
    strip.dataset.health = 'unknown';
    strip.replaceChildren(item('Cluster', 'health-status', badge('unknown', 'neutral'), h('span', { class: 'error-text small' }, why)));
    return;
  }
  strip.dataset.health = d.health;
  const parts = [item('Cluster', 'health-status', badge(d.health, HEALTH_KIND[d.health] || 'neutral', { 'data-testid': 'health-badge' }))];
  // The releases the cluster's daemons run (`ceph versions`): two or more while it is upgraded.
  if (d.releases && d.releases.length) {
    parts.push(item('Ceph', 'health-releases', h('span', {}, d.releases.map((r) => `${r.version} ${r.release}`).join(' · '))));
  }
  if (d.checks.length) {
    parts.push(h('ul', { class: 'health-checks', 'data-testid': 'health-checks', 'aria-label': 'Health checks' },
      d.checks.map((c) => h('li', { class: c.severity === 'HEALTH_ERR' ? 'bad' : 'warn', 'data-code': c.code, title: c.code },
        h('span', { class: 'mono small' }, c.code), ' ', c.message, c.muted ? badge('muted', 'neutral small') : ''))));
  }
  // The daemon's own warnings (`OSDKEEPER_CEPH_VOLUME_RELEASE`), in the shape of Ceph's checks, each line of detail as a tooltip.
  if (d.warnings && d.warnings.length) {
    parts.push(h('ul', { class: 'health-checks', 'data-testid': 'daemon-warnings', 'aria-label': 'osdkeeper warnings' },
      d.warnings.map((w) => h('li', { class: 'warn', 'data-code': w.code, title: w.detail.join('\n') },
        h('span', { class: 'mono small' }, w.code), ' ', w.message))));
  }
  const shown = d.pg_states.slice(0, PG_STATES_SHOWN);
  const rest = d.pg_states.slice(PG_STATES_SHOWN);
  const restCount = rest.reduce((n, s) => n + s.count, 0);
  parts.push(item(`${d.pgs} PGs`, 'health-pgs',
    h('span', { class: 'pg-states' }, shown.map((s) => h('span', { class: `pg-state${s.state === 'active+clean' ? ' clean' : ''}` },
      h('strong', {}, String(s.count)), ' ', s.state)),
    rest.length ? h('span', { class: 'pg-state', title: rest.map((s) => `${s.count} ${s.state}`).join(', ') }, `${restCount} in ${rest.length} more states`) : '')));
  if (d.object_lines.length) {
    parts.push(item('Objects', 'health-objects', h('span', {}, d.object_lines.join(' · '))));
  }
  if (d.recovery_bytes_per_sec !== null) {
    const objs = d.recovery_objects_per_sec !== null ? `, ${Math.round(d.recovery_objects_per_sec)} objects/s` : '';
    parts.push(item('Recovery', 'health-recovery', h('span', { class: 'mono' }, `${rate(d.recovery_bytes_per_sec)}${objs}`)));
  }
  const client = [];
  if (d.client_read_bytes_per_sec !== null) client.push(`${rate(d.client_read_bytes_per_sec)} rd`);
  if (d.client_write_bytes_per_sec !== null) client.push(`${rate(d.client_write_bytes_per_sec)} wr`);
  if (client.length) parts.push(item('Client', 'health-client', h('span', { class: 'mono' }, client.join(', '))));
  parts.push(h('span', { class: 'health-age muted small' }, `as of ${fmtClock(d.read_at)}`));
  strip.replaceChildren(...parts);
}
