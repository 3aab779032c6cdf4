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
    /// A removal changed (state, PGs, ...).
    Removals,
    /// A host's inventory or reachability changed.
    Hosts,
    /// Specs were applied or removed.
    Specs,
}

pub type LiveSender = tokio::sync::broadcast::Sender<Live>;

pub fn channel() -> LiveSender {
    tokio::sync::broadcast::channel(256).0
}
