//! The read model: the answers that dashboards, Prometheus and scripts
//! poll (`osd rm status`, the summary, the OSD list, the hosts of
//! `/metrics`) held in memory as
//! snapshots, so that a request reads neither the store nor the cluster;
//! it filters and pages what is there.
//!
//! Who keeps it current: `refresh` rebuilds each part whose inputs changed
//! since it was built. Store writes are counted per kind of record
//! (`store::Changes`); reads of the cluster are counted here (each round of
//! the removal worker hands over its read, and this model's own worker
//! reads the cluster when no read is younger than `CLUSTER_TTL`). A refresh
//! runs on the model's worker shortly after any write; before a request is
//! answered from memory when the store counts writes the model has not
//! seen (a client reads its own writes and the workers' ones, e.g. a bench
//! it waited for through the store; a script adding 2000 hosts one by one
//! pays for no rebuild per host); and before the removal worker and the
//! host announcer tell the live streams, so that a dashboard refetching on
//! their message sees what they announce.
//!
//! A part whose rebuild fails keeps its last snapshot, with the failure and
//! its time beside it (`View::failure`); the model's worker retries with
//! its backoff and shows its errors at `/api/v1/workers`.

mod hosts;
mod osds;
mod refresh;
mod removals;
mod statuses;
mod summary;

pub use hosts::HostRow;
pub use osds::OsdRows;
pub use removals::RemovalList;
pub(crate) use statuses::{drain_sample, outcome_text};

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use super::cluster::Cluster;
use super::events::Events;
use super::inventory::InventoryCache;
use super::{DaemonError, Worker};
use crate::ceph::CephCluster;
use crate::clock::now_ms;
use crate::store::Store;
use crate::wire::api::osds::{OsdQuery, OsdRow};
use crate::wire::api::summary::Summary;
use crate::wire::api::Page;

/// One published snapshot of a part.
#[derive(Debug)]
pub struct Published<T> {
    /// Unique across parts and growing: what serialized answers are cached under.
    pub version: u64,
    /// When what it shows was read (ms): the cluster's read for the OSD
    /// list, the rebuild for the others.
    pub read_at: i64,
    pub value: T,
}

/// Why a part may be behind: its last rebuild (or the last read of the
/// cluster, for the OSD list) failed, at `at` (ms).
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: String,
    pub at: i64,
}

/// What a request reads: the current snapshot and, if the latest attempt
/// to bring it up to date failed, why.
#[derive(Debug, Clone)]
pub struct View<T> {
    pub snapshot: Arc<Published<T>>,
    pub failure: Option<Failure>,
}

struct Part<T> {
    current: RwLock<Option<Arc<Published<T>>>>,
    failure: Mutex<Option<Failure>>,
}

impl<T> Default for Part<T> {
    fn default() -> Self {
        Part { current: RwLock::new(None), failure: Mutex::new(None) }
    }
}

impl<T> Part<T> {
    fn snapshot(&self) -> Option<Arc<Published<T>>> {
        self.current.read().expect("read model lock").clone()
    }

    fn view(&self) -> Option<View<T>> {
        let snapshot = self.snapshot()?;
        Some(View { snapshot, failure: self.failure.lock().expect("read model lock").clone() })
    }

    fn publish(&self, version: u64, read_at: i64, value: T) {
        *self.current.write().expect("read model lock") = Some(Arc::new(Published { version, read_at, value }));
        self.set_failure(None);
    }

    fn set_failure(&self, failure: Option<Failure>) {
        *self.failure.lock().expect("read model lock") = failure;
    }

    fn fail(&self, error: &DaemonError) {
        self.set_failure(Some(Failure { error: error.to_string(), at: now_ms() }));
    }
}

/// The read model (see the module's comment): its parts, what it reads
/// them from, and its worker.
pub struct ReadModel {
    store: Store,
    ceph: Arc<dyn CephCluster>,
    cluster: Arc<Cluster>,
    cache: Arc<InventoryCache>,
    events: Arc<Events>,
    /// How long a drain may stand still before its status says it stalled.
    stall_after: Duration,
    /// Refreshes the model after writes and reads the cluster for it.
    worker: Arc<Worker>,
    parts: Parts,
}

#[derive(Default)]
struct Parts {
    versions: AtomicU64,
    removals: Part<RemovalList>,
    summary: Part<Summary>,
    osds: Part<OsdRows>,
    hosts: Part<Vec<HostRow>>,
    /// The store's count of writes (`Changes::total`) the parts were last
    /// all built from: a request that finds the store ahead refreshes
    /// first (see `view_of`).
    store_seen: AtomicU64,
    /// When a refresh asked for by a request last failed (ms; 0: never):
    /// requests try again at most every `REQUEST_RETRY_MS`, not each of
    /// thousands a second while the store fails.
    request_refresh_failed_at: AtomicI64,
    /// What the parts were built from; held for a whole refresh, so that
    /// refreshes run one at a time.
    built: tokio::sync::Mutex<refresh::Built>,
}

impl ReadModel {
    pub fn new(
        store: Store,
        ceph: Arc<dyn CephCluster>,
        cluster: Arc<Cluster>,
        cache: Arc<InventoryCache>,
        events: Arc<Events>,
        stall_after: Duration,
        worker: Arc<Worker>,
    ) -> ReadModel {
        ReadModel { store, ceph, cluster, cache, events, stall_after, worker, parts: Parts::default() }
    }
}

impl Parts {
    fn next_version(&self) -> u64 {
        self.versions.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// How long requests answer from the snapshots as they are after a refresh
/// one of them asked for failed (the model's worker retries meanwhile).
const REQUEST_RETRY_MS: i64 = 1000;

/// A part not built yet whose first build failed: the error a request gets.
fn never_built(failure: Option<Failure>, cluster: bool) -> DaemonError {
    let why = failure.map_or_else(|| "not built yet".to_string(), |f| f.error);
    if cluster {
        DaemonError::CannotAct(why)
    } else {
        DaemonError::Internal(format!("cannot build the answer: {why}"))
    }
}

impl ReadModel {
    /// A part's view, built now if it never was (the first request after start).
    async fn view_of<T>(&self, part: impl Fn(&Parts) -> &Part<T>, cluster: bool) -> Result<View<T>, DaemonError> {
        let m = &self.parts;
        let behind = self.store.changes().total() > m.store_seen.load(Ordering::Acquire);
        let failed_at = m.request_refresh_failed_at.load(Ordering::Acquire);
        if behind && now_ms() - failed_at >= REQUEST_RETRY_MS {
            // Logged by the refresh; the view carries the failure to the client.
            if self.refresh().await.is_err() {
                m.request_refresh_failed_at.store(now_ms(), Ordering::Release);
            }
        }
        if let Some(v) = part(&self.parts).view() {
            return Ok(v);
        }
        if let Err(e) = self.refresh_reading_cluster().await {
            tracing::warn!("cannot build the read model: {e}");
        }
        let p = part(&self.parts);
        p.view().ok_or_else(|| never_built(p.failure.lock().expect("read model lock").clone(), cluster))
    }

    /// Every active removal and the most recent finished ones, from memory.
    pub async fn removals_view(&self) -> Result<View<RemovalList>, DaemonError> {
        self.view_of(|m| &m.removals, false).await
    }

    pub async fn summary_view(&self) -> Result<View<Summary>, DaemonError> {
        self.view_of(|m| &m.summary, false).await
    }

    /// Every host, whether it is reachable and when its inventory was taken.
    pub async fn hosts_view(&self) -> Result<View<Vec<HostRow>>, DaemonError> {
        self.view_of(|m| &m.hosts, false).await
    }

    /// Every OSD as of the last good read of the cluster; an error only if
    /// the cluster never answered.
    pub async fn osds_view(&self) -> Result<View<OsdRows>, DaemonError> {
        self.view_of(|m| &m.osds, true).await
    }

    /// Every OSD with its host, devices, weight, state and removal,
    /// filtered and paged.
    pub async fn osds(&self, q: &OsdQuery) -> Result<Page<OsdRow>, DaemonError> {
        Ok(self.osds_view().await?.snapshot.value.page(q))
    }

    /// The time each host's inventory was last written with (ms), since
    /// the store was opened: newer than the rebuild's after a poll found
    /// an inventory unchanged.
    pub fn inventory_times(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, i64>> {
        self.store.changes().inventory_times()
    }

    #[cfg(test)]
    pub fn summary_now(&self) -> Option<Arc<Published<Summary>>> {
        self.parts.summary.snapshot()
    }

    /// The summary as of the last refresh.
    pub async fn summary(&self) -> Result<Summary, DaemonError> {
        Ok(self.summary_view().await?.snapshot.value.clone())
    }
}

#[cfg(test)]
mod tests;
