//! `bench osds`: `ceph tell osd.N bench` on the OSDs asked for, at most one
//! per host at a time (a bench saturates its disk, and OSDs of one host
//! share its bus, controller and CPU), hosts in parallel; the latest
//! result of each OSD, and which are much slower than comparable ones
//! (`domain::bench::outliers`).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::Benchmarks;
use crate::clock::now_ms;
use crate::daemon::{audit, DaemonError};
use crate::domain::bench::format_rate;
use crate::domain::bench::osd::bench_size;
use crate::domain::bench::outliers::{outliers, Measured};
use crate::domain::cluster::same_host;
use crate::domain::event::{EventKind, Level};
use crate::store::{BenchState, BenchTarget, OsdBenchRow, Store};
use crate::wire::api::bench::{OsdBench, OsdBenchQuery};

/// What `bench osds` asks for.
#[derive(Debug, Clone, Default)]
pub struct OsdBenchRequest {
    pub ids: Vec<u32>,
    pub all: bool,
    pub bytes: Option<u64>,
    pub block_size: Option<u64>,
}

const INTERRUPTED: &str = "the daemon stopped while this bench ran; it is not run again (ask for a new one)";

impl Benchmarks {
    /// Checks the request against the cluster and queues one bench per
    /// OSD, all or none.
    pub async fn schedule_osd_benches(&self, req: &OsdBenchRequest) -> Result<Vec<OsdBench>, DaemonError> {
        let size = bench_size(req.bytes, req.block_size).map_err(DaemonError::Invalid)?;
        match (req.all, req.ids.is_empty()) {
            (true, false) => return Err(DaemonError::Invalid("give OSD ids or `all`, not both".into())),
            (false, true) => return Err(DaemonError::Invalid("give at least one OSD id, or `all`".into())),
            _ => {}
        }
        let mut seen = HashSet::new();
        if let Some(id) = req.ids.iter().find(|id| !seen.insert(**id)) {
            return Err(DaemonError::Invalid(format!("osd.{id} is listed twice")));
        }
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let ids: Vec<u32> = if req.all {
            let up: Vec<u32> = state.osds.iter().filter(|o| o.up && !o.destroyed).map(|o| o.id).collect();
            if up.is_empty() {
                return Err(DaemonError::CannotAct("no OSD is up: there is nothing to bench".into()));
            }
            up
        } else {
            for &id in &req.ids {
                let osd = state
                    .osd(id)
                    .ok_or_else(|| DaemonError::NotFound(format!("osd.{id} does not exist in the cluster")))?;
                if osd.destroyed || !osd.up {
                    return Err(DaemonError::CannotAct(format!("osd.{id} is down: only a running OSD can be benched")));
                }
            }
            req.ids.clone()
        };
        let pending: HashSet<u32> = self.pending_osd_benches().await?;
        if let Some(id) = ids.iter().find(|id| pending.contains(id)) {
            return Err(DaemonError::Conflict(format!("osd.{id} already has a bench queued or running")));
        }
        let hardware: HashMap<u32, _> = match self.ceph.osd_hardware().await {
            Ok(all) => all.into_iter().map(|h| (h.id, h)).collect(),
            Err(e) => {
                // Benched all the same; without class and size it is compared with nothing.
                tracing::warn!("cannot read the OSDs' hardware: {e}");
                HashMap::new()
            }
        };
        let mut benches = Vec::new();
        for id in ids {
            let osd = state.osd(id);
            let hw = hardware.get(&id);
            let host = hw
                .map(|h| h.hostname.clone())
                .filter(|h| !h.is_empty())
                .or_else(|| osd.and_then(|o| o.crush_host.clone()))
                .ok_or_else(|| DaemonError::CannotAct(format!("Ceph does not say which host osd.{id} is on")))?;
            benches.push(BenchTarget {
                osd_id: id,
                host,
                device_class: osd
                    .and_then(|o| o.device_class.clone())
                    .or_else(|| hw.and_then(|h| h.device_class.clone())),
                size_bytes: hw.and_then(|h| h.size_bytes),
                model: hw.and_then(|h| h.model.clone()),
                bytes: size.bytes,
                block_size: size.block_size,
            });
        }
        let actor = audit::actor();
        let queued = self.store.add_osd_benches(&benches, actor.as_deref(), now_ms()).await?;
        let names: Vec<String> = queued.iter().map(|b| format!("osd.{}", b.target.osd_id)).collect();
        self.events
            .record(
                Level::Info,
                EventKind::BenchRequested,
                None,
                None,
                format!(
                    "Queued OSD bench ({} bytes in blocks of {}): {}",
                    size.bytes,
                    size.block_size,
                    names.join(", ")
                ),
            )
            .await;
        self.worker.wake();
        Ok(queued.into_iter().map(OsdBench::from).collect())
    }

    async fn pending_osd_benches(&self) -> Result<HashSet<u32>, DaemonError> {
        let mut ids = HashSet::new();
        for state in [BenchState::Queued, BenchState::Running] {
            ids.extend(self.store.osd_benches_in(state).await?.into_iter().map(|b| b.target.osd_id));
        }
        Ok(ids)
    }

    /// Runs every queued bench: hosts in parallel, one OSD per host at a time.
    pub(super) async fn run_osd_benches(&self) -> Result<(), DaemonError> {
        // A step runs to its end before the next begins, so a bench still
        // `running` now was cut off by a restart of the daemon.
        for b in self.store.interrupt_osd_benches(INTERRUPTED, now_ms()).await? {
            let subject = format!("osd.{}", b.target.osd_id);
            self.events
                .record(
                    Level::Warning,
                    EventKind::BenchFailed,
                    Some(&b.target.host),
                    Some(&subject),
                    format!("{subject}: {INTERRUPTED}"),
                )
                .await;
        }
        let queued = self.store.osd_benches_in(BenchState::Queued).await?;
        if queued.is_empty() {
            return Ok(());
        }
        let mut by_host: BTreeMap<String, Vec<OsdBenchRow>> = BTreeMap::new();
        for b in queued {
            let key =
                by_host.keys().find(|h| same_host(h, &b.target.host)).cloned().unwrap_or_else(|| b.target.host.clone());
            by_host.entry(key).or_default().push(b);
        }
        let before: HashSet<u32> = slow_osds(&self.store).await?.into_iter().map(|(id, _)| id).collect();
        let runs = by_host.into_values().map(|benches| self.bench_host(benches));
        for outcome in futures::future::join_all(runs).await {
            outcome?;
        }
        for (id, message) in slow_osds(&self.store).await? {
            if !before.contains(&id) {
                self.events
                    .record(Level::Warning, EventKind::BenchOutlier, None, Some(&format!("osd.{id}")), message)
                    .await;
            }
        }
        Ok(())
    }

    /// One host's benches, one after the other.
    async fn bench_host(&self, benches: Vec<OsdBenchRow>) -> Result<(), DaemonError> {
        for b in benches {
            if !self.store.start_osd_bench(b.bench_id, now_ms()).await? {
                continue;
            }
            let subject = format!("osd.{}", b.target.osd_id);
            let span = tracing::info_span!("osd_bench", osd = b.target.osd_id, host = %b.target.host);
            let outcome = tracing::Instrument::instrument(
                self.ceph.osd_bench(b.target.osd_id, b.target.bytes, b.target.block_size),
                span,
            )
            .await
            .map_err(|e| e.to_string());
            let done = self.store.finish_osd_bench(b.bench_id, outcome.clone(), now_ms()).await?;
            match outcome {
                Ok(r) => {
                    let message = format!(
                        "{subject}: {} ({:.0} IOPS, {:.1} s)",
                        format_rate(r.bytes_per_sec),
                        r.iops,
                        r.elapsed_s
                    );
                    self.events
                        .record(Level::Info, EventKind::BenchFinished, Some(&done.target.host), Some(&subject), message)
                        .await;
                }
                Err(e) => {
                    let message = format!("{subject}: the bench failed: {e}");
                    self.events
                        .record(Level::Error, EventKind::BenchFailed, Some(&done.target.host), Some(&subject), message)
                        .await;
                }
            }
        }
        Ok(())
    }

    /// The latest bench of each OSD with its outlier verdict, or (with
    /// `history`) the last benches, newest first.
    pub async fn osd_benches(&self, q: &OsdBenchQuery) -> Result<Vec<OsdBench>, DaemonError> {
        let stored = match q.history {
            Some(n) => self.store.osd_bench_history(n.clamp(0, 10_000)).await?,
            None => self.store.latest_osd_benches().await?,
        };
        let mut rows: Vec<OsdBench> = stored.into_iter().map(OsdBench::from).collect();
        let slow: HashMap<u32, String> = slow_osds(&self.store).await?.into_iter().collect();
        let latest_done: HashSet<i64> =
            self.store.latest_done_osd_benches().await?.into_iter().map(|b| b.bench_id).collect();
        for r in &mut rows {
            if latest_done.contains(&r.bench_id) || q.history.is_none() {
                r.outlier = slow.get(&r.target.osd_id).cloned();
            }
        }
        Ok(rows)
    }
}

/// The OSDs much slower than comparable ones, from each OSD's latest
/// result, with why.
async fn slow_osds(store: &Store) -> Result<Vec<(u32, String)>, DaemonError> {
    let latest = store.latest_done_osd_benches().await?;
    let measured: Vec<Measured> = latest
        .iter()
        .filter_map(|b| {
            Some(Measured::osd(
                b.target.osd_id,
                b.target.device_class.clone(),
                b.target.size_bytes,
                b.target.model.clone(),
                b.bytes_per_sec?,
            ))
        })
        .collect();
    Ok(outliers(&measured).into_iter().map(|o| (o.id, o.message)).collect())
}

/// Each OSD's latest measured rate and outlier verdict, for `osd ls`.
pub async fn bench_brief(store: &Store) -> Result<HashMap<u32, (f64, Option<String>)>, DaemonError> {
    let slow: HashMap<u32, String> = slow_osds(store).await?.into_iter().collect();
    Ok(store
        .latest_done_osd_benches()
        .await?
        .into_iter()
        .filter_map(|b| Some((b.target.osd_id, (b.bytes_per_sec?, slow.get(&b.target.osd_id).cloned()))))
        .collect())
}
