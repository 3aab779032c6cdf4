//! `/api/v1/cluster/status`: the cluster's health as `ceph status` gives
//! it, for the dashboard's health strip.

use serde::{Deserialize, Serialize};

mirror! {
    /// One health check (`OSD_DOWN`, `PG_DEGRADED`, ...), as Ceph gives it.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct HealthCheck = crate::domain::cluster_health::HealthCheck {
        /// Ceph's code, e.g. `OSD_DOWN`.
        pub code: String,
        /// `HEALTH_WARN` or `HEALTH_ERR`.
        pub severity: String,
        /// Ceph's one-line summary, e.g. "1 osds down".
        pub message: String,
        pub count: i64,
        /// Muted with `ceph health mute`: listed, but it does not make the status.
        pub muted: bool,
    }
}

mirror! {
    /// Rates `ceph status` reports; each null when the cluster does not
    /// report it (idle).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Throughput = crate::domain::cluster_health::Throughput {
        pub recovery_bytes_per_sec: Option<f64>,
        pub recovery_objects_per_sec: Option<f64>,
        pub client_read_bytes_per_sec: Option<f64>,
        pub client_write_bytes_per_sec: Option<f64>,
        pub client_read_ops_per_sec: Option<f64>,
        pub client_write_ops_per_sec: Option<f64>,
    }
}

carry_pairs!(crate::domain::cluster_health::HealthCheck => HealthCheck);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ClusterStatus {
    /// `HEALTH_OK`, `HEALTH_WARN` or `HEALTH_ERR`; null when the cluster could not be read.
    pub health: Option<String>,
    /// Errors first, then warnings; muted ones last.
    pub checks: Vec<HealthCheck>,
    pub pgs: i64,
    /// PG states, most PGs first, as `ceph -s` lists them.
    pub pg_states: Vec<PgStateCount>,
    /// PGs not active+clean.
    pub pgs_not_clean: i64,
    /// `ceph -s`'s object lines, in its words: "742/4000 objects degraded (18.550%)".
    pub object_lines: Vec<String>,
    pub degraded_ratio: Option<f64>,
    pub misplaced_ratio: Option<f64>,
    /// Recovery and client rates, at the top level of the answer.
    #[serde(flatten)]
    pub throughput: Throughput,
    /// When the cluster was read (ms since the epoch); reads are shared for a few seconds.
    pub read_at: Option<i64>,
    /// Why the cluster could not be read.
    pub error: Option<String>,
    /// The Ceph releases its daemons run, as `/healthz` lists them.
    #[serde(default)]
    pub releases: Vec<super::error::RunningRelease>,
    /// The daemon's own warnings, as `/healthz` lists them (the strip shows
    /// them beside Ceph's checks).
    #[serde(default)]
    pub warnings: Vec<super::error::HealthWarning>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PgStateCount {
    pub state: String,
    pub count: i64,
}
