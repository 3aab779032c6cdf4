//! OSD deployment: the reconciler (in `specs/`) starts a deployment for
//! each (spec, host, set of disks) its plan creates OSDs on; the
//! deployment kind here drives each on the operation kernel through
//! `domain::deploy::advance` (prepare, activate, start, verify), `events`
//! records what happens in cephadm's words, `queries` shows them.

mod events;
mod queries;
mod worker;

pub use queries::{deploy_failures, deployment_status, making_pace};

use std::sync::Arc;

use super::events::Events;
use super::inventory::Inventory;
use super::operations::Backoff;
use super::read_model::ReadModel;
use super::swap::Swaps;
use super::Worker;
use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::store::Store;

pub struct Deployments {
    store: Store,
    ceph: Arc<dyn CephCluster>,
    agents: Arc<dyn HostAgents>,
    events: Arc<Events>,
    inventory: Arc<Inventory>,
    read_model: Arc<ReadModel>,
    /// A deployment's end makes the reconciler look again.
    reconciler: Arc<Worker>,
    /// How long an operation whose effects keep failing waits.
    backoff: Backoff,
    /// Swaps, which order deployments of their new disks (`daemon/swap/`).
    swaps: Arc<Swaps>,
}

impl Deployments {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        ceph: Arc<dyn CephCluster>,
        agents: Arc<dyn HostAgents>,
        events: Arc<Events>,
        inventory: Arc<Inventory>,
        read_model: Arc<ReadModel>,
        reconciler: Arc<Worker>,
        backoff: Backoff,
        swaps: Arc<Swaps>,
    ) -> Deployments {
        Deployments { store, ceph, agents, events, inventory, read_model, reconciler, backoff, swaps }
    }

    pub fn swaps(&self) -> &Arc<Swaps> {
        &self.swaps
    }
}
