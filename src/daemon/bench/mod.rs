//! Benchmarks: per-OSD benches (`osds.rs`: asked, queued, run at most one
//! per host at a time by the benchmark worker, outliers among comparable
//! OSDs), cluster benchmarks (`cluster.rs`: `rados bench` on a test pool)
//! and disk probes (`probes.rs`: fio on a blank disk through its agent,
//! before it becomes an OSD). Every bench is stored
//! before it runs; the worker marks what a restart cut off instead of
//! running it twice.

mod cluster;
mod osds;
mod probe_kind;
mod probes;

pub use osds::OsdBenchRequest;

use std::sync::Arc;

use super::{Daemon, DaemonError};

impl Daemon {
    /// One round of the benchmark worker: disk probes and cluster
    /// benchmarks on the operation kernel (which closes what a restart cut
    /// off first), per-OSD benches, each run to its end.
    #[tracing::instrument(skip_all)]
    pub async fn bench_round(self: &Arc<Self>) -> Result<(), DaemonError> {
        self.run_disk_probes().await?;
        self.run_osd_benches().await?;
        self.run_cluster_bench().await.map(|_| ())
    }
}
