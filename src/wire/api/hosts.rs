//! `/api/v1/hosts`.

use serde::{Deserialize, Serialize};

use crate::store::ManagedHost;

/// A managed host and the state of its agent's polls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Host {
    pub name: String,
    /// host:port of its agent.
    pub addr: String,
    pub labels: Vec<String>,
    pub added_at: i64,
    /// Since when polls fail (ms since the epoch), if they do.
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub consecutive_failures: i64,
    pub next_poll_at: i64,
    /// The release of the Ceph whose ceph-volume lists its devices, as its
    /// agent last reported it (`18.2.7 (reef)`); null when the agent could
    /// not tell (an inventory file, the kernel's view) or has not answered.
    #[serde(default)]
    pub ceph_release: Option<String>,
    /// Set when that release is of a major the cluster runs nowhere: why
    /// (`ceph-volume is Ceph 18.2.7 (reef), the cluster runs 16 pacific`).
    #[serde(default)]
    pub release_mismatch: Option<String>,
}

impl From<ManagedHost> for Host {
    fn from(h: ManagedHost) -> Host {
        Host {
            name: h.name,
            addr: h.addr,
            labels: h.labels,
            added_at: h.added_at,
            unreachable_since: h.unreachable_since,
            last_error: h.last_error,
            consecutive_failures: h.consecutive_failures,
            next_poll_at: h.next_poll_at,
            ceph_release: None,
            release_mismatch: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddHost {
    /// Host name (letters, digits, '-' and '.').
    pub name: String,
    /// HOST:PORT of the host's agent.
    pub addr: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// Add it without asking its agent first (by default the agent must
    /// answer, accept the agent token and report this host name).
    #[serde(default)]
    pub no_check: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelBody {
    pub label: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct HostQuery {
    /// true: only the hosts whose agent does not answer; false: only the others.
    pub unreachable: Option<bool>,
    /// Page through the hosts (in the order they were added): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

/// `POST /api/v1/hosts/{name}/drain/preview`: what draining the host would do.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HostDrainPreviewBody {
    /// Say what wiping each OSD's devices would do (`zaps`).
    #[serde(default)]
    pub zap_osd_devices: bool,
}

/// `POST /api/v1/hosts/{name}/drain`: remove every OSD of the host.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HostDrainBody {
    /// Wipe each OSD's devices once it is purged (they are then held back from specs).
    #[serde(default)]
    pub zap_osd_devices: bool,
    /// Drain even when the removal preview finds blockers; they are recorded.
    #[serde(default)]
    pub ignore_preview_blockers: bool,
    /// Raise recovery while the host's OSDs drain (as `osd rm --fast`), put
    /// back when the last fast drain ends or is stopped. Asked again on a
    /// host already draining, it makes the host's removals still running fast.
    #[serde(default)]
    pub fast: bool,
}

/// `DELETE /api/v1/hosts/{name}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct RemoveHostQuery {
    /// Forget the host although Ceph still has OSDs on it (they are not touched).
    #[serde(default)]
    pub forget_osds: bool,
}

/// A host's drain: its removals and their totals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostDrainStatus {
    pub host: String,
    /// Whether the host carries `_no_schedule` (specs skip it).
    pub no_schedule: bool,
    /// OSDs Ceph still has under this host (destroyed ones left out).
    pub osds_in_cluster: Vec<u32>,
    /// The host's removals not finished yet.
    pub removals: Vec<super::osds::RemovalStatus>,
    pub totals: HostDrainTotals,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostDrainTotals {
    pub removals: usize,
    /// Removals still draining or waiting to.
    pub draining: usize,
    /// PGs still on the host's draining OSDs, and at their start.
    pub pgs_left: i64,
    pub pgs_at_start: i64,
    /// Bytes still to move off the host's draining OSDs (as `osd rm status`'s
    /// DATA LEFT: the PG stats of the PGs still on them).
    pub bytes_left: f64,
    /// When the last of them is expected to finish draining (the largest ETA).
    pub eta_s: Option<f64>,
}

/// `POST /api/v1/hosts/{name}/drain/stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostDrainStop {
    pub host: String,
    /// Removals stopped: their weights are put back.
    pub stopped: Vec<u32>,
    /// Removals already past the point of no return (stopped daemon, purge, zap): they finish.
    pub continuing: Vec<u32>,
    /// Whether `_no_schedule` was taken off again.
    pub no_schedule_removed: bool,
}
