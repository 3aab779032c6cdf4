//! Benchmarks: per-OSD benches (`osds.rs`: asked, queued, run at most one
//! per host at a time by the benchmark worker, outliers among comparable
//! OSDs), cluster benchmarks (`cluster.rs`: `rados bench` on a test pool,
//! an operation on the kernel) and disk probes (`probes.rs`, `probe_kind.rs`:
//! fio on a blank disk through its agent, before it becomes an OSD, an
//! operation on the kernel). Every bench is stored before it runs; what a
//! restart cut off is marked, never run twice.

mod cluster;
mod osds;
mod probe_kind;
mod probes;

pub use osds::{bench_brief, OsdBenchRequest};
pub use probes::probe_statuses;

use std::sync::Arc;

use super::events::Events;
use super::inventory::Inventory;
use super::operations::Backoff;
use super::{DaemonError, Worker};
use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::store::Store;

pub struct Benchmarks {
    store: Store,
    ceph: Arc<dyn CephCluster>,
    agents: Arc<dyn HostAgents>,
    events: Arc<Events>,
    inventory: Arc<Inventory>,
    /// Runs queued benchmarks and probes; woken by a new one.
    worker: Arc<Worker>,
    /// A finished probe may let a spec that waits for probes go on.
    reconciler: Arc<Worker>,
    /// How long an operation whose effects keep failing waits.
    backoff: Backoff,
}

impl Benchmarks {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        ceph: Arc<dyn CephCluster>,
        agents: Arc<dyn HostAgents>,
        events: Arc<Events>,
        inventory: Arc<Inventory>,
        worker: Arc<Worker>,
        reconciler: Arc<Worker>,
        backoff: Backoff,
    ) -> Benchmarks {
        Benchmarks { store, ceph, agents, events, inventory, worker, reconciler, backoff }
    }

    /// One round of the benchmark worker: disk probes and cluster
    /// benchmarks on the operation kernel (which closes what a restart cut
    /// off first), per-OSD benches, each run to its end.
    #[tracing::instrument(skip_all)]
    pub async fn round(self: &Arc<Self>) -> Result<(), DaemonError> {
        self.run_disk_probes().await?;
        self.run_osd_benches().await?;
        self.run_cluster_bench().await.map(|_| ())
    }
}
