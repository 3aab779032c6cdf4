//! `bench cluster`: `rados bench` write (`--no-cleanup`), then seq and
//! rand reads of what it wrote, on a test pool the daemon makes and
//! removes (or a given pool, refused while it holds other objects unless
//! asked), then its objects removed. Refused while the cluster is not
//! HEALTH_OK or a drain runs, unless forced; checked again when it starts.
//!
//! A run is an operation on the kernel: each phase's action is logged as
//! an intent before it runs and completed after; one a restart cut off is
//! found without an outcome (`domain::bench::cluster::interrupted`): a
//! pass is not run twice, the cleanup always runs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Benchmarks;
use crate::clock::now_ms;
use crate::daemon::operations::{Executor, Flow, OperationKind};
use crate::daemon::{audit, DaemonError, Pace};
use crate::domain::bench::cluster::{
    advance, apply, interrupted, new_run, own_pool_name, pool_not_ready, BenchEffect, BenchOutput, BenchStep,
    ClusterBench, ClusterShape,
};
use crate::domain::bench::compare::{compare, shape_differences};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{record, NewOperation, Operation, Outcome, Recorded};
use crate::store::{BenchCodec, RemovalCodec};
use crate::wire::api::bench::{ClusterBenchBody, ClusterComparison, ClusterRun, ClusterRunQuery};

/// How long a new pool's PGs may take to become active+clean.
const POOL_READY: Duration = Duration::from_secs(120);

/// How long a run waits as it starts for the cluster to be as it was when
/// the run was asked for (HEALTH_OK, no drain).
const START_GRACE: Duration = Duration::from_secs(60);

/// The subject of every cluster benchmark: one runs at a time.
const SUBJECT: &str = "cluster";

impl Benchmarks {
    /// Checks the request and the cluster, stores the run, wakes the worker.
    pub async fn schedule_cluster_bench(&self, body: &ClusterBenchBody) -> Result<ClusterRun, DaemonError> {
        let bench = new_run(body.pool.clone(), body.seconds, body.pg_num, body.label.clone(), body.force)
            .map_err(DaemonError::Invalid)?;
        if let Some(active) = self.store.ops::<BenchCodec>().active_on(SUBJECT).await? {
            return Err(DaemonError::Conflict(format!(
                "cluster benchmark {} is already running ({})",
                active.number,
                active.state.phase.as_str()
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
        let new = NewOperation { subject: SUBJECT.into(), host: None, state: bench, actor: audit::actor() };
        let fill = |number: i64, b: &mut ClusterBench| {
            if b.own_pool {
                b.pool = own_pool_name(number);
            }
            b.run_name = format!("osdkeeper-bench-{number}");
        };
        let busy = |_: &str| "a cluster benchmark is already running".to_string();
        let op = self.store.ops::<BenchCodec>().add(&[new], now_ms(), busy, fill).await?.remove(0);
        let b = &op.state;
        let what = b.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
        self.events
            .record(
                Level::Info,
                EventKind::BenchRequested,
                None,
                Some(&format!("cluster-bench-{}", op.number)),
                format!(
                    "Queued cluster benchmark {}{what}: rados bench write, seq, rand of {} s each on pool {}",
                    op.number, b.seconds, b.pool
                ),
            )
            .await;
        self.worker.wake();
        Ok(cluster_run(op, false))
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
            .ops::<RemovalCodec>()
            .active()
            .await?
            .into_iter()
            .filter(|r| r.state.phase.is_draining())
            .map(|r| format!("osd.{}", r.state.osd_id))
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
    pub(super) async fn run_cluster_bench(self: &Arc<Self>) -> Result<Pace, DaemonError> {
        let kind = BenchKind { b: self.clone() };
        Executor::new(kind, self.store.clone(), self.backoff).round().await
    }

    /// The action of a phase; what it measured or found.
    async fn carry_out_bench(&self, b: &ClusterBench, effect: BenchEffect) -> Result<BenchOutput, String> {
        match effect {
            BenchEffect::Check => Ok(BenchOutput::Health(self.may_start(b).await?)),
            BenchEffect::PreparePool => {
                if b.own_pool {
                    self.ceph.create_pool(&b.pool, b.pg_num, "rados").await.map_err(|e| e.to_string())?;
                }
                self.wait_pool_ready(&b.pool).await?;
                Ok(BenchOutput::Shape(self.shape(&b.pool).await?))
            }
            BenchEffect::Pass(pass) => {
                let r =
                    self.ceph.rados_bench(&b.pool, pass, b.seconds, &b.run_name).await.map_err(|e| e.to_string())?;
                Ok(BenchOutput::Pass(r))
            }
            BenchEffect::CleanUp => {
                // Both are safe to repeat: a cleanup of nothing, a delete of a missing pool, succeed.
                if b.own_pool {
                    self.ceph.delete_pool(&b.pool).await.map_err(|e| e.to_string())?;
                } else {
                    self.ceph.rados_cleanup(&b.pool, &b.run_name).await.map_err(|e| e.to_string())?;
                }
                Ok(BenchOutput::CleanedUp)
            }
        }
    }

    /// `may_bench` again as the run starts: a warning that came after the
    /// run was asked for (a slow heartbeat, a slow op on a loaded host) is
    /// given `START_GRACE` to clear before the run fails with it.
    async fn may_start(&self, b: &ClusterBench) -> Result<String, String> {
        let start = Instant::now();
        loop {
            match self.may_bench(b).await {
                Ok(health) => return Ok(health),
                Err(DaemonError::CannotAct(why)) if start.elapsed() < START_GRACE => {
                    tracing::info!("cluster benchmark waits to start: {why}");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Until the pool's PGs are all listed, active and clean, and none is
    /// degraded in the cluster (`pool_not_ready`).
    async fn wait_pool_ready(&self, pool: &str) -> Result<(), String> {
        let start = Instant::now();
        let info = self.ceph.pool(pool).await.map_err(|e| e.to_string())?.ok_or(format!("pool {pool} is gone"))?;
        loop {
            let (state, pgs) =
                tokio::try_join!(self.ceph.state(), self.ceph.pool_pg_states(pool)).map_err(|e| e.to_string())?;
            let Some(why) = pool_not_ready(&pgs, info.pg_num, &state.unhealthy_pgs()) else {
                return Ok(());
            };
            if start.elapsed() > POOL_READY {
                return Err(format!(
                    "pool {pool}'s PGs did not become active+clean within {} s: {why}",
                    POOL_READY.as_secs()
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

    async fn announce_cluster_bench(&self, run: &Operation<ClusterBench>) {
        let subject = format!("cluster-bench-{}", run.number);
        let b = &run.state;
        if let Some(why) = &b.failure {
            let message = format!("cluster benchmark {} failed: {why}", run.number);
            self.events.record(Level::Error, EventKind::BenchFailed, None, Some(&subject), message).await;
            return;
        }
        let each: Vec<String> =
            b.results.iter().map(|r| format!("{} {:.0} MB/s", r.pass.as_str(), r.bandwidth_mb_s)).collect();
        let message = format!("cluster benchmark {}: {}", run.number, each.join(", "));
        self.events.record(Level::Info, EventKind::BenchFinished, None, Some(&subject), message).await;
    }

    pub async fn cluster_runs(&self, q: &ClusterRunQuery) -> Result<Vec<ClusterRun>, DaemonError> {
        let ops = self.store.ops::<BenchCodec>().latest(q.limit.unwrap_or(50).clamp(0, 10_000)).await?;
        self.cluster_runs_of(ops).await
    }

    pub async fn cluster_run(&self, number: i64) -> Result<ClusterRun, DaemonError> {
        let op = self.store.ops::<BenchCodec>().get(number).await?;
        Ok(self.cluster_runs_of(vec![op]).await?.remove(0))
    }

    /// The runs as the API shows them, with whether a phase's action is under way.
    async fn cluster_runs_of(&self, ops: Vec<Operation<ClusterBench>>) -> Result<Vec<ClusterRun>, DaemonError> {
        let ids: Vec<i64> = ops.iter().filter(|o| !o.state.phase.is_finished()).map(|o| o.id).collect();
        let acting = self.store.ops::<BenchCodec>().acting(&ids).await?;
        Ok(ops.into_iter().map(|o| cluster_run(o.clone(), acting.contains(&o.id))).collect())
    }

    pub async fn compare_cluster_runs(&self, a: i64, b: i64) -> Result<ClusterComparison, DaemonError> {
        let ops = self.store.ops::<BenchCodec>();
        let (oa, ob) = (ops.get(a).await?, ops.get(b).await?);
        let (xa, xb) = (oa.state.clone(), ob.state.clone());
        let mut runs = self.cluster_runs_of(vec![oa, ob]).await?.into_iter();
        let (ra, rb) = (runs.next().expect("two runs in"), runs.next().expect("two runs in"));
        let differences = match (&xa.shape, &xb.shape) {
            (Some(x), Some(y)) => shape_differences(x, y),
            _ => vec!["a run without a recorded cluster shape: the clusters cannot be compared".into()],
        };
        let passes = compare(&xa.results, &xb.results).into_iter().map(Into::into).collect();
        Ok(ClusterComparison { a: ra, b: rb, passes, differences })
    }
}

/// A run as the API shows it.
fn cluster_run(op: Operation<ClusterBench>, in_flight: bool) -> ClusterRun {
    ClusterRun {
        bench_id: op.number,
        created_at: op.created_at,
        updated_at: op.updated_at,
        finished_at: op.finished_at,
        actor: op.actor,
        version: op.version,
        in_flight,
        bench: op.state.into(),
    }
}

/// The cluster benchmark kind, as the executor drives it.
pub struct BenchKind {
    b: Arc<Benchmarks>,
}

impl OperationKind for BenchKind {
    type Codec = BenchCodec;
    type State = ClusterBench;
    type Effect = BenchEffect;
    type Output = BenchOutput;
    type Round = ();
    type Observation = ();

    async fn begin_round(&self, _active: &[Operation<ClusterBench>]) -> Result<(), DaemonError> {
        Ok(())
    }

    async fn observe(&self, _op: &Operation<ClusterBench>, _round: &mut ()) {}

    fn advance(&self, op: &Operation<ClusterBench>, _obs: &(), _now: i64) -> BenchStep {
        advance(&op.state)
    }

    fn record(
        &self,
        op: &Operation<ClusterBench>,
        step: &BenchStep,
        _obs: &(),
        _round: &mut (),
        now: i64,
    ) -> Recorded<ClusterBench> {
        record(op, step, now, |a, b| a != b)
    }

    async fn after_step(
        &self,
        _before: &Operation<ClusterBench>,
        _after: &Operation<ClusterBench>,
        _step: &BenchStep,
        _obs: &(),
    ) {
    }

    fn detail(&self, op: &Operation<ClusterBench>, effect: &BenchEffect) -> String {
        let b = &op.state;
        match effect {
            BenchEffect::Check => "check the cluster's health and drains".into(),
            BenchEffect::PreparePool if b.own_pool => format!("ceph osd pool create {} {}", b.pool, b.pg_num),
            BenchEffect::PreparePool => format!("wait for pool {}", b.pool),
            BenchEffect::Pass(p) => {
                format!("rados bench -p {} {} {} --run-name {}", b.pool, b.seconds, p.as_str(), b.run_name)
            }
            BenchEffect::CleanUp if b.own_pool => format!("ceph osd pool delete {}", b.pool),
            BenchEffect::CleanUp => format!("rados -p {} cleanup --run-name {}", b.pool, b.run_name),
        }
    }

    async fn perform(&self, op: &Operation<ClusterBench>, effect: &BenchEffect) -> Outcome<BenchOutput> {
        match self.b.carry_out_bench(&op.state, *effect).await {
            Ok(out) => Outcome::Done(out),
            Err(why) => Outcome::Failed(why),
        }
    }

    fn done_detail(&self, output: &BenchOutput) -> (String, Option<String>) {
        let text = match output {
            BenchOutput::Health(h) => format!("the cluster is {h}"),
            BenchOutput::Shape(s) => format!("pool ready; {} hosts", s.hosts),
            BenchOutput::Pass(r) => format!("{} {:.0} MB/s", r.pass.as_str(), r.bandwidth_mb_s),
            BenchOutput::CleanedUp => "cleaned up".into(),
        };
        (text, None)
    }

    fn apply(
        &self,
        op: &Operation<ClusterBench>,
        _effect: &BenchEffect,
        outcome: &Outcome<BenchOutput>,
        _now: i64,
    ) -> ClusterBench {
        apply(&op.state, outcome)
    }

    async fn after_effect(
        &self,
        before: &Operation<ClusterBench>,
        after: &Operation<ClusterBench>,
        _effect: &BenchEffect,
        _outcome: &Outcome<BenchOutput>,
        _round: &mut (),
    ) -> Flow {
        if after.state.phase.is_finished() && !before.state.phase.is_finished() {
            self.b.announce_cluster_bench(after).await;
        }
        // The next phase follows at once: a run goes from start to end in one round.
        Flow::Continue
    }

    fn interrupted(&self, state: &ClusterBench, effect: &BenchEffect) -> ClusterBench {
        interrupted(state.clone(), *effect)
    }

    async fn after_interrupted(&self, _before: &Operation<ClusterBench>, after: &Operation<ClusterBench>) {
        if let Some(why) = &after.state.failure {
            let subject = format!("cluster-bench-{}", after.number);
            self.b.events.record(Level::Warning, EventKind::BenchFailed, None, Some(&subject), why.clone()).await;
        }
    }

    async fn end_round(&self, _round: Option<()>, _active: &[Operation<ClusterBench>]) {}
}
