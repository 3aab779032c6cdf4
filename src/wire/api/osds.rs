//! `/api/v1/osds`: OSDs, their removal, and its progress.

use serde::{Deserialize, Serialize};

use crate::domain::progress::DrainSample;
use crate::domain::removal::Phase;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OsdRow {
    pub id: u32,
    pub host: Option<String>,
    pub crush_weight: Option<f64>,
    pub up: bool,
    #[serde(rename = "in")]
    pub is_in: bool,
    pub destroyed: bool,
    pub pgs: Option<i64>,
    pub devices: Vec<String>,
    /// The state of its removal, if one is under way.
    pub removal: Option<Phase>,
    /// Its latest `bench osds` result, in bytes per second.
    #[serde(default)]
    pub bench_bytes_per_sec: Option<f64>,
    /// Why it is much slower than comparable OSDs, if it is.
    #[serde(default)]
    pub bench_outlier: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct OsdQuery {
    /// Only OSDs matching this text (case-insensitive): `osd.N` or `N` is that
    /// OSD; any other text is part of its host name or of one of its device paths.
    pub q: Option<String>,
    /// Only the OSDs on this host (exact name).
    pub host: Option<String>,
    /// Page through the OSDs (by id): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveBody {
    pub ids: Vec<u32>,
    /// Destroy instead of purge: the id is kept for the replacement disk.
    #[serde(default)]
    pub replace: bool,
    /// Do not wait for the OSD to hold no placement groups (safe-to-destroy is still required).
    #[serde(default)]
    pub force: bool,
    /// Wipe the OSD's devices afterwards.
    #[serde(default)]
    pub zap: bool,
    /// Recover faster while it drains; the recovery settings are put back
    /// when the last fast drain ends or is stopped.
    #[serde(default)]
    pub fast: bool,
    /// Remove even when the preview finds blockers (PGs left without a place,
    /// an OSD pushed past backfillfull) or cannot be computed; the blockers
    /// ignored are kept in the removal's record and event.
    #[serde(default)]
    pub ignore_preview_blockers: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdsBody {
    pub ids: Vec<u32>,
}

/// One removal as `osd rm status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RemovalStatus {
    pub removal_id: i64,
    pub osd_id: u32,
    pub host: String,
    pub state: Phase,
    /// The gate it waits on and why, in the cluster's words.
    pub waiting_on: Option<String>,
    pub last_error: Option<String>,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
    /// Recovery is raised while it drains (`osd rm --fast`).
    #[serde(default)]
    pub fast: bool,
    /// The preview's blockers this removal was told to ignore.
    #[serde(default)]
    pub ignored_blockers: Vec<String>,
    pub stop_requested: bool,
    pub devices: Vec<String>,
    pub pgs_at_start: Option<i64>,
    pub pgs_now: Option<i64>,
    /// PGs leaving per minute, smoothed (shown; the ETA uses bytes where known).
    pub pgs_per_min: Option<f64>,
    /// Seconds to the end of the drain from its latest sample, at the
    /// smoothed rate; null while stalled, or without a rate yet.
    pub eta_s: Option<f64>,
    /// What the ETA counts: "bytes" (still to move) or "pgs" (where the
    /// bytes could not be read).
    #[serde(default)]
    pub eta_basis: Option<String>,
    /// Space the OSD uses (`osd df`).
    pub bytes_now: Option<f64>,
    /// Bytes still to move off it.
    #[serde(default)]
    pub bytes_left: Option<f64>,
    /// The rate `bytes_left` falls at, smoothed.
    pub bytes_per_s: Option<f64>,
    /// Set when the remaining data has not fallen for `removal.stall_after_s`.
    #[serde(default)]
    pub stalled: Option<Stalled>,
    pub requested_at: i64,
    pub drain_started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub note: Option<String>,
}

/// A drain that stopped making progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Stalled {
    /// Since when (ms since the epoch) the remaining data has not fallen.
    pub since: i64,
    /// The cluster's reason, when it gives one ("3 PGs backfill_toofull").
    pub reason: Option<String>,
}

/// A progress sample of a drain, from the stored samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Sample {
    pub at: i64,
    pub pgs: i64,
    pub kb_used: Option<i64>,
    /// Bytes still to move off the OSD (PG stats of the PGs still mapped
    /// to it); absent in samples taken before they were read.
    #[serde(default)]
    pub bytes_left: Option<i64>,
    /// Why the cluster held its PGs back then, in its words, if it said.
    #[serde(default)]
    pub blocked: Option<String>,
}

impl From<Sample> for DrainSample {
    fn from(s: Sample) -> DrainSample {
        DrainSample { at: s.at, pgs: s.pgs, bytes_left: s.bytes_left.map(|b| b.max(0) as u64), blocked: s.blocked }
    }
}

/// One action of a removal, logged before it was issued, from the action log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ActionRecord {
    pub id: i64,
    pub removal_id: i64,
    pub osd_id: i64,
    /// The effect as JSON, e.g. {"effect": "purge"}.
    pub effect: String,
    pub destructive: bool,
    pub issued_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RemovalDetail {
    #[serde(flatten)]
    pub status: RemovalStatus,
    /// Oldest first; with `samples_after`, only the newer ones.
    pub samples: Vec<Sample>,
    pub actions: Vec<ActionRecord>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct StatusQuery {
    /// How many finished removals to include (default 20).
    pub history: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct DetailQuery {
    /// Only the samples taken after this time (ms since the epoch, exclusive):
    /// the `at` of the last sample a client holds.
    pub samples_after: Option<i64>,
}
