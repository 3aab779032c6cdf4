//! `/api/v1/devices`: every host's devices as its agent last reported them,
//! devices held back from specs, and wiping one.

use serde::{Deserialize, Serialize};

use crate::store::HeldDevice;

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct DeviceQuery {
    /// Only this host.
    pub host: Option<String>,
    /// Poll the host(s) first (waits for their agents, within the poll timeout).
    #[serde(default)]
    pub refresh: bool,
    /// Only hosts whose name contains this text.
    pub q: Option<String>,
    /// Page through hosts (in the order they were added): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct InventoryInfo {
    pub taken_at: i64,
    pub age_s: f64,
    /// ceph-volume, kernel or file.
    pub source: String,
    pub can_create_osds: bool,
    pub note: Option<String>,
    /// The release of ceph-volume's Ceph, as the agent reported it (`18.2.7 (reef)`).
    #[serde(default)]
    pub ceph_release: Option<String>,
}

/// One device as `device ls` shows it (cephadm's columns and more).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeviceRow {
    pub path: String,
    /// hdd, ssd or unknown (cephadm's human_readable_type).
    #[serde(rename = "type")]
    pub kind: String,
    pub device_id: String,
    pub size_bytes: Option<f64>,
    pub human_readable_size: Option<String>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub available: bool,
    pub rejected_reasons: Vec<String>,
    /// Why osdkeeper holds this device back from every spec, if it does.
    pub held: Option<String>,
    /// Why the last attempt to make an OSD on it failed, in ceph-volume's or
    /// the cluster's words, while that deployment is failed or gave up.
    #[serde(default)]
    pub deploy_failure: Option<String>,
    pub transport: Option<String>,
    pub rpm: Option<String>,
    pub health: Option<String>,
    pub ident: Option<String>,
    pub fault: Option<String>,
    /// OSD ids with volumes on this device.
    pub osd_ids: Vec<String>,
    /// What the disk's probes say (`device probe`), when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<DeviceProbe>,
}

/// A device's probes in brief: its latest finished one, and whether one
/// is under way or the latest failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeviceProbe {
    pub probe_id: Option<i64>,
    pub mode: Option<crate::domain::probe::ProbeMode>,
    pub figures: Option<crate::wire::api::probes::ProbeFigures>,
    pub finished_at: Option<i64>,
    /// Why it is far below comparable disks, if it is.
    pub outlier: Option<String>,
    /// A probe is queued or running.
    pub pending: bool,
    /// Why the latest probe failed, when no probe finished after it.
    pub failure: Option<String>,
    /// The disk has no serial/WWN: the results belong to the slot.
    pub by_slot: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostDevices {
    pub host: String,
    pub addr: String,
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub inventory: Option<InventoryInfo>,
    pub devices: Vec<DeviceRow>,
    /// Set when --refresh could not reach the host.
    pub refresh_error: Option<String>,
    /// Set when its ceph-volume is of a major release the cluster runs nowhere: why.
    #[serde(default)]
    pub release_mismatch: Option<String>,
}

/// A device held back from every spec until an operator releases it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Hold {
    pub host: String,
    pub path: String,
    pub reason: String,
    pub since: i64,
    /// The held disk's id (serial/WWN), when known; another disk at the same path is not held.
    pub device_id: Option<String>,
    /// Held until a new disk is at this path of the host (`device replace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_for_slot: Option<String>,
}

impl From<HeldDevice> for Hold {
    fn from(h: HeldDevice) -> Hold {
        Hold {
            host: h.host,
            path: h.path,
            reason: h.reason,
            since: h.since,
            device_id: h.device_id,
            waits_for_slot: h.waits_for_slot,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceRef {
    pub host: String,
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ZapBody {
    pub host: String,
    pub path: String,
    /// Required.
    #[serde(default)]
    pub force: bool,
}

/// `POST /api/v1/devices/replace`: take a failed or failing disk's OSDs
/// down for a new disk in its slot.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplaceBody {
    pub host: String,
    pub path: String,
    /// Say what it would do; change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Required to act: the disk's OSDs are drained, destroyed (their ids
    /// kept) and their volumes zapped.
    #[serde(default)]
    pub yes_i_really_mean_it: bool,
    /// Drain with recovery raised (`osd rm --fast`).
    #[serde(default)]
    pub fast: bool,
    /// Queue the removals even where their preview finds blockers.
    #[serde(default)]
    pub ignore_preview_blockers: bool,
    /// No drain: `noout`, stop, destroy; the new disk's OSDs rebuild the
    /// copies once, leaving PGs a copy short until they have.
    #[serde(default)]
    pub in_place: bool,
    /// In place: PGs left with one copy are accepted.
    #[serde(default)]
    pub accept_single_copy: bool,
    /// In place: PGs below their pool's `min_size` (client I/O to them
    /// stops) are accepted.
    #[serde(default)]
    pub accept_inactive: bool,
}

/// An OSD with volumes on the disk, and which (`block`, `db`, `wal`, or
/// `data` for a raw OSD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OsdOnDisk {
    pub osd: u32,
    pub kinds: Vec<String>,
}

/// What `device replace` does (or, with `dry_run`, would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Replacement {
    pub host: String,
    pub path: String,
    /// The disk's serial/WWN: a disk with another one in the slot is the new disk.
    pub device_id: Option<String>,
    pub osds: Vec<OsdOnDisk>,
    /// The OSDs' other disks, which no other OSD uses: held with the slot
    /// until the new disk is in it.
    pub waiting: Vec<String>,
    pub dry_run: bool,
    /// Not drained: replaced in place.
    #[serde(default)]
    pub in_place: bool,
    /// The removal preview of the OSDs (a dry run only).
    pub preview: Option<crate::wire::api::removal_preview::RemovalPreview>,
    /// Both ways side by side (`drain-first`, `in-place`), when the cluster's
    /// maps could be read; the in-place way's risks; why it would be refused.
    #[serde(default)]
    pub ways: Option<ReplaceWays>,
    /// What happens, step by step, in words.
    pub text: Vec<String>,
}

/// What each way of replacing the disk costs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplaceWays {
    pub ways: Vec<crate::wire::api::swaps::WayRow>,
    /// The in-place way's PGs left with no copy to read (refused whatever
    /// the flags), with one copy, and below min_size, by pool.
    #[serde(default)]
    pub lost: Vec<crate::wire::api::swaps::PoolRiskRow>,
    pub single_copy: Vec<crate::wire::api::swaps::PoolRiskRow>,
    pub inactive: Vec<crate::wire::api::swaps::PoolRiskRow>,
    pub bytes_per_s: Option<f64>,
    pub eta_basis: String,
    /// How long the in-place way's new OSDs take to make before their
    /// backfill (null: no deployment to go by).
    #[serde(default)]
    pub making: Option<crate::wire::api::swaps::MakingEstimate>,
    /// Why the in-place way would be refused as asked.
    pub refusals: Vec<String>,
}

/// What `device replace --clear` undid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ReplacementCleared {
    pub host: String,
    pub path: String,
    /// Devices whose holds were lifted.
    pub released: Vec<String>,
    /// Removals stopped (their OSDs stay).
    pub stopped: Vec<u32>,
    /// Removals past the point of no return: their ids stay destroyed, and
    /// a spec redeploys them on whatever disk is in the slot.
    pub not_stopped: Vec<String>,
}
