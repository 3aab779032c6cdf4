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
    /// What the daemon itself warns about, as Ceph lists its health checks
    /// (`OSDKEEPER_CEPH_VOLUME_RELEASE`: hosts whose ceph-volume is of a
    /// major release the cluster does not run); empty when all is well.
    #[serde(default)]
    pub warnings: Vec<HealthWarning>,
}

/// `/healthz` of a standby (503): it waits for the database's lock, which
/// the leader holds; `leader` is the leader's own record, when it wrote one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct StandbyHealth {
    /// `standby`.
    pub status: String,
    /// The database every daemon of the set opens (`ceph:POOL/NAMESPACE/NAME`).
    pub db: String,
    pub leader: Option<crate::wire::leader::LeaderRecord>,
    /// One line: what this daemon waits for and where to go instead.
    pub message: String,
}

/// One warning of the daemon's, shaped as a Ceph health check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HealthWarning {
    /// e.g. `OSDKEEPER_CEPH_VOLUME_RELEASE`.
    pub code: String,
    /// `HEALTH_WARN`.
    pub severity: String,
    /// One line, as `ceph health`'s summary.
    pub message: String,
    /// One line per host or item, as `ceph health detail`.
    pub detail: Vec<String>,
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
    /// The Ceph releases its daemons run, oldest first (`ceph versions`,
    /// read at start and then every few minutes); two or more while the
    /// cluster is upgraded; empty until read.
    #[serde(default)]
    pub releases: Vec<RunningRelease>,
}

/// One release the cluster's daemons run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunningRelease {
    /// As Ceph prints it: `18.2.7`.
    pub version: String,
    /// `pacific`, `quincy`, `reef`, `squid` or `tentacle`.
    pub release: String,
    /// 16 to 20.
    pub major: u32,
    /// How many daemons run it.
    pub daemons: u64,
}
