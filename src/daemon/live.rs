//! Live updates for the dashboard: the daemon announces what changed and
//! the SSE stream (`/api/v1/stream`) forwards it. Lossy by design: a slow
//! client skips updates and refetches, it never slows the daemon.

use serde::Serialize;

use crate::store::Event;

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
}

pub type LiveSender = tokio::sync::broadcast::Sender<Live>;

pub fn channel() -> LiveSender {
    tokio::sync::broadcast::channel(256).0
}
