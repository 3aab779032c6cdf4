//! What a swap sees: the cluster's answers a round reads for it
//! (`SwapInput`, from the Ceph adapter), and the observation `advance`
//! decides on, each part asked only in the phases that need it.

use super::PgNow;
use crate::domain::removal::Phase as RemovalPhase;

/// What a swap reads of the cluster each round (the Ceph adapter's
/// `swap_input`): every PG now and in the final map, and the cluster-wide
/// settings the swap changes or paces by.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SwapInput {
    pub pgs: Vec<PgNow>,
    /// `osd_max_backfills` as an OSD runs with it.
    pub max_backfills: u32,
    pub balancer_on: bool,
}

/// One OSD as the cluster shows it now.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdSeen {
    pub id: u32,
    /// Its uuid in the OSD map (none for a destroyed OSD).
    pub uuid: Option<String>,
    pub up: bool,
    pub is_in: bool,
    pub destroyed: bool,
    pub crush_weight: Option<f64>,
}

/// The deployment of the new disks, as the store shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeploymentSeen {
    pub number: i64,
    pub finished: bool,
    /// Why it gave up, when it did.
    pub gave_up: Option<String>,
    /// The OSDs it made: (id, device).
    pub osds: Vec<(u32, String)>,
}

/// The swap's removal of an old OSD, as the store shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemovalSeen {
    pub osd: u32,
    pub phase: RemovalPhase,
    /// `osd rm stop` was asked of it.
    pub stop_requested: bool,
    /// In place: it ended with the id back up and in (`noout` lifted).
    pub rejoined: bool,
    /// What it waits on now, in its words (a last-copy hold among them).
    pub waiting_on: Option<String>,
    /// How it ended when not plainly, in its words.
    pub note: Option<String>,
}

/// What the worker saw just now; each part is asked only in the phases that need it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observation {
    /// The old and new OSDs the cluster knows (missing: not in the OSD map).
    pub osds: Vec<OsdSeen>,
    /// Whether a new drain-like move may start: the drains' health rule,
    /// and why not.
    pub healthy: Option<String>,
    pub balancer_on: Option<bool>,
    /// `osd_crush_initial_weight` is set in some section the swap sets it
    /// in (or, for a swap stored by an older osdkeeper, the host's mask).
    pub initial_weight_set: Option<bool>,
    /// It is set for every new OSD's planned id.
    pub initial_weight_complete: bool,
    /// Every id in the OSD map (destroyed ones too): a new OSD's planned
    /// id is one that none has.
    pub taken_ids: Vec<u32>,
    pub deployment: Option<DeploymentSeen>,
    /// The PG map with the final map beside it (handing over, settling).
    pub pgs: Option<Vec<PgNow>>,
    /// Why the PG map, the balancer and the flags could not be read, when
    /// they could not: what the swap then waits on, in its words.
    pub input_error: Option<String>,
    /// `osd_max_backfills` as an OSD runs with it.
    pub max_backfills: u32,
    /// The swap's removals of its old OSDs; `None` when not asked or not
    /// read (the swap then waits).
    pub removals: Option<Vec<RemovalSeen>>,
    /// The host's disks as its inventory shows them now.
    pub disks: Vec<DiskNow>,
    /// In place: PGs of the cluster short of copies or not serving now
    /// (`short_pgs`).
    pub short_pgs: Option<i64>,
}

/// The PGs an in-place swap waits for before it ends: those
/// degraded or undersized, and those not active. Not active counts too:
/// when the new OSD boots its PGs re-peer, and a PG listed `peering` is
/// neither degraded nor undersized; a swap that took that moment for the
/// end would close its window early (a CI run on 20.2 saw PGs below size
/// after a window had closed; whether this was the cause is not proven).
/// PGs merely remapped or backfilling elsewhere (a drain, the balancer)
/// do not hold it: the swap cannot be stopped while it recovers.
pub fn short_pgs(pg_states: &[(String, i64)]) -> i64 {
    pg_states
        .iter()
        .filter(|(state, _)| {
            let flags: Vec<&str> = state.split('+').collect();
            !flags.contains(&"active") || flags.iter().any(|f| matches!(*f, "degraded" | "undersized"))
        })
        .map(|(_, n)| *n)
        .sum()
}

impl Observation {
    pub fn osd(&self, id: u32) -> Option<&OsdSeen> {
        self.osds.iter().find(|o| o.id == id)
    }

    pub fn disk(&self, path: &str) -> Option<&DiskNow> {
        self.disks.iter().find(|d| d.path == path)
    }

    /// The swap's removal of osd.`id`, once the store was read.
    pub fn removal(&self, id: u32) -> Option<&RemovalSeen> {
        self.removals.as_ref()?.iter().find(|r| r.osd == id)
    }
}

/// A disk of the host, as its inventory shows it now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskNow {
    pub path: String,
    /// Its serial/WWN id, "" where the host reports none.
    pub device_id: String,
    /// Nothing on it: available, no LV.
    pub blank: bool,
    /// The OSD fsids its LVs carry (none on a raw OSD's disk).
    pub osd_fsids: Vec<String>,
    /// What is on it when it is not blank, in words.
    pub holds: String,
}
