//! Bringing the read model up to date: each part is rebuilt when what it
//! is built from changed (the store's counters, the cluster reads, the OSD
//! metadata, the phases of the removals), in the order they depend on each
//! other: removals, host counts and rows, benches, OSD rows, summary.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::osds::{metadata_key, BenchBrief, Metadata, OsdRows, METADATA_TTL};
use super::summary::compose;
use super::{Failure, ReadModel};
use crate::clock::now_ms;
use crate::daemon::bench::bench_brief;
use crate::daemon::cluster::CLUSTER_TTL;
use crate::daemon::live::Live;
use crate::daemon::{DaemonError, Pace};
use crate::domain::removal::Phase;
use crate::store::Topic;
use crate::wire::api::summary::Summary;

/// The store's records the summary's host counts are built from.
const HOST_TOPICS: [Topic; 4] = [Topic::Hosts, Topic::Inventories, Topic::Holds, Topic::Specs];

/// How long the model's worker lets writes gather after the first before
/// it refreshes: a poll round stores hundreds of inventories a second.
pub const SETTLE: Duration = Duration::from_millis(100);

/// What the parts were built from, and what rebuilding them needs that is
/// not published.
#[derive(Default)]
pub(super) struct Built {
    removals: Option<(u64, u64)>,
    hosts: Option<[u64; 4]>,
    host_counts: Option<Summary>,
    benches: Option<u64>,
    brief: Arc<BenchBrief>,
    meta: Option<Meta>,
    /// Reads of OSD metadata so far; the last that failed.
    meta_reads: u64,
    meta_failed: Option<Instant>,
    /// Read OSD metadata again at the next chance, whatever its age.
    meta_stale: bool,
    /// Cluster reads, metadata reads, removal phases, bench changes.
    rows: Option<(u64, u64, HashMap<u32, Phase>, u64)>,
}

struct Meta {
    devices: Arc<Metadata>,
    key: Vec<(u32, bool, bool)>,
    at: Instant,
}

impl ReadModel {
    /// Brings every part up to date with the store and the last read of
    /// the cluster (read once if it never was). Runs one at a time; cheap
    /// when nothing changed.
    pub async fn refresh(&self) -> Result<(), DaemonError> {
        self.refresh_parts(false).await
    }

    /// The same, reading OSD metadata too when it is due.
    pub(super) async fn refresh_reading_cluster(&self) -> Result<(), DaemonError> {
        self.refresh_parts(true).await
    }

    /// Reads the cluster and its OSD metadata now, then refreshes: the
    /// model as a request would have seen the cluster before it existed.
    pub async fn refresh_from_cluster(&self) -> Result<(), DaemonError> {
        self.cluster.read_now().await;
        self.parts.built.lock().await.meta_stale = true;
        self.refresh_parts(true).await
    }

    /// Refreshes the read model, then tells the live streams: a client
    /// that refetches on the message sees what it announces.
    pub async fn notify_current(&self, message: Live) {
        if let Err(e) = self.refresh().await {
            tracing::warn!("the read model is behind the store: {e}");
        }
        self.events.notify(message);
    }

    /// The same after a read of the cluster, for a worker whose actions
    /// change what the cluster shows (the deployment worker's new OSDs).
    pub async fn notify_after_cluster_read(&self, message: Live) {
        self.cluster.read_now().await;
        if let Err(e) = self.refresh_reading_cluster().await {
            tracing::warn!("the read model is behind: {e}");
        }
        self.events.notify(message);
    }

    /// The model's worker: reads the cluster when no read is younger than
    /// `CLUSTER_TTL`, then refreshes; woken by the store's writes.
    pub async fn round(&self) -> Result<Pace, DaemonError> {
        if self.cluster.fresh_for().is_none() {
            // A failed read is recorded and shown; it is not the worker's error.
            let _recorded = self.cluster.recently().await;
        }
        self.refresh_parts(true).await?;
        Ok(self.cluster.fresh_for().map_or(Pace::Interval, Pace::Within))
    }

    /// Wakes the model's worker within `SETTLE` of each write to the store:
    /// the writes in that time share one refresh.
    pub async fn wake_on_writes(&self, cancel: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.store.changes().written() => self.worker.wake_within(SETTLE),
            }
        }
    }

    async fn refresh_parts(&self, read_metadata: bool) -> Result<(), DaemonError> {
        let m = &self.parts;
        let mut built = m.built.lock().await;
        // Read before the rebuilds' queries (see `store::changes`).
        let store_total = self.store.changes().total();
        if self.cluster.reads().reads == 0 {
            let _recorded = self.cluster.recently().await;
        }
        let mut first_error = None;
        let mut failed = |e: DaemonError| {
            tracing::warn!("cannot refresh the read model: {e}");
            first_error.get_or_insert(e);
        };
        let changes = self.store.changes();

        let removals = (changes.count(Topic::Removals), changes.count(Topic::FinishedRemovals));
        if built.removals != Some(removals) {
            let previous = m.removals.snapshot();
            let finished_changed = built.removals.is_none_or(|(_, f)| f != removals.1);
            match self.build_removals(previous.as_ref().map(|p| &p.value), finished_changed).await {
                Ok(r) => {
                    m.removals.publish(m.next_version(), now_ms(), r);
                    built.removals = Some(removals);
                }
                Err(e) => {
                    m.removals.fail(&e);
                    failed(e);
                }
            }
        }

        let hosts = HOST_TOPICS.map(|t| changes.count(t));
        if built.hosts != Some(hosts) {
            match self.host_counts().await {
                Ok((counts, rows)) => {
                    built.host_counts = Some(counts);
                    built.hosts = Some(hosts);
                    // Current again, whether or not the counts moved.
                    m.summary.set_failure(None);
                    m.hosts.publish(m.next_version(), now_ms(), rows);
                }
                Err(e) => {
                    m.summary.fail(&e);
                    m.hosts.fail(&e);
                    failed(e);
                }
            }
        }

        let benches = changes.count(Topic::OsdBenches);
        if built.benches != Some(benches) {
            match bench_brief(&self.store).await {
                Ok(brief) => {
                    built.brief = Arc::new(brief);
                    built.benches = Some(benches);
                }
                // The list still shows every OSD, with the benches it had.
                Err(e) => failed(e),
            }
        }

        let seen = self.cluster.reads();
        if read_metadata {
            if let Some((state, _)) = &seen.good {
                self.refresh_metadata(&mut built, metadata_key(state)).await;
            }
        }
        let phases = m.removals.snapshot().map(|r| r.value.phases()).unwrap_or_default();
        if let Some((state, read_at)) = &seen.good {
            let inputs = (seen.reads, built.meta_reads, phases, benches);
            if built.rows.as_ref() != Some(&inputs) {
                let empty = Metadata::new();
                let meta = built.meta.as_ref().map_or(&empty, |m| m.devices.as_ref());
                let rows = OsdRows::build(state, meta, &inputs.2, &built.brief);
                m.osds.publish(m.next_version(), *read_at, rows);
                built.rows = Some(inputs);
            }
        }
        // Behind the cluster while its reads fail (the rows are the last good read's).
        m.osds.set_failure(seen.latest_error.clone().map(|(error, at)| Failure { error, at }));

        if let Some(counts) = &built.host_counts {
            let active = m.removals.snapshot().map_or(0, |r| r.value.active_count());
            let summary = compose(counts, active, &seen);
            if m.summary.snapshot().is_none_or(|s| s.value != summary) {
                m.summary.publish(m.next_version(), now_ms(), summary);
            }
        }
        if first_error.is_none() {
            m.store_seen.store(store_total, std::sync::atomic::Ordering::Release);
        }
        first_error.map_or(Ok(()), Err)
    }

    /// OSD metadata, read again when the OSDs changed or it is older than
    /// `METADATA_TTL`; on failure the list keeps what it had (at first:
    /// no devices, and the CRUSH host), and asks again after `CLUSTER_TTL`.
    async fn refresh_metadata(&self, built: &mut Built, key: Vec<(u32, bool, bool)>) {
        let due =
            built.meta_stale || built.meta.as_ref().is_none_or(|m| m.key != key || m.at.elapsed() >= METADATA_TTL);
        let failed_lately = built.meta_failed.is_some_and(|at| at.elapsed() < CLUSTER_TTL);
        if !due || (failed_lately && !built.meta_stale) {
            return;
        }
        match self.ceph.all_osd_devices().await {
            Ok(all) => {
                built.meta = Some(Meta { devices: Arc::new(all.into_iter().collect()), key, at: Instant::now() });
                built.meta_reads += 1;
                built.meta_failed = None;
            }
            Err(e) => {
                tracing::warn!("cannot read OSD metadata: {e}");
                built.meta_failed = Some(Instant::now());
            }
        }
        built.meta_stale = false;
    }
}
