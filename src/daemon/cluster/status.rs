//! The cluster's health for the dashboard's strip. One `ceph status` answers
//! every dashboard for `CLUSTER_TTL`, as the summary's read does: the strip
//! refreshes every few seconds in every open tab.

use std::sync::Arc;
use std::time::Instant;

use super::{Cluster, CLUSTER_TTL};
use crate::clock::now_ms;
use crate::domain::cluster_health::ClusterHealth;
use crate::wire::api::cluster::{ClusterStatus, PgStateCount};

/// The last `ceph status` (when, and what or why not).
pub type StatusRead = Option<(Instant, i64, Result<Arc<ClusterHealth>, String>)>;

impl Cluster {
    pub async fn status(&self) -> ClusterStatus {
        // Kept fresh for /healthz by whoever watches the cluster's health.
        let _ = self.releases().await;
        let mut last = self.status.lock().await;
        let fresh = last.as_ref().is_some_and(|(at, _, _)| at.elapsed() < CLUSTER_TTL);
        if !fresh {
            let read = self.ceph.status().await.map(Arc::new).map_err(|e| {
                tracing::warn!("cannot read the cluster's status: {e}");
                format!("cannot read the cluster's status: {e}")
            });
            *last = Some((Instant::now(), now_ms(), read));
        }
        let (_, read_at, read) = last.as_ref().expect("just read");
        let mut status = match read {
            Ok(h) => view(h, *read_at),
            Err(e) => ClusterStatus { error: Some(e.clone()), read_at: Some(*read_at), ..ClusterStatus::default() },
        };
        status.releases = self.health().releases;
        status
    }
}

fn view(h: &ClusterHealth, read_at: i64) -> ClusterStatus {
    ClusterStatus {
        health: Some(h.status.clone()),
        checks: h.checks.iter().cloned().map(Into::into).collect(),
        pgs: h.pgs,
        pg_states: h
            .pg_states
            .iter()
            .map(|(state, count)| PgStateCount { state: state.clone(), count: *count })
            .collect(),
        pgs_not_clean: h.pgs_not_clean(),
        object_lines: h.object_lines(),
        degraded_ratio: h.degraded.map(|s| s.percent() / 100.0),
        misplaced_ratio: h.misplaced.map(|s| s.percent() / 100.0),
        throughput: h.throughput.into(),
        read_at: Some(read_at),
        error: None,
        releases: Vec::new(),
        warnings: Vec::new(),
    }
}
