// What the token in use may do. /api/v1/whoami names its role; the page
// then hides the controls the role cannot use (`needs-operate` and
// `needs-admin` elements, through body[data-role] in app.css, and `may()`
// for what a panel does on its own). The daemon refuses them anyway (403):
// this only spares the operator buttons that cannot work. Until the answer
// comes everything is shown, as before tokens had roles.
import { api } from './api.js';
import { $ } from './dom.js';
import { Role } from './kinds.js';

const ORDER = [Role.READ, Role.OPERATE, Role.ADMIN];
const me = { role: null };

/** Whether the token's role includes `role` (true while it is not known yet). */
export function may(role) {
  return me.role === null || ORDER.indexOf(me.role) >= ORDER.indexOf(role);
}

/** Asks the daemon who the token is and shows or hides the controls to match. */
export async function refreshRole() {
  let who;
  try {
    ({ data: who } = await api('GET', '/api/v1/whoami'));
  } catch {
    // Controls stay as they are; the daemon still refuses what the role cannot do.
    return;
  }
  me.role = who.role;
  document.body.dataset.role = who.role;
  const badge = $('whoami');
  badge.textContent = who.open ? 'no token (loopback)' : `${who.name} · ${who.role}`;
  badge.title = who.open
    ? 'This daemon has no tokens: it listens on loopback only and anyone there may do anything.'
    : `Signed in with the token ${who.name}, role ${who.role}.`;
  badge.hidden = false;
}
