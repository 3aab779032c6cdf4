//! OSD deployment as a state machine: `advance(deployment, observation) -> step`.
//!
//! One deployment per (host, spec, set of disks) carries the planned
//! ceph-volume commands through to running OSDs:
//!
//! ```text
//! preparing ─► activating ─► starting ─► verifying ─► done
//!     │            │            │            │
//!     └────────────┴────────────┴────────────┴──► failed ─(backoff)─► preparing ... ─► gave-up
//! ```
//!
//! The worker persists the returned state before it performs the returned
//! effect, then observes again, as for removals. What ceph-volume made is
//! read from the host, never remembered on trust: a prepare counts as done
//! when ceph-volume lists an OSD of this cluster on each of its disks, so
//! after a crash at any point a disk that holds a prepared OSD is never
//! prepared again, and an OSD that was made but not yet started is found
//! and finished. Documented in docs/design/plan-and-apply.md.

mod advance;
#[cfg(test)]
mod tests;

use crate::domain::ceph_release::Release;
use crate::domain::command::Argv;

pub use advance::{advance, apply, changed, failed, ATTEMPTS, VERIFY_TIMEOUT_MS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeployPhase {
    Preparing,
    Activating,
    Starting,
    Verifying,
    Done,
    /// This attempt failed; another follows after a backoff.
    Failed,
    /// Failed `ATTEMPTS` times: its disks are held until released.
    GaveUp,
}

impl DeployPhase {
    pub const ALL: [DeployPhase; 7] = [
        DeployPhase::Preparing,
        DeployPhase::Activating,
        DeployPhase::Starting,
        DeployPhase::Verifying,
        DeployPhase::Done,
        DeployPhase::Failed,
        DeployPhase::GaveUp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeployPhase::Preparing => "preparing",
            DeployPhase::Activating => "activating",
            DeployPhase::Starting => "starting",
            DeployPhase::Verifying => "verifying",
            DeployPhase::Done => "done",
            DeployPhase::Failed => "failed",
            DeployPhase::GaveUp => "gave-up",
        }
    }

    pub fn parse(s: &str) -> Option<DeployPhase> {
        DeployPhase::ALL.iter().copied().find(|p| p.as_str() == s)
    }

    /// Nothing more will happen without an operator (a new spec, a released disk).
    pub fn is_finished(self) -> bool {
        matches!(self, DeployPhase::Done | DeployPhase::GaveUp)
    }
}

/// How ceph-volume made an OSD (as the agent lists it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsdKind {
    Raw,
    Lvm,
}

impl OsdKind {
    pub const ALL: [OsdKind; 2] = [OsdKind::Raw, OsdKind::Lvm];

    pub fn as_str(self) -> &'static str {
        match self {
            OsdKind::Raw => "raw",
            OsdKind::Lvm => "lvm",
        }
    }

    pub fn parse(s: &str) -> Option<OsdKind> {
        OsdKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// One planned ceph-volume command and the data devices it makes OSDs on.
#[derive(Debug, Clone, PartialEq)]
pub struct PrepareStep {
    /// The arguments after `ceph-volume`, as the planner wrote them. Stored
    /// as a list; a deployment stored before was one string, which reads
    /// as the words it was split into when it ran (`command::argv_or_line`).
    pub command: Argv,
    pub disks: Vec<String>,
    /// Sent to the agent in this attempt (written before it is sent).
    pub sent: bool,
    /// ceph-volume exited 0.
    pub succeeded: bool,
    /// Why it failed, once the agent answered so.
    pub failure: Option<String>,
}

impl PrepareStep {
    /// The ids of destroyed OSDs the command gives its new OSDs
    /// (`lvm batch ... --osd-ids 3 4`, `raw prepare ... --osd-id 3`), as
    /// ceph-volume's argparse reads them. The deployment does not keep the
    /// release it was planned for; any grammar that reads the command
    /// reads its ids alike.
    pub fn claimed_ids(&self) -> Vec<u32> {
        use crate::domain::osd_layout::args::{parse, Invocation};
        let read = Release::ALL.into_iter().find_map(|r| parse(&self.command, None, r).ok());
        let ids = match read {
            Some(Invocation::Batch(b)) => b.osd_ids,
            Some(Invocation::Raw(r)) => r.osd_id.into_iter().collect(),
            None => Vec::new(),
        };
        ids.iter().filter_map(|id| id.parse().ok()).collect()
    }
}

/// An OSD the deployment made (found in the host's listing).
#[derive(Debug, Clone, PartialEq)]
pub struct NewOsd {
    pub id: u32,
    pub osd_fsid: String,
    pub kind: OsdKind,
    pub device: String,
    pub activated: bool,
    pub started: bool,
    /// The cluster shows it up and in under its host (and class).
    pub verified: bool,
}

/// What is being deployed, and how far it got. Persisted.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    pub host: String,
    pub service_name: String,
    /// The spec's service_id: `CEPH_VOLUME_OSDSPEC_AFFINITY`, as cephadm sets it.
    pub service_id: Option<String>,
    pub spec_version: i64,
    /// The plan's identity (its commands and the disks' ids).
    pub run_key: String,
    pub crush_device_class: Option<String>,
    pub steps: Vec<PrepareStep>,
    pub osds: Vec<NewOsd>,
    pub phase: DeployPhase,
    /// 1 for the first try.
    pub attempt: u32,
    /// Why the last attempt failed.
    pub failure: Option<String>,
    /// When the next attempt may begin (ms since the epoch), after a failure.
    pub retry_at: Option<i64>,
    /// When verifying began, for its timeout.
    pub verifying_since: Option<i64>,
}

impl Deployment {
    pub fn new(
        host: String,
        service_name: String,
        service_id: Option<String>,
        spec_version: i64,
        run_key: String,
        crush_device_class: Option<String>,
        steps: Vec<(Argv, Vec<String>)>,
    ) -> Deployment {
        Deployment {
            host,
            service_name,
            service_id,
            spec_version,
            run_key,
            crush_device_class,
            steps: steps
                .into_iter()
                .map(|(command, disks)| PrepareStep { command, disks, sent: false, succeeded: false, failure: None })
                .collect(),
            osds: Vec::new(),
            phase: DeployPhase::Preparing,
            attempt: 1,
            failure: None,
            retry_at: None,
            verifying_since: None,
        }
    }

    /// Every data device of the plan.
    pub fn disks(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().flat_map(|s| s.disks.iter().map(String::as_str))
    }
}

/// One OSD as the host's ceph-volume lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub id: u32,
    pub osd_fsid: String,
    pub cluster_fsid: String,
    pub kind: OsdKind,
    pub device: String,
}

/// One OSD as the cluster shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct InCluster {
    pub up: bool,
    pub is_in: bool,
    pub crush_host: Option<String>,
    pub device_class: Option<String>,
    /// Destroyed for a replacement: its id waits for a new disk.
    pub destroyed: bool,
}

/// What the worker saw just now.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeployObservation {
    /// The host's listing; None when the agent could not be asked.
    pub listed: Option<Vec<Listed>>,
    pub cluster_fsid: String,
    /// The cluster's view of each OSD the deployment made, and of each
    /// destroyed id its commands claim (missing: not in the OSD map).
    pub cluster: Vec<(u32, InCluster)>,
    /// OSD ids whose daemon runs on the host, where the agent was asked.
    pub running: Vec<u32>,
    pub now: i64,
}

/// One action on the host. Each is safe to repeat: a prepare is sent only
/// for disks the listing shows empty, an activation and a start only for an
/// OSD the listing shows, and both are no-ops on a running OSD.
#[derive(Debug, Clone, PartialEq)]
pub enum DeployEffect {
    /// Run `steps[step].command` through the agent.
    Prepare {
        step: usize,
    },
    Activate {
        osd: u32,
    },
    Start {
        osd: u32,
    },
    /// `ceph osd crush rm-device-class osd.N` on a destroyed id about to be
    /// reused: a booting OSD sets its class only where none is bound, so an
    /// SSD taking an HDD's id would stay `hdd`.
    ClearDeviceClass {
        osd: u32,
    },
    /// Hold the plan's disks with the failure as reason (after the last attempt).
    HoldDisks,
}

impl DeployEffect {
    /// The effect's name (`OSDKEEPER_CRASH_AFTER=prepare`).
    pub fn name(&self) -> &'static str {
        match self {
            DeployEffect::Prepare { .. } => "prepare",
            DeployEffect::Activate { .. } => "activate",
            DeployEffect::Start { .. } => "start",
            DeployEffect::ClearDeviceClass { .. } => "clear-device-class",
            DeployEffect::HoldDisks => "hold-disks",
        }
    }
}

/// The next state, at most one effect, and what the deployment waits for.
pub type DeployStep = super::operation::Step<Deployment, DeployEffect>;

/// A deployment with its bookkeeping, as stored.
pub type DeploymentRecord = super::operation::Operation<Deployment>;

impl super::operation::State for Deployment {
    fn phase_name(&self) -> &'static str {
        self.phase.as_str()
    }

    fn is_finished(&self) -> bool {
        self.phase.is_finished()
    }
}

impl super::operation::Effect for DeployEffect {
    fn name(&self) -> &'static str {
        DeployEffect::name(self)
    }

    /// A prepare writes on the disks, but only on disks the listing shows
    /// empty; none of these destroys data.
    fn is_destructive(&self) -> bool {
        false
    }
}

/// What one deployment acts on: a spec on a host (one active at a time).
pub fn subject(host: &str, service_name: &str) -> String {
    format!("{host}:{service_name}")
}
