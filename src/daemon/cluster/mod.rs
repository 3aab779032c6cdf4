//! The cluster as the daemon last read it. One read answers every summary,
//! OSD list and dry-run for `CLUSTER_TTL` (dashboards ask after every host
//! poll, and the monitors should not answer each of them); the removal
//! worker's reads count too (`seen`). What the reads were, the last good
//! one, whether the latest failed, is what the read model is built from
//! (`Seen`); whether the cluster answered is what `/healthz` says, without
//! asking it again. `status.rs`: the health strip's `ceph status`, read at
//! most once per `CLUSTER_TTL` too.

mod releases;
mod status;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::ceph::{CephCluster, ClusterState};
use crate::clock::now_ms;
use crate::wire::api::error::CephHealth;

pub use releases::{ReleasesRead, RELEASES_TTL};
pub use status::StatusRead;

/// How long one read of the cluster answers every request.
pub const CLUSTER_TTL: Duration = Duration::from_secs(5);

/// A read of the cluster, or why it failed.
pub type Read = Result<Arc<ClusterState>, String>;

pub struct Cluster {
    ceph: Arc<dyn CephCluster>,
    last: tokio::sync::Mutex<Option<(Instant, Read)>>,
    /// The outcome of the last read, for `/healthz`, which must answer at
    /// once and so never waits for a read under way.
    outcome: Mutex<Option<CephHealth>>,
    /// The last `ceph status`, for the health strip (`status.rs`).
    status: tokio::sync::Mutex<StatusRead>,
    /// The last `ceph versions` (`releases.rs`).
    releases: releases::Releases,
    seen: Mutex<Seen>,
}

/// Every read of the cluster so far, as the read model needs it.
#[derive(Default, Clone)]
pub struct Seen {
    /// Reads so far, good or not.
    pub reads: u64,
    /// The last good read and when it was made (ms).
    pub good: Option<(Arc<ClusterState>, i64)>,
    /// Set when the latest read failed: why, and when (ms).
    pub latest_error: Option<(String, i64)>,
    pub last_read: Option<Instant>,
}

impl Cluster {
    pub fn new(ceph: Arc<dyn CephCluster>) -> Cluster {
        Cluster {
            ceph,
            last: Default::default(),
            outcome: Default::default(),
            status: Default::default(),
            releases: Default::default(),
            seen: Default::default(),
        }
    }

    /// The cluster, read again when older than `CLUSTER_TTL`. Requests that
    /// arrive during a read wait for it instead of starting their own.
    pub async fn recently(&self) -> Read {
        let mut last = self.last.lock().await;
        if let Some((at, read)) = last.as_ref() {
            if at.elapsed() < CLUSTER_TTL {
                return read.clone();
            }
        }
        let read = self.read().await;
        *last = Some((Instant::now(), read.clone()));
        drop(last);
        self.record(&read);
        read
    }

    /// Reads the cluster now, whatever the age of the last read.
    pub async fn read_now(&self) {
        let read = self.read().await;
        self.remember(read);
    }

    async fn read(&self) -> Read {
        self.ceph.state().await.map(Arc::new).map_err(|e| format!("cannot read the cluster: {e}"))
    }

    /// A read made by a worker for its own needs (the removal worker's,
    /// every round): it answers the summary, the OSD list and the
    /// dry-run's claims as if they had read it themselves.
    pub fn seen(&self, state: Arc<ClusterState>) {
        self.remember(Ok(state));
    }

    /// A read made elsewhere answers as if this cache had made it. Skipped
    /// for the cache while a read is under way: the worker must not wait
    /// for it, and that read will be as fresh.
    fn remember(&self, read: Read) {
        if let Ok(mut last) = self.last.try_lock() {
            *last = Some((Instant::now(), read.clone()));
        }
        self.record(&read);
    }

    fn record(&self, read: &Read) {
        let outcome = CephHealth {
            connected: read.is_ok(),
            checked_at: Some(now_ms()),
            error: read.clone().err(),
            releases: Vec::new(),
        };
        *self.outcome.lock().expect("ceph health lock") = Some(outcome);
        let mut s = self.seen.lock().expect("cluster seen lock");
        s.reads += 1;
        s.last_read = Some(Instant::now());
        match read {
            Ok(state) => {
                s.good = Some((state.clone(), now_ms()));
                s.latest_error = None;
            }
            Err(e) => s.latest_error = Some((e.clone(), now_ms())),
        }
    }

    /// The cluster's fsid, as the last good read gave it: what a zap names
    /// as the cluster whose volumes it may destroy.
    pub fn fsid(&self) -> Option<String> {
        let seen = self.seen.lock().expect("cluster seen lock");
        seen.good.as_ref().map(|(state, _)| state.fsid.clone()).filter(|f| !f.is_empty())
    }

    /// Every read so far.
    pub fn reads(&self) -> Seen {
        self.seen.lock().expect("cluster seen lock").clone()
    }

    /// How long the last read stays fresh; None when it should be read
    /// again (never read, or older than `CLUSTER_TTL`).
    pub fn fresh_for(&self) -> Option<Duration> {
        let seen = self.reads();
        seen.last_read.map(|at| CLUSTER_TTL.saturating_sub(at.elapsed())).filter(|left| !left.is_zero())
    }

    /// Whether the cluster answered the last time it was asked (not asked
    /// again here: liveness checks must not reach the monitors).
    pub fn health(&self) -> CephHealth {
        let mut health = self.outcome.lock().expect("ceph health lock").clone().unwrap_or(CephHealth {
            connected: false,
            checked_at: None,
            error: Some("not checked yet".into()),
            releases: Vec::new(),
        });
        if let Some(Ok(releases)) = self.releases_seen() {
            health.releases = releases::running(&releases);
        }
        health
    }

    /// At start: reads the cluster once and says whether that worked. The
    /// daemon serves either way (hosts, inventories and dry-runs need no
    /// cluster); without one, OSD lists, removals and deployments fail
    /// until it answers, and `/healthz` and the summary say why.
    pub async fn check(&self) {
        match self.recently().await {
            Ok(state) => {
                let (n, up, _) = state.osd_counts();
                let releases = match self.releases().await {
                    Ok(r) => r.iter().map(|(r, n)| format!("{r} x{n}")).collect::<Vec<_>>().join(", "),
                    Err(e) => e,
                };
                tracing::info!(osds = n, up, releases, "connected to the Ceph cluster");
            }
            Err(e) => tracing::warn!(
                "{e}; OSD lists, removals and deployments will fail until the cluster answers \
                 (--ceph-conf, CEPH_CONF, or ceph.conf in the config file)"
            ),
        }
    }
}
