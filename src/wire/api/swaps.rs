//! `/api/v1/swaps`: old OSDs out, new disks in, the data moved once
//! (docs/design/swap.md): the request, a swap's status and actions, and
//! the preview of what each way costs.

use serde::{Deserialize, Serialize};

use crate::domain::operation::Action;
use crate::domain::spec::Method;
use crate::domain::swap::cost::{Costs, InPlaceCost, PoolRisk, WayCost};
use crate::domain::swap::making::Making;
use crate::domain::swap::window::DegradedWindow;
use crate::domain::swap::{Phase, Swap, SwapRecord, Way};

fn free_bay() -> Way {
    Way::FreeBay
}

/// `osd replace`: the OSDs out, the disks in, and for the in-place way the
/// risks accepted by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SwapBody {
    pub osds: Vec<u32>,
    /// The new disks' host: the OSDs' own (a swap keeps every copy on its host).
    #[serde(default)]
    pub host: Option<String>,
    /// The new disks (free bay); for the in-place way the slot, the old disk's when empty.
    #[serde(default)]
    pub devices: Vec<String>,
    #[serde(default = "free_bay")]
    pub way: Way,
    /// In place: PGs may be left with one copy for the window.
    #[serde(default)]
    pub accept_single_copy: bool,
    /// In place: PGs may go inactive (client I/O stops) for the window.
    #[serde(default)]
    pub accept_inactive: bool,
    /// How the new OSDs are made (`raw` or `lvm`): the old OSDs' method when absent.
    #[serde(default)]
    pub method: Option<Method>,
    /// The new OSDs are encrypted (dm-crypt).
    #[serde(default)]
    pub encrypted: bool,
}

/// A new disk and the OSD made on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapDisk {
    pub path: String,
    /// The CRUSH weight it ends with (its size in TiB).
    pub weight: f64,
    pub osd: Option<u32>,
}

/// The risk an in-place swap took, as accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapRisk {
    pub pgs_degraded: usize,
    pub bytes: u64,
    pub accepted: Vec<String>,
    /// The preview's estimate of the backfill.
    pub window_s: Option<f64>,
    /// The preview's estimate of the new OSDs' making before it (none for
    /// a swap asked for before this was estimated, or with no deployment
    /// to go by).
    #[serde(default)]
    pub making_s: Option<f64>,
}

/// One swap as `swap status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapStatus {
    pub swap_id: i64,
    pub host: String,
    pub way: Way,
    pub state: Phase,
    pub osds: Vec<u32>,
    pub disks: Vec<SwapDisk>,
    /// How the new OSDs are made.
    pub method: Method,
    pub encrypted: bool,
    /// PGs and bytes the hand-over still has to move, at the last look.
    pub pgs_left: Option<usize>,
    pub bytes_left: Option<u64>,
    /// `pg-upmap-items` entries issued.
    pub handed: usize,
    /// PGs it cannot hand over without moving them twice, with why.
    pub cannot_hand: Vec<String>,
    /// Entries left after settling that are not no-ops.
    pub kept_pins: Vec<String>,
    /// The swap turned the balancer off (it is put back at the end if it was on).
    pub balancer_paused: bool,
    pub stop_requested: bool,
    pub risk: Option<SwapRisk>,
    pub waiting_on: Option<String>,
    pub last_error: Option<String>,
    /// How it ended, when not plainly.
    pub ending: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

impl From<&SwapRecord> for SwapStatus {
    fn from(rec: &SwapRecord) -> SwapStatus {
        let s: &Swap = &rec.state;
        SwapStatus {
            swap_id: rec.number,
            host: s.host.clone(),
            way: s.way,
            state: s.phase,
            osds: s.old_ids(),
            disks: s.news.iter().map(|n| SwapDisk { path: n.path.clone(), weight: n.weight, osd: n.osd }).collect(),
            method: s.recipe.method,
            encrypted: s.recipe.encrypted,
            pgs_left: s.pgs_left,
            bytes_left: s.bytes_left,
            handed: s.handed.len(),
            cannot_hand: s.cannot_hand.clone(),
            kept_pins: s.kept_pins.clone(),
            balancer_paused: s.balancer_paused,
            stop_requested: s.stop_requested,
            risk: s.risk.as_ref().map(|r| SwapRisk {
                pgs_degraded: r.pgs_degraded,
                bytes: r.bytes,
                accepted: r.accepted.clone(),
                window_s: r.window_s,
                making_s: r.making_s,
            }),
            waiting_on: rec.waiting_on.clone(),
            last_error: rec.last_error.clone(),
            ending: s.ending.clone(),
            created_at: rec.created_at,
            finished_at: rec.finished_at,
        }
    }
}

/// One action of a swap (in place, or of its removal), logged before it was issued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapAction {
    /// The effect's name (`upmap`, `set-weights`, ...).
    pub effect: String,
    /// What exactly was asked (`ceph osd pg-upmap-items 1.4 8 20; ...`).
    pub detail: String,
    pub issued_at: i64,
    pub finished_at: Option<i64>,
    /// `ok: ...`, `failed: ...`, `unknown: ...`.
    pub outcome: Option<String>,
}

impl From<&Action> for SwapAction {
    fn from(a: &Action) -> SwapAction {
        SwapAction {
            effect: a.effect.clone(),
            detail: a.detail.clone(),
            issued_at: a.issued_at,
            finished_at: a.finished_at,
            outcome: a.outcome.map(|o| format!("{}: {}", o.as_str(), a.outcome_detail.clone().unwrap_or_default())),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapDetail {
    #[serde(flatten)]
    pub status: SwapStatus,
    pub actions: Vec<SwapAction>,
    /// In place: when its PGs went short of a copy (the stop of the old
    /// OSD by its removal) and came back (the swap's end, once it saw none
    /// short); `until` null while open, or when the swap did not end well.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded_window: Option<SwapWindow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapWindow {
    pub from: i64,
    pub until: Option<i64>,
    /// `until - from` in seconds, once closed.
    pub seconds: Option<f64>,
}

impl From<DegradedWindow> for SwapWindow {
    fn from(w: DegradedWindow) -> SwapWindow {
        SwapWindow { from: w.from_ms, until: w.until_ms, seconds: w.until_ms.map(|u| (u - w.from_ms) as f64 / 1000.0) }
    }
}

/// An OSD receiving copies, and their bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Receiving {
    pub osd: u32,
    pub bytes: u64,
}

/// What one way moves; `bytes` null where it cannot be known yet (the
/// final map needs the new OSDs: the real cluster's preview computes it
/// once they exist).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WayRow {
    /// `swap`, `drain-then-add`, `drain-first` or `in-place`.
    pub way: String,
    pub bytes: Option<u64>,
    pub pgs: Option<usize>,
    /// Of the bytes, those leaving the old OSDs.
    pub off_old_bytes: Option<u64>,
    pub receivers: Vec<Receiving>,
    pub eta_s: Option<f64>,
    /// PGs with a copy fewer on the way (only the in-place way has any).
    pub pgs_degraded: usize,
}

/// PGs of a pool at risk in the in-place window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PoolRiskRow {
    pub pool: String,
    pub size: u32,
    pub min_size: u32,
    pub pgs: usize,
    pub bytes: u64,
}

impl From<&PoolRisk> for PoolRiskRow {
    fn from(r: &PoolRisk) -> PoolRiskRow {
        PoolRiskRow { pool: r.pool.clone(), size: r.size, min_size: r.min_size, pgs: r.pgs, bytes: r.bytes }
    }
}

/// `osd replace --dry-run`: every way side by side, and why the asked one would be refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapPreview {
    pub host: String,
    pub way: Way,
    pub osds: Vec<u32>,
    pub disks: Vec<SwapDisk>,
    pub ways: Vec<WayRow>,
    /// The in-place way's PGs left with no copy to read (refused whatever
    /// the flags), with one copy, and below min_size, by pool.
    #[serde(default)]
    pub lost: Vec<PoolRiskRow>,
    pub single_copy: Vec<PoolRiskRow>,
    pub inactive: Vec<PoolRiskRow>,
    /// The throughput the times are at (null: none observed, no times).
    pub bytes_per_s: Option<f64>,
    pub eta_basis: String,
    /// How long the in-place way's new OSDs take to make before their
    /// backfill (null: no deployment to go by).
    #[serde(default)]
    pub making: Option<MakingEstimate>,
    /// Why `osd replace` would refuse it as asked (the in-place way's risks not accepted).
    pub refusals: Vec<String>,
}

/// The in-place way's making of new OSDs, at the pace deployments went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MakingEstimate {
    pub seconds: f64,
    /// "41 s an OSD, the median of the last 3 deployments on f5-422-03".
    pub basis: String,
}

impl From<&Making> for MakingEstimate {
    fn from(m: &Making) -> MakingEstimate {
        MakingEstimate { seconds: m.seconds, basis: m.basis.clone() }
    }
}

/// A way's row (none: its cost cannot be known yet).
pub fn row(way: &str, cost: Option<&WayCost>) -> WayRow {
    WayRow {
        way: way.into(),
        bytes: cost.map(|c| c.bytes),
        pgs: cost.map(|c| c.pgs),
        off_old_bytes: cost.map(|c| c.off_old_bytes),
        receivers: cost.map_or_else(Vec::new, |c| {
            c.receivers.iter().map(|(osd, bytes)| Receiving { osd: *osd, bytes: *bytes }).collect()
        }),
        eta_s: cost.and_then(|c| c.eta_s),
        pgs_degraded: 0,
    }
}

/// The in-place way's row: its copies rebuilt once, with PGs a copy short
/// meanwhile.
pub fn in_place_row(c: &InPlaceCost) -> WayRow {
    WayRow {
        way: "in-place".into(),
        bytes: Some(c.bytes),
        pgs: Some(c.pgs_degraded),
        off_old_bytes: Some(c.bytes),
        receivers: Vec::new(),
        eta_s: c.window_s,
        pgs_degraded: c.pgs_degraded,
    }
}

impl SwapPreview {
    pub fn of(swap: &Swap, c: &Costs, refusals: Vec<String>) -> SwapPreview {
        let in_place = in_place_row(&c.in_place);
        SwapPreview {
            host: swap.host.clone(),
            way: swap.way,
            osds: swap.old_ids(),
            disks: swap.news.iter().map(|n| SwapDisk { path: n.path.clone(), weight: n.weight, osd: n.osd }).collect(),
            ways: vec![
                row("swap", c.swap.as_ref()),
                row("drain-then-add", c.drain_then_add.as_ref()),
                row("drain-first", Some(&c.drain_first)),
                in_place,
            ],
            lost: c.in_place.lost.iter().map(Into::into).collect(),
            single_copy: c.in_place.single_copy.iter().map(Into::into).collect(),
            inactive: c.in_place.inactive.iter().map(Into::into).collect(),
            bytes_per_s: c.bytes_per_s,
            eta_basis: c.basis.clone(),
            making: c.in_place.making.as_ref().map(Into::into),
            refusals,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct SwapQuery {
    /// How many finished swaps to include (default 20).
    pub history: Option<i64>,
}
