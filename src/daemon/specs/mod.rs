//! Drive specs: applying them (`apply.rs`: every document validated, a
//! dry-run answered at once from the stored inventories, the specs
//! stored), the reconciler that starts deployments where an applied spec
//! creates OSDs (`reconciler.rs`), parsing and planning off the async
//! runtime (`planning.rs`), the planning view (`snapshot`), and the
//! specs as `spec ls` and `orch ls` show them (`queries.rs`).

mod apply;
mod parsed;
mod planning;
mod queries;
mod reconciler;

pub use apply::stored_document;

use std::sync::Arc;
use std::time::Duration;

use super::bench::probe_statuses;
use super::cluster::Cluster;
use super::events::Events;
use super::inventory::view::{self, Snapshot};
use super::inventory::Inventory;
use super::read_model::ReadModel;
use super::{DaemonError, Worker};
use crate::store::Store;

pub struct Specs {
    store: Store,
    events: Arc<Events>,
    cluster: Arc<Cluster>,
    inventory: Arc<Inventory>,
    read_model: Arc<ReadModel>,
    /// Parsing and planning, off the async runtime.
    planning: planning::Planning,
    /// The stored specs as parsed, by version.
    parsed: Arc<parsed::ParsedSpecs>,
    /// Woken after an apply, a release or a changed inventory.
    reconciler: Arc<Worker>,
    /// Woken by a new deployment.
    deployer: Arc<Worker>,
    /// How long `apply --refresh` waits for the agents.
    refresh_timeout: Duration,
}

impl Specs {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        events: Arc<Events>,
        cluster: Arc<Cluster>,
        inventory: Arc<Inventory>,
        read_model: Arc<ReadModel>,
        reconciler: Arc<Worker>,
        deployer: Arc<Worker>,
        refresh_timeout: Duration,
    ) -> Specs {
        Specs {
            store,
            events,
            cluster,
            inventory,
            read_model,
            planning: Default::default(),
            parsed: Default::default(),
            reconciler,
            deployer,
            refresh_timeout,
        }
    }

    /// Holds every parse and plan from now on until the hold is released,
    /// for tests that look at the daemon while a plan is under way.
    #[cfg(test)]
    pub fn hold_planning(&self) -> planning::tests::Hold {
        self.planning.hold()
    }

    /// The current planning view, with the ids of destroyed OSDs that the
    /// next OSDs on their hosts claim (cephadm's OsdIdClaims).
    pub async fn snapshot(&self) -> Result<Snapshot, DaemonError> {
        let hosts = self.inventory.parsed_inventories().await?;
        let holds = self.store.holds().await?;
        let probes = probe_statuses(&self.store).await?;
        let mut snapshot = view::build(hosts, &holds, &probes);
        match self.cluster.recently().await {
            Ok(cluster) => snapshot.view.osd_id_claims = crate::domain::cluster::destroyed_by_host(&cluster),
            // Planned without claims; a replaced OSD's id would not come back.
            Err(e) => tracing::warn!("planning without the cluster's destroyed OSD ids: {e}"),
        }
        Ok(snapshot)
    }
}

#[cfg(test)]
mod apply_tests;
