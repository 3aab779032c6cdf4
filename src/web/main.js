// osdkeeper dashboard: the page's entry point (index.html loads only this).
//
// One page over the daemon's JSON API: removals with progress and a chart,
// OSDs being deployed from specs, the OSD list to schedule removals from, the event log, hosts and their
// devices, cluster benchmarks charted and compared, and specs with their
// dry-run, each panel in its own module. It
// stays live through /api/v1/stream and refetches only what a stream
// message names, throttled per panel (refresh.js). Every fetch is bounded
// at 2000 hosts: the header comes from /api/v1/summary, hosts and OSDs are
// paged and searched on the server, a chart fetches only new samples.
//
// Modules share nothing through `window`: each imports what it uses, and
// panels refresh one another through refresh.js's registry.
import { initBenchmarks } from './benchmarks.js';
import { tickAges } from './clock.js';
import { addEvents, initEvents } from './events.js';
import { initHealth } from './health.js';
import { hostsPolled, initHosts } from './hosts.js';
import { EventKind, StreamMessage } from './kinds.js';
import { namedInMessage, startLive } from './live.js';
import { initOsds, refreshOsdPicker } from './osds.js';
import { refreshAll, refreshers } from './refresh.js';
import './deployments.js';
import './swaps.js';
import './removals.js';
import { initSpecEditor } from './spec-editor.js';
import { initSummary } from './summary.js';
import { refreshRole } from './role.js';
import { initTokenForm, onTokenEntered } from './token.js';

/** What each stream message makes the page refetch (`hello` is handled by live.js). */
function onStreamMessage(type, data) {
  switch (type) {
    case StreamMessage.EVENT: {
      let ev;
      try {
        ev = JSON.parse(data);
      } catch {
        return;
      }
      addEvents([ev]);
      onEventKind(ev);
      break;
    }
    case StreamMessage.REMOVALS:
      refreshers.removals.request();
      refreshers.summary.request();
      refreshOsdPicker(namedInMessage(data, 'osds'));
      break;
    case StreamMessage.HOSTS:
      hostsPolled(namedInMessage(data, 'hosts'));
      refreshers.summary.request();
      break;
    case StreamMessage.SPECS:
      refreshers.specs.request();
      refreshers.summary.request();
      break;
    case StreamMessage.DEPLOYMENTS:
      refreshers.deployments.request();
      refreshOsdPicker(null);
      break;
    case StreamMessage.RESYNC:
      refreshAll();
      break;
    default:
      break;
  }
}

/**
 * Hosts added or removed are announced by their event, not by a `hosts`
 * message; so are benchmarks asked for and ended (a per-OSD bench's rate
 * and outlier verdict show in the OSD list).
 */
function onEventKind(ev) {
  if (ev.kind === EventKind.HOST_ADDED || ev.kind === EventKind.HOST_REMOVED) {
    refreshers.summary.request();
    refreshers.hosts.request();
  }
  if (ev.kind === EventKind.BENCH_REQUESTED || ev.kind === EventKind.BENCH_FINISHED || ev.kind === EventKind.BENCH_FAILED) {
    refreshers.benchmarks.request();
  }
  if (ev.kind === EventKind.BENCH_FINISHED || ev.kind === EventKind.BENCH_OUTLIER) refreshOsdPicker(null);
  if ([EventKind.SWAP_SCHEDULED, EventKind.SWAP_PHASE, EventKind.SWAP_STOP, EventKind.SWAP_ACTION_FAILED,
    EventKind.SWAP_ENDED].includes(ev.kind)) {
    refreshers.swaps.request();
  }
}

initSpecEditor();
initEvents();
initSummary();
initHealth();
initHosts();
initOsds();
initBenchmarks();
initTokenForm();
onTokenEntered(refreshRole);
refreshRole();
refreshAll();
startLive(onStreamMessage);
setInterval(tickAges, 1000);
