//! Swaps on the operation kernel. Each round reads the cluster once; each
//! active swap then observes what its phase needs (`observe.rs`),
//! `domain::swap::advance` decides, the executor writes the step and logs
//! the action before the effect is carried out (`effects.rs`). After an
//! effect the next round looks again: what it did shows in the next read
//! (an entry in the osdmap, a deployment in the store). After a crash the
//! kernel simply observes again.

use std::sync::Arc;
use std::time::Duration;

use super::Swaps;
use crate::ceph::ClusterState;
use crate::daemon::operations::{Executor, Flow, OperationKind};
use crate::daemon::{DaemonError, Pace};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{record, Outcome, Recorded};
use crate::domain::swap::{advance, apply, changed, interrupted, Effect, Observation, Phase, Step, Swap, SwapRecord};
use crate::store::SwapCodec;

/// How soon a swap is looked at again after an effect: what it did shows
/// in the next read within moments.
const AFTER_ACTION: Duration = Duration::from_millis(500);

pub struct SwapKind {
    d: Arc<Swaps>,
}

impl Swaps {
    /// One round over all active swaps.
    #[tracing::instrument(skip_all)]
    pub async fn round(self: &Arc<Self>) -> Result<Pace, DaemonError> {
        let kind = SwapKind { d: self.clone() };
        Executor::new(kind, self.store.clone(), self.backoff).round().await
    }

    /// Each disk the swap newly leaves alone, and why: a used disk is
    /// never wiped by a swap.
    async fn announce_passed_over(&self, before: &SwapRecord, after: &SwapRecord) {
        let host = &after.state.host;
        for (path, why) in after.state.passed_over.iter().filter(|p| !before.state.passed_over.contains(p)) {
            let message = format!("Swap {} leaves {path} on {host} alone: {why}", after.number);
            self.events.record(Level::Warning, EventKind::DiskNotOurs, Some(host), Some(path), message).await;
        }
    }

    async fn announce(&self, before: &SwapRecord, after: &SwapRecord) {
        self.announce_passed_over(before, after).await;
        let (b, a) = (&before.state, &after.state);
        if b.phase == a.phase {
            return;
        }
        let host = a.host.clone();
        let (kind, level, message) = match a.phase {
            Phase::Done => (EventKind::SwapEnded, Level::Info, format!("Swap {} done", after.number)),
            Phase::Stopped | Phase::Failed => {
                let level = if a.phase == Phase::Failed { Level::Error } else { Level::Warning };
                let how = a.ending.clone().unwrap_or_else(|| a.phase.as_str().into());
                (EventKind::SwapEnded, level, format!("Swap {} {how}", after.number))
            }
            p => (EventKind::SwapPhase, Level::Info, format!("Swap {}: {}", after.number, p.as_str())),
        };
        self.events.record(level, kind, Some(&host), None, message).await;
        let made = b.phase == Phase::Deploying;
        if a.way == crate::domain::swap::Way::FreeBay && (made || a.phase.is_finished()) {
            // Its new OSDs are made, or it ended before: the disks need no
            // hold from specs any more (a disk with an OSD is no spec's).
            for disk in &a.news {
                match self.store.release(&host, &disk.path).await {
                    Ok(_) | Err(crate::store::StoreError::NotFound(_)) => {}
                    Err(e) => tracing::warn!("cannot release {} on {host}: {e}", disk.path),
                }
            }
        }
    }
}

impl OperationKind for SwapKind {
    type Codec = SwapCodec;
    type State = Swap;
    type Effect = Effect;
    type Output = String;
    type Round = Arc<ClusterState>;
    type Observation = Observation;

    async fn begin_round(&self, _active: &[SwapRecord]) -> Result<Arc<ClusterState>, DaemonError> {
        Ok(Arc::new(self.d.ceph.state().await.map_err(DaemonError::cluster_unreadable)?))
    }

    fn round_failed(&self, error: &DaemonError) -> Option<String> {
        Some(error.to_string())
    }

    async fn observe(&self, rec: &SwapRecord, state: &mut Arc<ClusterState>) -> Observation {
        self.d.observe(rec, state).await
    }

    fn advance(&self, rec: &SwapRecord, obs: &Observation, _now: i64) -> Step {
        advance(&rec.state, obs)
    }

    fn record(
        &self,
        rec: &SwapRecord,
        step: &Step,
        _obs: &Observation,
        _round: &mut Arc<ClusterState>,
        now: i64,
    ) -> Recorded<Swap> {
        record(rec, step, now, changed)
    }

    async fn after_step(&self, before: &SwapRecord, after: &SwapRecord, _step: &Step, _obs: &Observation) {
        self.d.announce(before, after).await;
    }

    fn detail(&self, rec: &SwapRecord, effect: &Effect) -> String {
        self.d.detail(rec, effect)
    }

    async fn perform(&self, rec: &SwapRecord, effect: &Effect) -> Outcome<String> {
        self.d.carry_out(rec, effect).await
    }

    fn done_detail(&self, text: &String) -> (String, Option<String>) {
        (text.clone(), None)
    }

    fn apply(&self, rec: &SwapRecord, effect: &Effect, outcome: &Outcome<String>, _now: i64) -> Swap {
        apply(&rec.state, effect, outcome)
    }

    async fn after_effect(
        &self,
        before: &SwapRecord,
        after: &SwapRecord,
        effect: &Effect,
        outcome: &Outcome<String>,
        _round: &mut Arc<ClusterState>,
    ) -> Flow {
        self.d.announce(before, after).await;
        if let Outcome::Failed(why) | Outcome::Unknown(why) | Outcome::Refused(why) = outcome {
            let message = format!("swap {}: {}: {why}", after.number, effect.name());
            let host = after.state.host.clone();
            self.d.events.record(Level::Error, EventKind::SwapActionFailed, Some(&host), None, message).await;
        }
        // The next round reads the cluster again: the effect shows there.
        Flow::Stop
    }

    fn interrupted(&self, state: &Swap, _effect: &Effect) -> Swap {
        interrupted(state)
    }

    async fn after_interrupted(&self, _before: &SwapRecord, _after: &SwapRecord) {}

    fn next_look(&self, rec: &SwapRecord, acted: bool) -> Option<Duration> {
        (acted && rec.last_error.is_none()).then_some(AFTER_ACTION)
    }

    async fn end_round(&self, _round: Option<Arc<ClusterState>>, _active: &[SwapRecord]) {}
}
