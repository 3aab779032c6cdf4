//! Error answers (every failure is `{"error": "..."}`; invalid spec
//! documents add one entry per error), and `/healthz`.

use serde::{Deserialize, Serialize};

use super::preview::SpecErrorJson;

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What was wrong, naming the field and value where there is one.
    pub error: String,
    /// For invalid spec documents (422): each error with its document and line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SpecErrorJson>,
}

/// `/healthz`: `{"status": "ok", ...}` while the daemon runs, with or
/// without a cluster; `ceph` says whether the cluster answered.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Health {
    pub status: String,
    pub ceph: CephHealth,
}

/// Whether the Ceph cluster answered when last asked (at start, then by
/// the summary, the OSD list and the workers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CephHealth {
    pub connected: bool,
    /// When it was last asked (ms since the epoch); null before the first time.
    pub checked_at: Option<i64>,
    /// Why it did not answer.
    pub error: Option<String>,
}
