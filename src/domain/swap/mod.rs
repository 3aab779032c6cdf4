//! Swapping disks as one operation: `advance(swap, observation) -> step`.
//!
//! "These old OSDs out, these new disks in", on one host, in one of two
//! ways (docs/design/swap.md):
//!
//! ```text
//! free bay: queued ─► preparing ─► deploying ─► handing-over ─► settling ─► retiring ─► finishing ─► done
//!             └──────────┴────────────┴─────────────┴──(swap stop)──► unwinding ─► stopped | failed
//! in place: queued ─► retiring ─► awaiting-disk ─► deploying ─► recovering ─► done
//!             └──────────┴──(swap stop)──► stopped
//! ```
//!
//! In place, `retiring` is an in-place removal of the old OSD (`noout`,
//! stop, destroy keeping its id, zap: the removal kind's, the same one
//! `device replace --in-place` runs), as the free bay's `retiring` is a
//! removal of its old OSDs.
//!
//! The free bay's hand-over moves each copy once, straight to where CRUSH
//! keeps it once the swap is over (`handover.rs`, with Ceph's upmap rules
//! as values in `upmap.rs`); `cost.rs` says what each way costs and when
//! the in-place way is refused. As for every kind, the kernel writes the
//! step before its effect, every effect is safe to repeat, and `advance`
//! asks for one again only when the observation shows it has not happened.

mod advance;
pub mod cost;
mod gate;
pub mod handover;
#[cfg(test)]
mod identity_tests;
mod in_place;
pub mod making;
mod observation;
pub mod propose;
mod recipe;
#[cfg(test)]
mod tests;
pub mod upmap;
pub mod window;

pub use advance::{advance, apply, interrupted};
pub use handover::{Handed, PgNow, UpmapItem};
pub use observation::{short_pgs, DeploymentSeen, DiskNow, Observation, OsdSeen, RemovalSeen, SwapInput};
pub use recipe::{deploy_commands, method_of, Recipe};

/// The weight a new OSD holds while PGs are handed to it: above 0, since
/// the monitors cancel an upmap entry naming an OSD at CRUSH weight 0, and
/// small enough that CRUSH itself practically never picks it.
pub const HANDOVER_WEIGHT: f64 = 0.0001;

/// `pg-upmap-items` commands one step issues at most.
pub const MAX_BATCH: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// The new disks go in beside the old ones: hand-over, nothing degraded.
    FreeBay,
    /// A new disk takes its old one's slot: the id kept, the data rebuilt
    /// from the other copies.
    InPlace,
}

impl Way {
    pub const ALL: [Way; 2] = [Way::FreeBay, Way::InPlace];

    pub fn as_str(self) -> &'static str {
        match self {
            Way::FreeBay => "free-bay",
            Way::InPlace => "in-place",
        }
    }

    pub fn parse(s: &str) -> Option<Way> {
        Way::ALL.into_iter().find(|w| w.as_str() == s)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Queued,
    Preparing,
    Deploying,
    HandingOver,
    Settling,
    Retiring,
    Finishing,
    Done,
    Unwinding,
    Stopped,
    Failed,
    AwaitingDisk,
    Recovering,
}

impl Phase {
    pub const ALL: [Phase; 13] = [
        Phase::Queued,
        Phase::Preparing,
        Phase::Deploying,
        Phase::HandingOver,
        Phase::Settling,
        Phase::Retiring,
        Phase::Finishing,
        Phase::Done,
        Phase::Unwinding,
        Phase::Stopped,
        Phase::Failed,
        Phase::AwaitingDisk,
        Phase::Recovering,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Preparing => "preparing",
            Phase::Deploying => "deploying",
            Phase::HandingOver => "handing-over",
            Phase::Settling => "settling",
            Phase::Retiring => "retiring",
            Phase::Finishing => "finishing",
            Phase::Done => "done",
            Phase::Unwinding => "unwinding",
            Phase::Stopped => "stopped",
            Phase::Failed => "failed",
            Phase::AwaitingDisk => "awaiting-disk",
            Phase::Recovering => "recovering",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, Phase::Done | Phase::Stopped | Phase::Failed)
    }
}

/// An OSD the swap takes out.
#[derive(Debug, Clone, PartialEq)]
pub struct OldOsd {
    pub id: u32,
    /// Its uuid (the OSD map's) when the swap was asked for: another uuid
    /// at the id is another OSD, never acted on. `None` in a swap stored
    /// before uuids were (`gate.rs` says what then).
    pub uuid: Option<String>,
    /// Its CRUSH weight when the swap was asked for.
    pub weight: f64,
    /// Its devices on the host (the in-place way zaps them; a free bay's
    /// removal identifies them again when it is scheduled).
    pub devices: Vec<String>,
    /// Their serial/WWN ids in the same order, "" where the host has none:
    /// a new disk in the slot is one with another id.
    pub device_ids: Vec<String>,
}

/// A disk the swap puts in.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDisk {
    pub path: String,
    /// Its serial/WWN id, "" where the host reports none.
    pub device_id: String,
    /// The CRUSH weight it ends with: its size in TiB, as ceph-osd gives it.
    pub weight: f64,
    /// The OSD made on it, once the deployment shows it.
    pub osd: Option<u32>,
    /// The id planned for it before it is made (free bay): the one its
    /// `osd_crush_initial_weight` is set for, and that ceph-volume is told
    /// to take (`--osd-id`/`--osd-ids` take an id that does not exist yet).
    pub planned_id: Option<u32>,
}

/// What the in-place way risks, as computed when it was asked for (`cost.rs`).
#[derive(Debug, Clone, PartialEq)]
pub struct Risk {
    /// PGs that run short of copies until the new OSD has backfilled.
    pub pgs_degraded: usize,
    pub bytes: u64,
    /// What the operator accepted, in words ("20 PGs of pool 'rbd' (size
    /// 2) with one copy"); empty when nothing needed accepting.
    pub accepted: Vec<String>,
    /// The estimated backfill at the rate seen, when one was seen.
    pub window_s: Option<f64>,
    /// The estimated making of the new OSDs, at the pace deployments went.
    pub making_s: Option<f64>,
    /// PGs may go inactive: the OSD is stopped even when `ok-to-stop` says
    /// no. Handed to its removal (`removal::InPlace`), as the next one.
    pub accept_inactive: bool,
    /// PGs may be left with one copy (erasure-coded: k shards), right
    /// before each act of its removal too (`copies::hold`).
    pub accept_single_copy: bool,
}

/// A swap and how far it got. Persisted.
#[derive(Debug, Clone, PartialEq)]
pub struct Swap {
    pub host: String,
    pub way: Way,
    pub olds: Vec<OldOsd>,
    pub news: Vec<NewDisk>,
    /// How the new OSDs are made.
    pub recipe: Recipe,
    pub phase: Phase,
    pub stop_requested: bool,
    /// Whether the balancer was on when the swap began (put back at the end).
    pub balancer_was_on: Option<bool>,
    /// The swap turned the balancer off (written before it asks).
    pub balancer_paused: bool,
    /// The swap set `osd_crush_initial_weight` for the host (written before).
    pub initial_weight_set: bool,
    /// The deployment of the new disks, once stored (its number).
    pub deployment: Option<i64>,
    /// The `pg-upmap-items` entries issued, as issued.
    pub handed: Vec<Handed>,
    /// PGs the planner could not hand over without moving them twice.
    pub cannot_hand: Vec<String>,
    /// The weights were set to the final ones.
    pub settled: bool,
    /// Entries left after settling that are not no-ops (removing one would move data).
    pub kept_pins: Vec<String>,
    /// The removals of the old OSDs were stored.
    pub retired: bool,
    /// PGs and bytes the hand-over still has to move, at the last look.
    pub pgs_left: Option<usize>,
    pub bytes_left: Option<u64>,
    /// In place: the risk taken, as accepted.
    pub risk: Option<Risk>,
    /// In place: used disks found in the slot, each with why: a used disk
    /// is never wiped nor taken by a swap.
    pub passed_over: Vec<(String, String)>,
    /// Why it cannot go on: it unwinds, then ends `failed`.
    pub failure: Option<String>,
    /// How it ended when not plainly, in words.
    pub ending: Option<String>,
}

impl Swap {
    pub fn new(host: String, way: Way, olds: Vec<OldOsd>, news: Vec<NewDisk>) -> Swap {
        Swap {
            host,
            way,
            olds,
            news,
            recipe: Recipe::default(),
            phase: Phase::Queued,
            stop_requested: false,
            balancer_was_on: None,
            balancer_paused: false,
            initial_weight_set: false,
            deployment: None,
            handed: Vec::new(),
            cannot_hand: Vec::new(),
            settled: false,
            kept_pins: Vec::new(),
            retired: false,
            pgs_left: None,
            bytes_left: None,
            risk: None,
            passed_over: Vec::new(),
            failure: None,
            ending: None,
        }
    }

    /// `swap stop` is taken: before the old OSDs are retired (free bay);
    /// in place, until its removal has begun (`noout` set; the daemon's
    /// `swap stop` asks the removal too).
    pub fn can_stop(&self) -> bool {
        match self.way {
            Way::FreeBay => {
                matches!(self.phase, Phase::Queued | Phase::Preparing | Phase::Deploying | Phase::HandingOver)
            }
            Way::InPlace => matches!(self.phase, Phase::Queued | Phase::Retiring),
        }
    }

    pub fn old_ids(&self) -> Vec<u32> {
        self.olds.iter().map(|o| o.id).collect()
    }

    /// The new OSDs made so far.
    pub fn new_ids(&self) -> Vec<u32> {
        self.news.iter().filter_map(|n| n.osd).collect()
    }
}

/// The sections of the config database a swap sets `osd_crush_initial_weight`
/// in: each new OSD's own (`osd.N`, by its planned id). A mask on the host
/// would not do: the monitors match a `host:` mask against the OSD's place
/// in CRUSH, which a new OSD has not got at its first boot, when it reads
/// the option (seen on 16.2: it joined at its full weight).
pub fn initial_weight_sections(s: &Swap) -> Vec<String> {
    s.news.iter().filter_map(|n| n.planned_id).map(|id| format!("osd.{id}")).collect()
}

/// Where an osdkeeper before planned ids set the option: cleared too, so
/// that a swap it began leaves nothing behind.
pub fn legacy_initial_weight_section(host: &str) -> String {
    format!("osd/host:{host}")
}

/// The `n` lowest ids no OSD has: the ids Ceph would give new OSDs.
pub fn lowest_free_ids(taken: &[u32], n: usize) -> Vec<u32> {
    let mut taken = taken.to_vec();
    taken.sort_unstable();
    taken.dedup();
    let mut next = taken.iter().peekable();
    (0u32..)
        .filter(|id| {
            while next.next_if(|t| **t < *id).is_some() {}
            next.peek() != Some(&id)
        })
        .take(n)
        .collect()
}

/// One action on the cluster, a host or the store. Each is safe to repeat.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `ceph balancer off`.
    PauseBalancer,
    /// `ceph balancer on`.
    ResumeBalancer,
    /// `ceph config set osd.N osd_crush_initial_weight W` for each planned id.
    SetInitialWeight,
    /// `ceph config rm SECTION osd_crush_initial_weight` for each section.
    ClearInitialWeight,
    /// Store the deployment of the new disks (the deployment kind makes them).
    Deploy,
    /// `ceph osd crush reweight osd.N W`.
    Reweight { osd: u32, weight: f64 },
    /// `ceph osd pg-upmap-items PGID FROM TO ...`, one command per item.
    Upmap { items: Vec<UpmapItem> },
    /// The final CRUSH weights, in one CRUSH change.
    SetWeights { weights: Vec<(u32, f64)> },
    /// `ceph osd rm-pg-upmap-items PGID` for entries that are no-ops.
    RmUpmap { pgids: Vec<String> },
    /// Store a removal of each old OSD that has none of the swap's: free
    /// bay, stop, purge, zap and hold; in place, `noout`, stop, destroy
    /// keeping the id and zap, then wait for the id to be back.
    Retire,
    /// `osd rm stop` of the swap's removals (in place, `swap stop`).
    StopRemovals,
}

impl Effect {
    pub fn name(&self) -> &'static str {
        match self {
            Effect::PauseBalancer => "pause-balancer",
            Effect::ResumeBalancer => "resume-balancer",
            Effect::SetInitialWeight => "set-initial-weight",
            Effect::ClearInitialWeight => "clear-initial-weight",
            Effect::Deploy => "deploy",
            Effect::Reweight { .. } => "reweight",
            Effect::Upmap { .. } => "upmap",
            Effect::SetWeights { .. } => "set-weights",
            Effect::RmUpmap { .. } => "rm-upmap",
            Effect::Retire => "retire",
            Effect::StopRemovals => "stop-removals",
        }
    }
}

pub type Step = super::operation::Step<Swap, Effect>;

pub type SwapRecord = super::operation::Operation<Swap>;

impl super::operation::State for Swap {
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

    /// A swap destroys nothing itself: its removals do, each logging its acts.
    fn is_destructive(&self) -> bool {
        false
    }
}

/// Whether a swap changed in a way a reader sees: everything but the
/// figures of the hand-over, which move every round (they are shown, and
/// written with the next change).
pub fn changed(before: &Swap, after: &Swap) -> bool {
    let same_figures = Swap { pgs_left: before.pgs_left, bytes_left: before.bytes_left, ..after.clone() };
    *before != same_figures
}
