//! `POST /api/v1/osds/removals/preview`: what removing OSDs together will
//! do, computed from the live cluster without changing it (`osd rm ...
//! --dry-run`).

use serde::{Deserialize, Serialize};

pub use crate::domain::drain_preview::EtaSource;

mirror! {
    /// A PG that moves: the OSDs it leaves and the ones it lands on.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct PgMove = crate::domain::drain_preview::PgMove {
        pub pgid: String,
        pub pool: i64,
        pub from: Vec<u32>,
        pub to: Vec<u32>,
        pub bytes: u64,
    }
}

mirror! {
    /// What the drain does to one pool.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct PoolImpact = crate::domain::drain_preview::PoolImpact {
        pub pool: i64,
        pub name: String,
        pub size: u32,
        pub min_size: u32,
        pub failure_domain: String,
        /// Failure domains with weight left after the drain.
        pub domains_left: Vec<String>,
        pub pgs: usize,
        pub pgs_moving: usize,
        /// PGs CRUSH places on fewer OSDs than `size` afterwards, and on fewer
        /// than now (down OSDs counted as places).
        pub pgs_short: usize,
        /// Of those, the ones below `min_size`: they would stop serving I/O.
        pub pgs_below_min: usize,
    }
}

mirror! {
    /// An OSD that gains placement groups.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Receiver = crate::domain::drain_preview::Receiver {
        pub osd: u32,
        pub pgs_in: usize,
        pub pgs_out: usize,
        pub bytes_in: u64,
        pub bytes_out: u64,
        /// Used over size, 0..1; null when Ceph reports no size for it.
        pub fullness_before: Option<f64>,
        pub fullness_after: Option<f64>,
    }
}

carry_pairs!(
    crate::domain::drain_preview::PgMove => PgMove,
    crate::domain::drain_preview::PoolImpact => PoolImpact,
    crate::domain::drain_preview::Receiver => Receiver,
);

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewBody {
    /// The OSDs to remove together.
    pub ids: Vec<u32>,
    /// Say what `--zap` would do to each OSD's devices (`zaps`).
    #[serde(default)]
    pub zap: bool,
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
    /// What `--zap` does to each OSD's devices, when the preview was asked
    /// with `zap` (empty otherwise).
    #[serde(default)]
    pub zaps: Vec<OsdZap>,
}

/// What `--zap` does to one OSD's devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OsdZap {
    pub osd: u32,
    pub host: String,
    pub devices: Vec<DeviceZap>,
    /// In words: `wipes /dev/sdb (its block); zaps osd.3's DB LV on /dev/sdd; osd.4's DB stays`,
    /// or why the devices cannot be told (the zap would then be refused).
    pub text: String,
}

/// One device of an OSD under `--zap`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeviceZap {
    pub path: String,
    /// This OSD's volumes on it (`block`, `db`, `wal`).
    pub own: Vec<String>,
    /// Other OSDs with volumes on it: they stay, and so does the device.
    pub others: Vec<OtherOsd>,
    /// Only this OSD's LVs go (a DB device others share); else the device is wiped.
    pub shared: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct OtherOsd {
    pub osd: String,
    pub kinds: Vec<String>,
}

impl From<&crate::domain::removal::zap_plan::DeviceZap> for DeviceZap {
    fn from(d: &crate::domain::removal::zap_plan::DeviceZap) -> DeviceZap {
        DeviceZap {
            path: d.path.clone(),
            own: d.own.clone(),
            others: d.others.iter().map(|(osd, kinds)| OtherOsd { osd: osd.clone(), kinds: kinds.clone() }).collect(),
            shared: d.is_shared(),
        }
    }
}
