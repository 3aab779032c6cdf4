//! `/api/v1/benchmarks`: per-OSD benches (`ceph tell osd.N bench`) with
//! the outliers among comparable OSDs, and cluster benchmarks
//! (`rados bench`) with their history and comparisons.

use serde::{Deserialize, Serialize};

use crate::domain::bench::cluster::{ClusterPhase, Pass};

mirror! {
    /// What one pass measured (`rados bench ... -f json`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct PassResult = crate::domain::bench::cluster::PassResult {
        pub pass: Pass,
        /// How long it ran (`total_time_run`).
        pub seconds: f64,
        /// Objects written or read.
        pub ops: u64,
        pub op_size: u64,
        /// Ceph's MB/s (MiB per second).
        pub bandwidth_mb_s: f64,
        pub iops: f64,
        pub avg_latency_s: f64,
        pub max_latency_s: f64,
        pub min_latency_s: f64,
    }
}

mirror! {
    /// The cluster when the benchmark ran: what a later run must match to be
    /// comparable.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct ClusterShape = crate::domain::bench::cluster::ClusterShape {
        /// OSDs up and in, by device class ("hdd": 6).
        pub osds_by_class: std::collections::BTreeMap<String, u32>,
        pub hosts: u32,
        /// The test pool's replica count and placement groups.
        pub pool_size: u32,
        pub pg_num: u32,
    }
}

mirror! {
    /// A benchmark run and where it is.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct ClusterBench = crate::domain::bench::cluster::ClusterBench {
        pub pool: String,
        /// The daemon made the pool (and removes it); false for a given pool,
        /// where only the benchmark's own objects are removed.
        pub own_pool: bool,
        pub seconds: u32,
        pub pg_num: u32,
        pub label: Option<String>,
        /// Run although the cluster is not HEALTH_OK or a drain runs.
        pub force: bool,
        /// `rados bench --run-name`: names this run's objects, for seq, rand
        /// and the cleanup.
        pub run_name: String,
        pub phase: ClusterPhase,
        /// The cluster's health when the run started.
        pub health: Option<String>,
        pub shape: Option<ClusterShape>,
        pub results: Vec<PassResult>,
        pub warnings: Vec<String>,
        pub failure: Option<String>,
    }
}

mirror! {
    /// One figure of two runs side by side.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Metric = crate::domain::bench::compare::Metric {
        pub name: String,
        pub a: Option<f64>,
        pub b: Option<f64>,
        /// (b - a) / a in percent; null when either is missing or a is 0.
        pub change_percent: Option<f64>,
    }
}

mirror! {
    /// One pass of two runs compared.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct PassComparison = crate::domain::bench::compare::PassComparison {
        pub pass: Pass,
        pub metrics: Vec<Metric>,
    }
}

carry_pairs!(
    crate::domain::bench::cluster::PassResult => PassResult,
    crate::domain::bench::cluster::ClusterShape => ClusterShape,
    crate::domain::bench::compare::Metric => Metric,
    crate::domain::bench::compare::PassComparison => PassComparison,
);
use crate::store;

/// Where a bench is: stored before each change, so a restart finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BenchState {
    Queued,
    Running,
    Done,
    Failed,
}

impl BenchState {
    pub fn as_str(self) -> &'static str {
        match self {
            BenchState::Queued => "queued",
            BenchState::Running => "running",
            BenchState::Done => "done",
            BenchState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<BenchState> {
        [BenchState::Queued, BenchState::Running, BenchState::Done, BenchState::Failed]
            .into_iter()
            .find(|b| b.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, BenchState::Done | BenchState::Failed)
    }
}

impl From<store::BenchState> for BenchState {
    fn from(s: store::BenchState) -> BenchState {
        match s {
            store::BenchState::Queued => BenchState::Queued,
            store::BenchState::Running => BenchState::Running,
            store::BenchState::Done => BenchState::Done,
            store::BenchState::Failed => BenchState::Failed,
        }
    }
}

/// `POST /api/v1/benchmarks/osds`: the OSDs to bench, or all of them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OsdBenchBody {
    #[serde(default)]
    pub ids: Vec<u32>,
    /// Every OSD that is up (instead of `ids`).
    #[serde(default)]
    pub all: bool,
    /// Bytes each OSD writes [default: 1 GiB, as Ceph's].
    #[serde(default)]
    pub bytes: Option<u64>,
    /// Size of each write [default: 4 MiB].
    #[serde(default)]
    pub block_size: Option<u64>,
}

/// Which OSD a bench runs on, where, how much it writes, and what makes
/// the OSD comparable to others (as Ceph reported it when it was asked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OsdBenchTarget {
    pub osd_id: u32,
    /// The host it runs on: at most one bench per host at a time.
    pub host: String,
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub bytes: u64,
    pub block_size: u64,
}

impl From<store::BenchTarget> for OsdBenchTarget {
    fn from(t: store::BenchTarget) -> OsdBenchTarget {
        OsdBenchTarget {
            osd_id: t.osd_id,
            host: t.host,
            device_class: t.device_class,
            size_bytes: t.size_bytes,
            model: t.model,
            bytes: t.bytes,
            block_size: t.block_size,
        }
    }
}

/// One per-OSD bench: asked, running, or with its result. As stored,
/// except `outlier`, which is worked out when it is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OsdBench {
    pub bench_id: i64,
    #[serde(flatten)]
    pub target: OsdBenchTarget,
    pub state: BenchState,
    pub requested_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub bytes_per_sec: Option<f64>,
    pub iops: Option<f64>,
    pub elapsed_s: Option<f64>,
    pub error: Option<String>,
    /// Why this OSD is much slower than comparable ones, if it is
    /// (only on the latest result of each OSD).
    pub outlier: Option<String>,
}

impl From<store::OsdBenchRow> for OsdBench {
    fn from(b: store::OsdBenchRow) -> OsdBench {
        OsdBench {
            bench_id: b.bench_id,
            target: b.target.into(),
            state: b.state.into(),
            requested_at: b.requested_at,
            started_at: b.started_at,
            finished_at: b.finished_at,
            bytes_per_sec: b.bytes_per_sec,
            iops: b.iops,
            elapsed_s: b.elapsed_s,
            error: b.error,
            outlier: None,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct OsdBenchQuery {
    /// Every bench of the last ones (default: only the latest of each OSD).
    pub history: Option<i64>,
}

/// `POST /api/v1/benchmarks/cluster`: a `rados bench` run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterBenchBody {
    /// A pool to run in [default: a test pool made for the run and removed after it].
    #[serde(default)]
    pub pool: Option<String>,
    /// Seconds per pass (write, seq, rand) [default: 60].
    #[serde(default)]
    pub seconds: Option<u32>,
    /// Placement groups of the test pool [default: 32].
    #[serde(default)]
    pub pg_num: Option<u32>,
    /// Words to find the run by later ("before the disk swap").
    #[serde(default)]
    pub label: Option<String>,
    /// Run although the cluster is not HEALTH_OK or a drain runs.
    #[serde(default)]
    pub force: bool,
    /// Write into a given pool that already holds objects (only the
    /// benchmark's own objects are removed after).
    #[serde(default)]
    pub allow_pool_with_data: bool,
}

/// A cluster benchmark as stored: its request, phase, shape and results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClusterRun {
    pub bench_id: i64,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    /// The token that asked.
    pub actor: Option<String>,
    /// Bumped by each stored change (optimistic concurrency).
    pub version: i64,
    /// A phase's action was started and its outcome is not recorded yet.
    #[serde(default)]
    pub in_flight: bool,
    #[serde(flatten)]
    pub bench: ClusterBench,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct ClusterRunQuery {
    /// At most this many runs, newest first [default: 50].
    pub limit: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct CompareQuery {
    /// The earlier run...
    pub a: i64,
    /// ...and the later one: changes are from `a` to `b`.
    pub b: i64,
}

/// Two runs side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClusterComparison {
    pub a: ClusterRun,
    pub b: ClusterRun,
    pub passes: Vec<PassComparison>,
    /// How the clusters differed (OSDs per class, hosts, pool size, PGs).
    pub differences: Vec<String>,
}
