//! `bench cluster`: `rados bench` write (`--no-cleanup`), then seq and
//! rand reads of what it wrote, on a test pool the daemon makes and
//! removes (or a given pool, refused while it holds other objects unless
//! asked), then its objects removed. Refused while the cluster is not
//! HEALTH_OK or a drain runs, unless forced; checked again when it starts.
//!
//! Each phase is stored with `in_flight` set before its action and stored
//! again after it; a round that finds `in_flight` set knows a restart cut
//! the action off (`domain::bench::cluster::after_restart`): a pass is not
//! run twice, the cleanup always runs.

use std::time::{Duration, Instant};

use crate::clock::now_ms;
use crate::daemon::{audit, Daemon, DaemonError};
use crate::domain::bench::cluster::{
    after_restart, new_run, next, own_pool_name, ClusterBench, ClusterPhase, ClusterShape,
};
use crate::domain::bench::compare::{compare, shape_differences};
use crate::domain::bench::methodology::warnings;
use crate::domain::event::{EventKind, Level};
use crate::wire::api::bench::{ClusterBenchBody, ClusterComparison, ClusterRun, ClusterRunQuery};

/// How long a new pool's PGs may take to become active+clean.
const POOL_READY: Duration = Duration::from_secs(120);

impl Daemon {
    /// Checks the request and the cluster, stores the run, wakes the worker.
    pub async fn schedule_cluster_bench(&self, body: &ClusterBenchBody) -> Result<ClusterRun, DaemonError> {
        let bench = new_run(body.pool.clone(), body.seconds, body.pg_num, body.label.clone(), body.force)
            .map_err(DaemonError::Invalid)?;
        if let Some(active) = self.store.active_cluster_bench().await? {
            return Err(DaemonError::Conflict(format!(
                "cluster benchmark {} is already running ({})",
                active.bench_id,
                active.bench.phase.as_str()
            )));
        }
        self.may_bench(&bench).await?;
        if let Some(pool) = body.pool.as_deref() {
            let info = self.ceph.pool(pool).await.map_err(DaemonError::cluster_unreadable)?;
            let info = info.ok_or_else(|| DaemonError::NotFound(format!("pool {pool} does not exist")))?;
            if info.objects > 0 && !body.allow_pool_with_data {
                return Err(DaemonError::RefusedUnsafe(format!(
                    "pool {pool} holds {} objects: the benchmark would write among them; give an empty pool, none \
                     (a test pool is made and removed), or allow_pool_with_data (only the benchmark's own objects \
                     are removed)",
                    info.objects
                )));
            }
        }
        let actor = audit::actor();
        let run = self.store.add_cluster_bench(&bench, own_pool_name, actor.as_deref(), now_ms()).await?;
        let what = run.bench.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
        self.event(
            Level::Info,
            EventKind::BenchRequested,
            None,
            Some(&format!("cluster-bench-{}", run.bench_id)),
            format!(
                "Queued cluster benchmark {}{what}: rados bench write, seq, rand of {} s each on pool {}",
                run.bench_id, run.bench.seconds, run.bench.pool
            ),
        )
        .await;
        self.bencher.wake();
        Ok(run)
    }

    /// Refuses while the cluster is not HEALTH_OK or a drain runs, unless forced.
    async fn may_bench(&self, b: &ClusterBench) -> Result<String, DaemonError> {
        let health = self.ceph.health().await.map_err(DaemonError::cluster_unreadable)?;
        if b.force {
            return Ok(health);
        }
        if health != "HEALTH_OK" {
            return Err(DaemonError::CannotAct(format!(
                "the cluster is {health}: a benchmark now would measure its trouble (force to run anyway)"
            )));
        }
        let draining: Vec<String> = self
            .store
            .active_removals()
            .await?
            .into_iter()
            .filter(|r| r.removal.phase.is_draining())
            .map(|r| format!("osd.{}", r.removal.osd_id))
            .collect();
        if !draining.is_empty() {
            return Err(DaemonError::CannotAct(format!(
                "{} draining: a benchmark now would measure the drain and slow it (force to run anyway)",
                draining.join(", ")
            )));
        }
        Ok(health)
    }

    /// Drives the active run, if any, to its end.
    pub(super) async fn run_cluster_bench(&self) -> Result<(), DaemonError> {
        let Some(mut run) = self.store.active_cluster_bench().await? else {
            return Ok(());
        };
        let resumed = after_restart(run.bench.clone());
        if resumed != run.bench {
            if let Some(why) = &resumed.failure {
                let subject = format!("cluster-bench-{}", run.bench_id);
                self.event(Level::Warning, EventKind::BenchFailed, None, Some(&subject), why.clone()).await;
            }
            self.save_run(&mut run, resumed).await?;
        }
        while !run.bench.phase.is_finished() {
            let mut started = run.bench.clone();
            started.in_flight = true;
            self.save_run(&mut run, started).await?;
            let mut after = run.bench.clone();
            after.in_flight = false;
            let outcome = self.carry_out_bench_phase(&mut after).await;
            if outcome.is_ok() {
                crash_point(after.phase);
            }
            if let Err(why) = &outcome {
                tracing::warn!(
                    bench = run.bench_id,
                    phase = after.phase.as_str(),
                    "cluster benchmark step failed: {why}"
                );
                after.failure.get_or_insert_with(|| why.clone());
            }
            after.phase = next(after.phase, after.failure.is_some() || outcome.is_err());
            after.warnings = warnings(&after);
            self.save_run(&mut run, after).await?;
        }
        self.announce_cluster_bench(&run).await;
        Ok(())
    }

    async fn save_run(&self, run: &mut ClusterRun, bench: ClusterBench) -> Result<(), DaemonError> {
        let now = now_ms();
        run.version = self.store.save_cluster_bench(run.bench_id, &bench, run.version, now).await?;
        run.bench = bench;
        run.updated_at = now;
        if run.bench.phase.is_finished() {
            run.finished_at.get_or_insert(now);
        }
        Ok(())
    }

    /// The action of `b`'s phase; what it measured goes into `b`.
    async fn carry_out_bench_phase(&self, b: &mut ClusterBench) -> Result<(), String> {
        match b.phase {
            ClusterPhase::Queued => {
                b.health = Some(self.may_bench(b).await.map_err(|e| e.to_string())?);
                Ok(())
            }
            ClusterPhase::Preparing => {
                if b.own_pool {
                    self.ceph.create_pool(&b.pool, b.pg_num).await.map_err(|e| e.to_string())?;
                }
                self.wait_pool_ready().await?;
                b.shape = Some(self.shape(&b.pool).await?);
                Ok(())
            }
            ClusterPhase::Write | ClusterPhase::Seq | ClusterPhase::Rand => {
                let pass = b.phase.pass().expect("a pass phase");
                let r =
                    self.ceph.rados_bench(&b.pool, pass, b.seconds, &b.run_name).await.map_err(|e| e.to_string())?;
                b.results.retain(|x| x.pass != pass);
                b.results.push(r);
                Ok(())
            }
            ClusterPhase::Cleaning => {
                // Both are safe to repeat: a cleanup of nothing, a delete of a missing pool, succeed.
                if b.own_pool {
                    self.ceph.delete_pool(&b.pool).await.map_err(|e| e.to_string())
                } else {
                    self.ceph.rados_cleanup(&b.pool, &b.run_name).await.map_err(|e| e.to_string())
                }
            }
            ClusterPhase::Done | ClusterPhase::Failed => Ok(()),
        }
    }

    async fn wait_pool_ready(&self) -> Result<(), String> {
        let start = Instant::now();
        loop {
            let state = self.ceph.state().await.map_err(|e| e.to_string())?;
            let unhealthy = state.unhealthy_pgs();
            if unhealthy.is_empty() {
                return Ok(());
            }
            if start.elapsed() > POOL_READY {
                let states: Vec<String> = unhealthy.iter().map(|(s, n)| format!("{n} {s}")).collect();
                return Err(format!(
                    "the PGs did not become active+clean within {} s: {}",
                    POOL_READY.as_secs(),
                    states.join(", ")
                ));
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    async fn shape(&self, pool: &str) -> Result<ClusterShape, String> {
        let state = self.ceph.state().await.map_err(|e| e.to_string())?;
        let info = self.ceph.pool(pool).await.map_err(|e| e.to_string())?.ok_or(format!("pool {pool} is gone"))?;
        let mut shape = ClusterShape { pool_size: info.size, pg_num: info.pg_num, ..Default::default() };
        let mut hosts = std::collections::BTreeSet::new();
        for o in state.osds.iter().filter(|o| o.up && o.is_in && !o.destroyed) {
            *shape.osds_by_class.entry(o.device_class.clone().unwrap_or_else(|| "none".into())).or_default() += 1;
            if let Some(h) = &o.crush_host {
                hosts.insert(h.clone());
            }
        }
        shape.hosts = hosts.len() as u32;
        Ok(shape)
    }

    async fn announce_cluster_bench(&self, run: &ClusterRun) {
        let subject = format!("cluster-bench-{}", run.bench_id);
        let b = &run.bench;
        if let Some(why) = &b.failure {
            let message = format!("cluster benchmark {} failed: {why}", run.bench_id);
            self.event(Level::Error, EventKind::BenchFailed, None, Some(&subject), message).await;
            return;
        }
        let each: Vec<String> =
            b.results.iter().map(|r| format!("{} {:.0} MB/s", r.pass.as_str(), r.bandwidth_mb_s)).collect();
        let message = format!("cluster benchmark {}: {}", run.bench_id, each.join(", "));
        self.event(Level::Info, EventKind::BenchFinished, None, Some(&subject), message).await;
    }

    pub async fn cluster_runs(&self, q: &ClusterRunQuery) -> Result<Vec<ClusterRun>, DaemonError> {
        Ok(self.store.cluster_benches(q.limit.unwrap_or(50).clamp(0, 10_000)).await?)
    }

    pub async fn cluster_run(&self, id: i64) -> Result<ClusterRun, DaemonError> {
        Ok(self.store.cluster_bench(id).await?)
    }

    pub async fn compare_cluster_runs(&self, a: i64, b: i64) -> Result<ClusterComparison, DaemonError> {
        let (ra, rb) = (self.store.cluster_bench(a).await?, self.store.cluster_bench(b).await?);
        let differences = match (&ra.bench.shape, &rb.bench.shape) {
            (Some(x), Some(y)) => shape_differences(x, y),
            _ => vec!["a run without a recorded cluster shape: the clusters cannot be compared".into()],
        };
        let passes = compare(&ra.bench.results, &rb.bench.results);
        Ok(ClusterComparison { a: ra, b: rb, passes, differences })
    }
}

/// See `daemon::crash`: `OSDKEEPER_CRASH_AFTER=bench-write` aborts after
/// the write pass ran and before it is recorded.
fn crash_point(phase: ClusterPhase) {
    let name = format!("bench-{}", phase.as_str());
    if crate::daemon::crash::armed(&name) {
        eprintln!("OSDKEEPER_CRASH_AFTER={name}: aborting after the {} phase, as a crash would", phase.as_str());
        std::process::abort();
    }
}
