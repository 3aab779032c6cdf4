//! One disk probe as an operation: asked (`queued`, the operator's intent
//! stored before any agent is asked), `running` (stored before the agent
//! is asked to run fio), then `done` with its figures or `failed` with why.
//! fio is never run twice for one probe: a probe a restart cut off, or one
//! found running without an outcome, fails; only an agent that was busy
//! with another disk command (and so ran nothing) puts it back in the queue.

use super::{DiskKey, JobFigures, ProbeFigures, ProbeMode};
use crate::domain::operation::{self, Outcome};

/// Where a probe is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbePhase {
    Queued,
    Running,
    Done,
    Failed,
}

impl ProbePhase {
    pub const ALL: [ProbePhase; 4] = [ProbePhase::Queued, ProbePhase::Running, ProbePhase::Done, ProbePhase::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            ProbePhase::Queued => "queued",
            ProbePhase::Running => "running",
            ProbePhase::Done => "done",
            ProbePhase::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<ProbePhase> {
        ProbePhase::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, ProbePhase::Done | ProbePhase::Failed)
    }
}

/// A probe: the disk, where it is and what makes it comparable (from the
/// inventory when it was asked), the mode, and how far it got.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub key: DiskKey,
    pub path: String,
    pub device_id: Option<String>,
    /// hdd, ssd or unknown.
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub mode: ProbeMode,
    pub phase: ProbePhase,
    pub started_at: Option<i64>,
    pub figures: Option<ProbeFigures>,
    pub jobs: Vec<JobFigures>,
    /// The fio command line the agent ran.
    pub command: Option<String>,
    /// What the agent checked and did, in order.
    pub steps: Vec<String>,
    pub error: Option<String>,
}

/// What fio measured, as the agent reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRun {
    pub figures: ProbeFigures,
    pub jobs: Vec<JobFigures>,
    pub command: String,
    pub steps: Vec<String>,
}

/// The probe's one effect: fio on the disk, through its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunFio;

impl operation::Effect for RunFio {
    fn name(&self) -> &'static str {
        "probe"
    }

    /// fio overwrites the start of the disk.
    fn is_destructive(&self) -> bool {
        true
    }
}

impl operation::State for Probe {
    fn phase_name(&self) -> &'static str {
        self.phase.as_str()
    }

    fn is_finished(&self) -> bool {
        self.phase.is_finished()
    }
}

pub type ProbeStep = operation::Step<Probe, RunFio>;

/// Why a probe found running without an outcome fails.
pub const INTERRUPTED: &str =
    "the daemon stopped while this probe ran; it is not run again (fio may have written on the disk; ask for a new probe)";

/// The next step: a queued probe is marked running and fio is asked for;
/// one found running (its outcome never recorded) fails, never runs again.
pub fn advance(p: &Probe, now: i64) -> ProbeStep {
    let mut next = p.clone();
    match p.phase {
        ProbePhase::Queued => {
            next.phase = ProbePhase::Running;
            next.started_at = Some(now);
            ProbeStep::act(next, RunFio)
        }
        ProbePhase::Running => ProbeStep::go(interrupted(next)),
        ProbePhase::Done | ProbePhase::Failed => ProbeStep::go(next),
    }
}

/// The probe after fio: its figures, or why it failed. An unknown outcome
/// is the agent saying it was busy with another disk command: fio did not
/// start, and the probe waits in the queue for the next round.
pub fn apply(p: &Probe, outcome: &Outcome<ProbeRun>) -> Probe {
    let mut next = p.clone();
    match outcome {
        Outcome::Done(run) => {
            next.phase = ProbePhase::Done;
            next.figures = Some(run.figures);
            next.jobs = run.jobs.clone();
            next.command = Some(run.command.clone());
            next.steps = run.steps.clone();
        }
        Outcome::Failed(why) | Outcome::Refused(why) => {
            next.phase = ProbePhase::Failed;
            next.error = Some(why.clone());
        }
        Outcome::Unknown(_) => {
            next.phase = ProbePhase::Queued;
            next.started_at = None;
        }
    }
    next
}

/// A probe whose fio a restart cut off: failed, never run again.
pub fn interrupted(mut p: Probe) -> Probe {
    if !p.phase.is_finished() {
        p.phase = ProbePhase::Failed;
        p.error = Some(INTERRUPTED.into());
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe() -> Probe {
        Probe {
            key: DiskKey::Id("SEAGATE_X_1".into()),
            path: "/dev/sdb".into(),
            device_id: Some("SEAGATE_X_1".into()),
            device_class: Some("hdd".into()),
            size_bytes: Some(4 << 40),
            model: None,
            mode: ProbeMode::Quick,
            phase: ProbePhase::Queued,
            started_at: None,
            figures: None,
            jobs: vec![],
            command: None,
            steps: vec![],
            error: None,
        }
    }

    fn run() -> ProbeRun {
        let figures = ProbeFigures { seq_write_bps: 1.0, seq_read_bps: 2.0, rand_read_iops: 3.0, sync_write_iops: 4.0 };
        ProbeRun { figures, jobs: vec![], command: "fio ...".into(), steps: vec!["checked".into()] }
    }

    #[test]
    fn a_probe_is_marked_running_before_fio_is_asked_for() {
        let s = advance(&probe(), 7);
        assert_eq!((s.next.phase, s.next.started_at, s.effect), (ProbePhase::Running, Some(7), Some(RunFio)));
        let done = apply(&s.next, &Outcome::Done(run()));
        assert_eq!((done.phase, done.command.as_deref()), (ProbePhase::Done, Some("fio ...")));
        assert_eq!(advance(&done, 9).effect, None);
    }

    #[test]
    fn fio_never_runs_twice() {
        let running = advance(&probe(), 7).next;
        let after = advance(&running, 9);
        assert_eq!((after.next.phase, after.effect), (ProbePhase::Failed, None), "found running: cut off");
        assert_eq!(after.next.error.as_deref(), Some(INTERRUPTED));
        let failed = apply(&running, &Outcome::Failed("the agent refused".into()));
        assert_eq!((failed.phase, failed.error.as_deref()), (ProbePhase::Failed, Some("the agent refused")));
    }

    #[test]
    fn a_busy_agent_puts_the_probe_back_in_the_queue() {
        let running = advance(&probe(), 7).next;
        let back = apply(&running, &Outcome::Unknown("busy".into()));
        assert_eq!((back.phase, back.started_at), (ProbePhase::Queued, None));
        for p in ProbePhase::ALL {
            assert_eq!(ProbePhase::parse(p.as_str()), Some(p));
        }
    }
}
