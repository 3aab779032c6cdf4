//! The counts a dashboard's header shows, from the read model
//! (`read_model/summary.rs` builds them), and the last read of the cluster:
//! one read answers every summary, OSD list and dry-run for `CLUSTER_TTL`
//! (dashboards ask after every host poll, and the monitors should not
//! answer each of them). The removal worker's reads count too.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError};
use crate::wire::api::error::CephHealth;
use crate::wire::api::summary::Summary;

/// How long one read of the cluster answers every summary.
pub const CLUSTER_TTL: Duration = Duration::from_secs(5);

/// The last read of the cluster, or why it failed.
type Read = Result<Arc<ClusterState>, String>;

/// The last read of the cluster, shared by the read model and the
/// dry-run's OSD id claims.
#[derive(Default)]
pub struct ClusterCache {
    last: tokio::sync::Mutex<Option<(Instant, Read)>>,
    /// The outcome of the last read, for `/healthz`, which must answer at
    /// once and so never waits for a read under way.
    outcome: std::sync::Mutex<Option<CephHealth>>,
    /// The last `ceph status`, for the health strip (`cluster_status.rs`).
    pub(super) status: tokio::sync::Mutex<super::cluster_status::StatusRead>,
}

impl Daemon {
    /// The summary as of the read model's last refresh.
    pub async fn summary(&self) -> Result<Summary, DaemonError> {
        Ok(self.summary_view().await?.snapshot.value.clone())
    }

    /// The cluster, read again when older than `CLUSTER_TTL`. Requests that
    /// arrive during a read wait for it instead of starting their own.
    pub(crate) async fn cluster_recently(&self) -> Read {
        let mut last = self.cluster.last.lock().await;
        if let Some((at, read)) = last.as_ref() {
            if at.elapsed() < CLUSTER_TTL {
                return read.clone();
            }
        }
        let read = self.ceph.state().await.map(Arc::new).map_err(|e| format!("cannot read the cluster: {e}"));
        *last = Some((Instant::now(), read.clone()));
        drop(last);
        self.remember_outcome(&read);
        read
    }

    /// A read made elsewhere (the removal worker's) answers as if this
    /// cache had made it. Skipped for the cache while a read is under way:
    /// the worker must not wait for it, and that read will be as fresh.
    pub(crate) async fn remember_cluster_read(&self, read: Read) {
        if let Ok(mut last) = self.cluster.last.try_lock() {
            *last = Some((Instant::now(), read.clone()));
        }
        self.remember_outcome(&read);
    }

    fn remember_outcome(&self, read: &Read) {
        let outcome = CephHealth { connected: read.is_ok(), checked_at: Some(now_ms()), error: read.clone().err() };
        *self.cluster.outcome.lock().expect("ceph health lock") = Some(outcome);
        self.record_cluster_read(read);
    }

    /// Whether the cluster answered the last time it was asked (not asked
    /// again here: liveness checks must not reach the monitors).
    pub fn ceph_health(&self) -> CephHealth {
        self.cluster.outcome.lock().expect("ceph health lock").clone().unwrap_or(CephHealth {
            connected: false,
            checked_at: None,
            error: Some("not checked yet".into()),
        })
    }

    /// At start: reads the cluster once and says whether that worked. The
    /// daemon serves either way (hosts, inventories and dry-runs need no
    /// cluster); without one, OSD lists, removals and deployments fail
    /// until it answers, and `/healthz` and the summary say why.
    pub async fn check_ceph(&self) {
        match self.cluster_recently().await {
            Ok(state) => {
                let (n, up, _) = state.osd_counts();
                tracing::info!(osds = n, up, "connected to the Ceph cluster");
            }
            Err(e) => tracing::warn!(
                "{e}; OSD lists, removals and deployments will fail until the cluster answers \
                 (--ceph-conf, CEPH_CONF, or ceph.conf in the config file)"
            ),
        }
    }
}
