//! `POST /api/v1/osds/removals/preview`: what removing OSDs together will
//! do, computed from the live cluster without changing it (`osd rm ...
//! --dry-run`).

use serde::{Deserialize, Serialize};

pub use crate::domain::drain_preview::{PgMove, PoolImpact, Receiver};

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewBody {
    /// The OSDs to remove together.
    pub ids: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RemovalPreview {
    pub osds: Vec<u32>,
    /// Placement groups whose set of OSDs changes.
    pub pgs_to_move: usize,
    /// Bytes written to new places: each moving PG's bytes once per OSD it gains.
    pub bytes_to_move: u64,
    /// Seconds at the recovery throughput observed; null when none was observed.
    pub eta_s: Option<f64>,
    /// Where that throughput was observed, or why there is no estimate.
    pub eta_basis: Option<String>,
    /// OSDs that receive data, by id.
    pub receivers: Vec<Receiver>,
    pub pools: Vec<PoolImpact>,
    /// Why the removal could not finish; empty when it can.
    pub blockers: Vec<String>,
    /// Worth knowing, not a reason to refuse (an OSD passing nearfull).
    pub warnings: Vec<String>,
    /// `ceph osd ok-to-stop` for the OSDs, asked now.
    pub ok_to_stop: bool,
    /// Its answer in the cluster's words.
    pub ok_to_stop_message: String,
    pub nearfull_ratio: f64,
    pub backfillfull_ratio: f64,
    pub full_ratio: f64,
    /// Each moving PG: the OSDs it leaves and the ones it lands on.
    pub moves: Vec<PgMove>,
}
