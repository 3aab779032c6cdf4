//! Live updates for the dashboard: the daemon announces what changed and
//! the SSE stream (`/api/v1/stream`) forwards it. Lossy by design: a slow
//! client skips updates and refetches, it never slows the daemon. Polled
//! hosts are named together, in one message per quarter second at most
//! (`Inventory::announce_polled_hosts`), not one message per host.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde::Serialize;

use crate::wire::api::events::Event;

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Live {
    /// A new event in the log.
    Event { event: Event },
    /// Removals changed (state, PGs, ...): those of these OSDs, where the
    /// sender knows them (empty: any removal may have changed).
    Removals { osds: Vec<u32> },
    /// These hosts were polled: their inventory was read again (its age
    /// changed, maybe its devices) or their reachability or last error changed.
    Hosts { hosts: Vec<String> },
    /// Specs were applied or removed.
    Specs,
    /// Deployments changed (a step, a new one, one finished).
    Deployments,
}

pub type LiveSender = tokio::sync::broadcast::Sender<Live>;

pub fn channel() -> LiveSender {
    tokio::sync::broadcast::channel(256).0
}

/// Names of hosts polled since the last `Hosts` message. At thousands of
/// hosts one message per poll would fill the channel within a second and
/// make every client resync; one message per tick naming them all does not.
#[derive(Default)]
pub struct PolledHosts(Mutex<BTreeSet<String>>);

impl PolledHosts {
    pub fn note(&self, host: &str) {
        self.0.lock().expect("polled hosts lock").insert(host.to_string());
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().expect("polled hosts lock")).into_iter().collect()
    }
}
