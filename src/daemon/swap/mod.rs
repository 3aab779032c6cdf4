//! Swaps (issue 23, docs/design/swap.md): `schedule` checks a request in
//! full and stores it (or previews it, changing nothing), `worker` drives
//! each swap on the operation kernel through `domain::swap::advance`,
//! `observe` gathers what a phase needs to see, `effects` carries out the
//! one effect a step asks for, `queries` answers for swaps. The new OSDs
//! are made by a deployment on the deployment kind, the old ones retired
//! by removals on the removal kind: a swap only orders them.

mod effects;
mod observe;
mod queries;
mod schedule;
mod worker;

pub use schedule::SwapRequest;

use std::sync::Arc;

use super::cluster::Cluster;
use super::events::Events;
use super::inventory::Inventory;
use super::operations::Backoff;
use super::removal::Removals;
use super::Worker;
use crate::ceph::CephCluster;
use crate::store::Store;

pub struct Swaps {
    store: Store,
    ceph: Arc<dyn CephCluster>,
    /// The release the new OSDs' commands are written for.
    cluster: Arc<Cluster>,
    events: Arc<Events>,
    inventory: Arc<Inventory>,
    /// Retires the old OSDs: once they hold nothing (free bay), in place
    /// before the new disk goes in.
    removals: Arc<Removals>,
    /// Woken by a new swap or a stop request.
    worker: Arc<Worker>,
    /// Woken when a swap stores the deployment of its new disks.
    deployer: Arc<Worker>,
    /// How long an operation whose effects keep failing waits.
    backoff: Backoff,
}

impl Swaps {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        ceph: Arc<dyn CephCluster>,
        cluster: Arc<Cluster>,
        events: Arc<Events>,
        inventory: Arc<Inventory>,
        removals: Arc<Removals>,
        worker: Arc<Worker>,
        deployer: Arc<Worker>,
        backoff: Backoff,
    ) -> Swaps {
        Swaps { store, ceph, cluster, events, inventory, removals, worker, deployer, backoff }
    }
}

/// The subject of the deployment that makes a swap's new disks.
fn deployment_subject(host: &str, number: i64) -> String {
    crate::domain::deploy::subject(host, &deployment_service(number))
}

fn deployment_service(number: i64) -> String {
    format!("osd.swap-{number}")
}
