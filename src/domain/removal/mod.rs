//! The OSD removal state machine: `advance(removal, observation) -> step`.
//!
//! A removal moves through
//!
//! ```text
//! queued ─► draining ─► waiting-safe ─► stopping ─► destroying ─► zapping ─► done
//!   │           │             │
//!   └───────────┴─────────────┴─(rm stop)─► restoring ─► cancelled
//! ```
//!
//! In place (`device replace --in-place`), nothing drains: the OSD keeps
//! its PGs under `noout` while its disk is swapped, and its copies are
//! rebuilt once, on the new OSD that takes its id:
//!
//! ```text
//! queued ─► stopping (noout first) ─► destroying ─► zapping ─► rejoining ─► done
//! ```
//!
//! The worker persists the returned state *before* it performs the returned
//! effect, then observes the cluster again. Every effect is safe to repeat,
//! and `advance` asks for an effect again only when the observation shows it
//! has not taken place, so after a crash at any point the removal continues
//! without doing anything twice: a purge that went through shows up as an
//! OSD that no longer exists, a zapped disk as a clean disk.
//!
//! Gates, as in cephadm: a drain starts only when the cluster's pacing allows
//! it (`pacing.rs`: health, the backfill queue, one host at a time where a
//! pool needs it) and `ok-to-stop` agrees; the daemon is stopped only once the OSD holds
//! no placement groups (unless forced) and `safe-to-destroy` agrees; destroy
//! or purge only once the OSD is down. Documented in
//! docs/design/removal-state-machine.md.

mod advance;
pub mod boost;
pub mod cadence;
mod devices;
mod ending;
mod gate;
pub mod mclock_shards;
mod pacing;
mod record;
mod remaining;
pub mod zap_plan;

pub use super::cluster::Verdict;
use super::copies::{Accept, Copies};
pub use advance::{advance, apply};
pub use devices::{clean_devices, identify, replaced_devices, shared_now, zap_expect, Identified, IdentifyError};
pub use ending::{Ending, Superseded};
pub use gate::with_uuid;
pub use pacing::{may_start_drain, unhealthy, Drain, PacingFacts};
pub use record::{
    after_step, began_drain, changed, observe_cluster, progress, questions, sample_due, undone_outside, Questions,
};
pub use remaining::{bytes_to_move, held_back, PgOnOsd};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Queued,
    Draining,
    WaitingSafe,
    Stopping,
    Destroying,
    Zapping,
    Done,
    Restoring,
    Cancelled,
    /// In place: destroyed and zapped, `noout` kept until its id is back up.
    Rejoining,
}

impl Phase {
    pub const ALL: [Phase; 10] = [
        Phase::Queued,
        Phase::Draining,
        Phase::WaitingSafe,
        Phase::Stopping,
        Phase::Destroying,
        Phase::Zapping,
        Phase::Done,
        Phase::Restoring,
        Phase::Cancelled,
        Phase::Rejoining,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Draining => "draining",
            Phase::WaitingSafe => "waiting-safe",
            Phase::Stopping => "stopping",
            Phase::Destroying => "destroying",
            Phase::Zapping => "zapping",
            Phase::Done => "done",
            Phase::Restoring => "restoring",
            Phase::Cancelled => "cancelled",
            Phase::Rejoining => "rejoining",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.iter().copied().find(|p| p.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, Phase::Done | Phase::Cancelled)
    }

    /// `rm stop` is possible until the daemon is stopped.
    pub fn can_stop(self) -> bool {
        matches!(self, Phase::Queued | Phase::Draining | Phase::WaitingSafe)
    }

    /// Counts toward the limit of concurrent drains.
    pub fn is_draining(self) -> bool {
        matches!(self, Phase::Draining | Phase::WaitingSafe)
    }
}

/// What is being removed, and how far it got. Persisted.
#[derive(Debug, Clone, PartialEq)]
pub struct Removal {
    pub osd_id: u32,
    /// The OSD's uuid (the OSD map's), recorded when it was scheduled: its
    /// id may be given to a new OSD, its uuid never. `None` in a removal
    /// stored before uuids were (`gate::with_uuid` says what then).
    pub osd_uuid: Option<String>,
    pub host: String,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
    /// Recovery runs faster while it drains (`osd rm --fast`, `boost.rs`).
    pub fast: bool,
    pub phase: Phase,
    /// CRUSH weight before the drain, restored by `rm stop`.
    pub original_weight: Option<f64>,
    /// Whether the OSD was `in` before a replace marked it out.
    pub was_in: Option<bool>,
    /// The OSD's devices on its host, recorded when the removal was
    /// scheduled (after a purge the cluster no longer knows them).
    pub devices: Vec<String>,
    /// Their ids (serial/WWN) in the same order, "" where the host has none.
    pub device_ids: Vec<String>,
    /// Devices already wiped.
    pub zapped: Vec<String>,
    /// An LVM OSD removed with --zap: the fsid that pins its LVs (the OSD
    /// map's uuid, recorded when it was scheduled; after the purge its id
    /// may belong to a new OSD of the same host). Its LVs are removed
    /// first (`Effect::ZapLvs`), then its own devices are wiped.
    pub lvm_fsid: Option<String>,
    /// Devices that also hold other OSDs' LVs (a DB device several OSDs
    /// share): only this OSD's LVs leave them; they are never wiped.
    pub shared_devices: Vec<String>,
    /// Its LVs are gone (`Effect::ZapLvs` went through).
    pub lvs_zapped: bool,
    pub stop_requested: bool,
    /// The daemon stop was requested from the host agent.
    pub stop_sent: bool,
    pub pgs_at_start: Option<i64>,
    /// PGs left on the OSD at the last look (`osd df`).
    pub pgs_now: Option<i64>,
    /// Space the OSD used at the last look, in KiB (`osd df`).
    pub kb_used_now: Option<i64>,
    /// When the drain began (ms since the epoch).
    pub drain_started_at: Option<i64>,
    /// The preview's blockers that `osd rm --ignore-preview-blockers` was
    /// told to skip, as the preview worded them when it was scheduled.
    pub ignored_blockers: Vec<String>,
    /// Part of `device replace` of the disk at this path of its host: the
    /// replacement's holds keep its disks, not the removal's own.
    pub slot: Option<String>,
    /// No drain: the OSD is destroyed under `noout` and its copies rebuilt
    /// on the OSD that takes its id (`device replace --in-place`).
    pub in_place: Option<InPlace>,
    /// How it ended, when not plainly.
    pub ending: Option<Ending>,
    /// How it ended, as text, in records written before `ending` existed:
    /// read, never written.
    pub legacy_note: Option<String>,
    /// In place: the stop, destroy or zap waits, the cluster worse than
    /// accepted (`copies::gate`), in the words of when the hold began.
    pub last_copy_hold: Option<String>,
}

impl Removal {
    pub fn new(osd_id: u32, host: String, replace: bool, force: bool, zap: bool, devices: Vec<String>) -> Removal {
        Removal {
            osd_id,
            osd_uuid: None,
            host,
            replace,
            force,
            zap,
            fast: false,
            phase: Phase::Queued,
            original_weight: None,
            was_in: None,
            devices,
            device_ids: Vec::new(),
            zapped: Vec::new(),
            lvm_fsid: None,
            shared_devices: Vec::new(),
            lvs_zapped: false,
            stop_requested: false,
            stop_sent: false,
            pgs_at_start: None,
            pgs_now: None,
            kb_used_now: None,
            drain_started_at: None,
            ignored_blockers: Vec::new(),
            slot: None,
            in_place: None,
            ending: None,
            legacy_note: None,
            last_copy_hold: None,
        }
    }

    /// How it ended, in words, when not plainly.
    pub fn note(&self) -> Option<String> {
        match &self.ending {
            Some(e) => Some(e.describe(self)),
            None => self.legacy_note.clone(),
        }
    }

    /// Whether `rm stop` is taken: before the daemon is stopped, or at any
    /// time in place, where it is carried out once the removal waits for
    /// its new OSD (`noout` lifted then; the daemon's stop, the destroy and
    /// the zap go through first).
    pub fn accepts_stop(&self) -> bool {
        self.phase.can_stop() || (self.in_place.is_some() && !self.phase.is_finished())
    }

    /// Whether its devices are free now and should be held back from specs.
    /// Not when the OSD vanished before osdkeeper drained it: whoever
    /// removed it decides about its disks; nor for a `device replace`,
    /// whose slot holds them (or let them go: the new disk is in).
    /// Nor when another OSD took its id: what it used may be the new OSD's.
    pub fn frees_devices(&self) -> bool {
        let taken = matches!(self.ending, Some(Ending::Superseded(Superseded::Osd { .. } | Superseded::Unrecorded)));
        self.slot.is_none() && !(self.ending == Some(Ending::RemovedOutside) && self.pgs_at_start.is_none()) && !taken
    }

    /// The uuid its OSD goes by: the one recorded, or for an LVM OSD
    /// removed with `--zap` by an osdkeeper before uuids were recorded, the
    /// fsid its LVs were to be zapped by (the same value).
    pub fn uuid(&self) -> Option<&str> {
        self.osd_uuid.as_deref().or(self.lvm_fsid.as_deref())
    }
}

/// What an in-place removal was told to accept, beyond the PGs it leaves
/// with a copy fewer (accepted when it was scheduled); held to right
/// before each stop, destroy and zap too (`gate::last_copy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InPlace {
    /// Stop the OSD even when `ok-to-stop` says PGs would go inactive.
    pub accept_inactive: bool,
    /// PGs may be left with one copy (erasure-coded: k shards).
    pub accept_single_copy: bool,
}

impl InPlace {
    pub fn accept(self) -> Accept {
        Accept { single_copy: self.accept_single_copy, inactive: self.accept_inactive }
    }
}

/// What the worker saw just now.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The OSD is in the OSD map.
    pub exists: bool,
    /// The uuid the OSD map shows at the id (none for a destroyed OSD).
    pub uuid: Option<String>,
    /// Marked destroyed (id kept for a replacement).
    pub destroyed: bool,
    pub up: bool,
    pub is_in: bool,
    /// `noout` is set on the OSD.
    pub noout: bool,
    pub crush_weight: Option<f64>,
    /// Placement groups on the OSD (`osd df`); None when Ceph does not list it.
    pub pgs: Option<i64>,
    /// Asked only for queued removals.
    pub ok_to_stop: Option<Verdict>,
    /// Asked only when waiting for it or about to destroy.
    pub safe_to_destroy: Option<Verdict>,
    /// Whether a new drain may start now (concurrency limit, cluster health), and why not.
    pub may_start_drain: Verdict,
    pub host_reachable: bool,
    /// The agent's view of the daemon, when it could be asked.
    pub daemon_running: Option<bool>,
    /// Recorded devices that the host's inventory shows without any signature.
    pub clean_devices: Vec<String>,
    /// Recorded devices whose path now holds another disk (another serial):
    /// the old one was pulled, and the new one is not this removal's to wipe.
    pub replaced_devices: Vec<String>,
    /// Recorded devices that hold another OSD's LVs now (a DB another OSD
    /// put there during the drain): never wiped whole, decided again right
    /// before the zap (`shared_now`).
    pub shared_now: Vec<String>,
    /// In place, right before a stop, destroy or zap: a fresh read of
    /// every PG's copies, or why it could not be read (`questions`).
    pub copies: Option<Result<Copies, String>>,
}

/// One action on the cluster or a host. All are safe to repeat.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `ceph osd crush reweight osd.N W`.
    Reweight {
        weight: f64,
    },
    MarkOut,
    MarkIn,
    /// `ceph osd down N`: the daemon is gone but the monitors have not noticed.
    MarkDown,
    /// Stop the OSD daemon through the host agent.
    StopDaemon,
    /// `ceph osd destroy N`: keeps the id for a replacement.
    Destroy,
    /// `ceph osd purge N`.
    Purge,
    /// Wipe a device through the host agent.
    Zap {
        path: String,
    },
    /// Remove an LVM OSD's own LVs (its block VG, its DB and WAL LVs
    /// wherever they are) through the host agent, pinned by its fsid.
    ZapLvs {
        fsid: String,
    },
    /// `ceph osd add-noout osd.N` (on) or `rm-noout` (off).
    Noout {
        on: bool,
    },
}

impl Effect {
    /// The effect's name, as in its JSON (`OSDKEEPER_CRASH_AFTER=purge`).
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Reweight { .. } => "reweight",
            Effect::MarkOut => "mark-out",
            Effect::MarkIn => "mark-in",
            Effect::MarkDown => "mark-down",
            Effect::StopDaemon => "stop-daemon",
            Effect::Destroy => "destroy",
            Effect::Purge => "purge",
            Effect::Zap { .. } => "zap",
            Effect::ZapLvs { .. } => "zap-lvs",
            Effect::Noout { on: true } => "noout",
            Effect::Noout { on: false } => "rm-noout",
        }
    }

    /// Purge, destroy and zap cannot be undone.
    pub fn is_destructive(&self) -> bool {
        matches!(self, Effect::Destroy | Effect::Purge | Effect::Zap { .. } | Effect::ZapLvs { .. })
    }
}

/// The next state, at most one effect, and what the removal waits for.
pub type Step = super::operation::Step<Removal, Effect>;

/// A removal with its bookkeeping, as stored.
pub type RemovalRecord = super::operation::Operation<Removal>;

/// A removal just queued as the store gives it back, before anything was
/// observed (for tests and simulations that make records by hand).
pub fn queued_record(id: i64, removal: Removal, at: i64) -> RemovalRecord {
    super::operation::Operation {
        id,
        number: id,
        subject: format!("osd.{}", removal.osd_id),
        host: Some(removal.host.clone()),
        state: removal,
        waiting_on: None,
        last_error: None,
        actor: None,
        created_at: at,
        updated_at: at,
        finished_at: None,
        failures: 0,
        version: 1,
    }
}

impl super::operation::State for Removal {
    fn phase_name(&self) -> &'static str {
        self.phase.as_str()
    }

    fn is_finished(&self) -> bool {
        self.phase.is_finished()
    }
}

impl super::operation::Effect for Effect {
    fn name(&self) -> &'static str {
        Effect::name(self)
    }

    fn is_destructive(&self) -> bool {
        Effect::is_destructive(self)
    }
}

/// PGs left on the OSD. A down and out OSD that `osd df` no longer lists
/// holds none (cephadm counts it as -1 and waits for ever).
pub fn pgs_left(obs: &Observation) -> Option<i64> {
    match obs.pgs {
        Some(n) => Some(n),
        None if !obs.up && !obs.is_in => Some(0),
        None => None,
    }
}

#[cfg(test)]
mod last_copy_tests;
#[cfg(test)]
mod tests;
