// What the page makes of a removal's phase; shared by the removals table,
// its chart and the OSD picker's Removal column.
import { Phase } from './kinds.js';

export const TERMINAL = new Set([Phase.DONE, Phase.CANCELLED]);
/** Until the daemon is stopped, a removal can still be undone; in place,
 * stopping one that waits for its new disk lifts noout. */
export const STOPPABLE = new Set([Phase.QUEUED, Phase.DRAINING, Phase.WAITING_SAFE, Phase.REJOINING]);

/** The badge style for a phase. */
export function stateKind(state) {
  if (state === Phase.DONE) return 'ok';
  if (state === Phase.CANCELLED || state === Phase.RESTORING) return 'neutral';
  if (state === Phase.QUEUED) return 'info';
  return 'active';
}
