//! `POST /api/v1/osds/removals/preview`: what removing OSDs together will
//! do, computed from the live cluster without changing it (`osd rm ...
//! --dry-run`).

use serde::{Deserialize, Serialize};

pub use crate::domain::drain_preview::{EtaSource, PgMove, PoolImpact, Receiver};

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
    /// What the ETA is computed from: the cluster's recovery now
    /// (`cluster_recovery`, while recovery is under way), else the drains
    /// osdkeeper watched lately (`recent_drains`); `none` without either,
    /// `nothing_to_move`.
    pub eta_source: EtaSource,
    /// The throughput the ETA assumes, in bytes per second.
    pub eta_bytes_per_s: Option<f64>,
    /// The same in words: where the throughput was observed, or why there is no estimate.
    pub eta_basis: String,
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
