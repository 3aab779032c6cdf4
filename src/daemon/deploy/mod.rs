//! OSD deployment: the reconciler (in `specs/`) starts a deployment for
//! each (spec, host, set of disks) its plan creates OSDs on; the
//! deployment kind here drives each on the operation kernel through
//! `domain::deploy::advance` (prepare, activate, start, verify), `events`
//! records what happens in cephadm's words, `queries` shows them.

mod events;
mod queries;
mod worker;

pub use queries::{deploy_failures, deployment_status};

use std::sync::Arc;
use std::time::Duration;

use super::events::Events;
use super::inventory::Inventory;
use super::read_model::ReadModel;
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
    /// The kernel's pace: the base of an operation's backoff.
    interval: Duration,
    max_backoff: Duration,
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
        (interval, max_backoff): (Duration, Duration),
    ) -> Deployments {
        Deployments { store, ceph, agents, events, inventory, read_model, reconciler, interval, max_backoff }
    }
}
