//! The reads of the cluster the read model is built from: the last good
//! one, whether the latest failed, and how many there were (every read
//! makes new OSD rows: weights, PGs and states move). Reads come from the
//! removal worker's rounds and from `Daemon::cluster_recently`, whoever
//! asked for it; the model's worker asks when none is younger than
//! `CLUSTER_TTL`.

use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::Failure;
use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::Daemon;

#[derive(Default)]
pub(super) struct ClusterSeen(Mutex<Seen>);

#[derive(Default, Clone)]
pub(super) struct Seen {
    /// Reads so far, good or not.
    pub reads: u64,
    /// The last good read and when it was made (ms).
    pub good: Option<(Arc<ClusterState>, i64)>,
    /// Set when the latest read failed.
    pub latest_error: Option<Failure>,
    pub last_read: Option<Instant>,
}

impl ClusterSeen {
    pub fn record(&self, read: &Result<Arc<ClusterState>, String>) {
        let mut s = self.0.lock().expect("cluster seen lock");
        s.reads += 1;
        s.last_read = Some(Instant::now());
        match read {
            Ok(state) => {
                s.good = Some((state.clone(), now_ms()));
                s.latest_error = None;
            }
            Err(e) => s.latest_error = Some(Failure { error: e.clone(), at: now_ms() }),
        }
    }

    pub fn now(&self) -> Seen {
        self.0.lock().expect("cluster seen lock").clone()
    }
}

impl Daemon {
    /// A read of the cluster made by a worker for its own needs (the
    /// removal worker's, every round): it answers the summary, the OSD list
    /// and the dry-run's claims as if they had read it themselves.
    pub(crate) async fn cluster_seen(&self, state: Arc<ClusterState>) {
        self.remember_cluster_read(Ok(state)).await;
    }

    /// Records any read of the cluster for the read model.
    pub(crate) fn record_cluster_read(&self, read: &Result<Arc<ClusterState>, String>) {
        self.model.cluster.record(read);
    }

    /// How long the last read of the cluster stays fresh; None when the
    /// read model should read it again (never read, or older than `CLUSTER_TTL`).
    pub(super) fn cluster_fresh_for(&self) -> Option<std::time::Duration> {
        let seen = self.model.cluster.now();
        let ttl = crate::daemon::queries::CLUSTER_TTL;
        seen.last_read.map(|at| ttl.saturating_sub(at.elapsed())).filter(|left| !left.is_zero())
    }

    pub(super) fn cluster_never_read(&self) -> bool {
        self.model.cluster.now().reads == 0
    }
}
