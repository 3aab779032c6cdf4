//! `/api/v1/cluster/status`: the cluster's health as `ceph status` gives
//! it, for the dashboard's health strip.

use serde::{Deserialize, Serialize};

pub use crate::domain::cluster_health::{HealthCheck, Throughput};

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
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PgStateCount {
    pub state: String,
    pub count: i64,
}
