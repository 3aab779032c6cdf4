//! Disk probes on the operation kernel: a host's probes one after
//! another, hosts side by side; each marked running before fio is asked
//! for (`domain::probe::run`), its events, and the outliers a round's
//! results reveal.

use std::collections::HashSet;
use std::sync::Arc;

use super::probes::slow_probed_disks;
use super::Benchmarks;
use crate::daemon::operations::{Flow, OperationKind};
use crate::daemon::{live, DaemonError};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{record, Operation, Outcome, Recorded};
use crate::domain::probe::run::{self, Probe, ProbePhase, ProbeRun, ProbeStep, RunFio};
use crate::store::ProbeCodec;

/// The probe kind, as the executor drives it: a host's probes one after
/// another, hosts side by side.
pub struct ProbeKind {
    pub(super) b: Arc<Benchmarks>,
}

impl ProbeKind {
    async fn announce(&self, op: &Operation<Probe>) {
        let p = &op.state;
        let host = op.host.clone().unwrap_or_default();
        let subject = format!("probe {} of {} on {host}", op.number, p.path);
        let (level, kind, message) = match (p.phase, &p.figures) {
            (ProbePhase::Done, Some(f)) => {
                (Level::Info, EventKind::ProbeFinished, format!("{subject} ({}): {}", p.mode.as_str(), f.summary()))
            }
            _ => (
                Level::Error,
                EventKind::ProbeFailed,
                format!("{subject} failed: {}", p.error.as_deref().unwrap_or("no reason recorded")),
            ),
        };
        self.b.events.record(level, kind, Some(&host), Some(&p.path), message).await;
    }

    async fn announce_interrupted(&self, op: &Operation<Probe>) {
        let p = &op.state;
        let host = op.host.clone().unwrap_or_default();
        let message = format!("probe {} of {} on {host}: {}", op.number, p.path, run::INTERRUPTED);
        self.b.events.record(Level::Warning, EventKind::ProbeFailed, Some(&host), Some(&p.path), message).await;
    }
}

impl OperationKind for ProbeKind {
    type Codec = ProbeCodec;
    type State = Probe;
    type Effect = RunFio;
    type Output = (ProbeRun, Option<String>);
    /// The disks that were slow before the round, by stored disk key.
    type Round = Arc<HashSet<String>>;
    type Observation = ();

    async fn begin_round(&self, _active: &[Operation<Probe>]) -> Result<Self::Round, DaemonError> {
        Ok(Arc::new(slow_probed_disks(&self.b.store).await?.into_keys().collect()))
    }

    async fn observe(&self, _op: &Operation<Probe>, _round: &mut Self::Round) {}

    fn advance(&self, op: &Operation<Probe>, _obs: &(), now: i64) -> ProbeStep {
        run::advance(&op.state, now)
    }

    fn record(
        &self,
        op: &Operation<Probe>,
        step: &ProbeStep,
        _obs: &(),
        _r: &mut Self::Round,
        now: i64,
    ) -> Recorded<Probe> {
        record(op, step, now, |a, b| a != b)
    }

    async fn after_step(&self, before: &Operation<Probe>, after: &Operation<Probe>, step: &ProbeStep, _obs: &()) {
        // Found running with no outcome recorded: it was cut off.
        if step.effect.is_none() && before.state.phase == ProbePhase::Running && after.state.phase.is_finished() {
            self.announce_interrupted(after).await;
        }
    }

    fn detail(&self, op: &Operation<Probe>, _effect: &RunFio) -> String {
        format!("fio ({}) on {} of {}", op.state.mode.as_str(), op.state.path, op.host.as_deref().unwrap_or("?"))
    }

    async fn perform(&self, op: &Operation<Probe>, _effect: &RunFio) -> Outcome<Self::Output> {
        let span = tracing::info_span!("disk_probe", probe = op.number, path = %op.state.path);
        tracing::Instrument::instrument(self.b.run_fio(op), span).await
    }

    fn done_detail(&self, (run, fio): &Self::Output) -> (String, Option<String>) {
        (run.command.clone(), fio.clone())
    }

    fn apply(&self, op: &Operation<Probe>, _effect: &RunFio, outcome: &Outcome<Self::Output>, _now: i64) -> Probe {
        let outcome = match outcome {
            Outcome::Done((run, _)) => Outcome::Done(run.clone()),
            Outcome::Failed(why) | Outcome::Refused(why) => Outcome::Failed(why.clone()),
            Outcome::Unknown(why) => Outcome::Unknown(why.clone()),
        };
        run::apply(&op.state, &outcome)
    }

    async fn after_effect(
        &self,
        _before: &Operation<Probe>,
        after: &Operation<Probe>,
        _effect: &RunFio,
        outcome: &Outcome<Self::Output>,
        _round: &mut Self::Round,
    ) -> Flow {
        if let Outcome::Unknown(why) = outcome {
            tracing::info!(probe = after.number, "{why}; the probe waits for the next round");
        } else {
            self.announce(after).await;
        }
        self.b.events.notify(live::Live::Hosts { hosts: after.host.iter().cloned().collect() });
        Flow::Stop
    }

    fn interrupted(&self, state: &Probe, _effect: &RunFio) -> Probe {
        run::interrupted(state.clone())
    }

    async fn after_interrupted(&self, _before: &Operation<Probe>, after: &Operation<Probe>) {
        self.announce_interrupted(after).await;
    }

    fn lane(&self, op: &Operation<Probe>) -> Option<String> {
        op.host.clone()
    }

    async fn end_round(&self, round: Option<Self::Round>, _active: &[Operation<Probe>]) {
        let Some(before) = round else { return };
        match slow_probed_disks(&self.b.store).await {
            Ok(now) => {
                for (key, message) in now {
                    if !before.contains(&key) {
                        let (host, path) = self.b.where_probed(&key).await;
                        self.b
                            .events
                            .record(Level::Warning, EventKind::ProbeOutlier, host.as_deref(), path.as_deref(), message)
                            .await;
                    }
                }
            }
            Err(e) => tracing::error!("cannot judge the probed disks: {e}"),
        }
        // A finished probe may let a gated spec go on.
        self.b.reconciler.wake();
    }
}
