//! OSD removal: scheduling (`osd rm`) and stopping (`osd rm stop`) in
//! `schedule`, the preview `osd rm` checks first (and `--dry-run` shows)
//! in `preview`, the removal kind that drives every removal on the
//! operation kernel through `domain::removal::advance` in `worker`, the
//! recovery boost of fast drains in `boost`, and the events it records in
//! `events`; `host_drain` removes every OSD of a host. The decisions themselves (gates, pacing, which
//! devices, when a disk counts as wiped) are in `domain::removal`.

mod boost;
mod device_replace;
mod events;
mod host_drain;
mod host_effects;
mod preview;
mod schedule;
mod worker;

pub use schedule::RemoveRequest;

use std::sync::Arc;

use super::cluster::Cluster;
use super::events::Events;
use super::inventory::Inventory;
use super::operations::Backoff;
use super::read_model::ReadModel;
use super::Worker;
use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::store::Store;

pub struct Removals {
    store: Store,
    ceph: Arc<dyn CephCluster>,
    agents: Arc<dyn HostAgents>,
    events: Arc<Events>,
    cluster: Arc<Cluster>,
    inventory: Arc<Inventory>,
    read_model: Arc<ReadModel>,
    /// Woken by a new removal or a stop request.
    worker: Arc<Worker>,
    limits: Limits,
    /// One `device replace` (or its `--clear`) at a time: each reads the
    /// holds, writes its own, and may put back what it replaced.
    replacing: tokio::sync::Mutex<()>,
}

/// How far removals go at once, and how long a failing one waits.
struct Limits {
    /// At most this many drains at once (`removal.max_draining`).
    max_draining: usize,
    /// How long an operation whose effects keep failing waits.
    backoff: Backoff,
}

impl Removals {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        ceph: Arc<dyn CephCluster>,
        agents: Arc<dyn HostAgents>,
        events: Arc<Events>,
        cluster: Arc<Cluster>,
        inventory: Arc<Inventory>,
        read_model: Arc<ReadModel>,
        worker: Arc<Worker>,
        max_draining: usize,
        backoff: Backoff,
    ) -> Removals {
        Removals {
            store,
            ceph,
            agents,
            events,
            cluster,
            inventory,
            read_model,
            worker,
            limits: Limits { max_draining, backoff },
            replacing: tokio::sync::Mutex::new(()),
        }
    }
}
