//! A draining removal's progress samples (the PGs left, the space used,
//! the bytes still to move and what holds them), and what someone else
//! did to the drain that a step undoes.

use super::RemovalKind;
use crate::domain::removal::{
    bytes_to_move, held_back, sample_due, undone_outside, Effect, Observation, Phase, RemovalRecord, Step,
};
use crate::store::DrainSampleRow;

impl RemovalKind {
    /// What someone else did to the drain that this step undoes, if the
    /// drain's own reweight (or mark-out) went through before.
    pub(super) async fn undone_by_someone_else(
        &self,
        rec: &RemovalRecord,
        step: &Step,
        obs: &Observation,
    ) -> Option<String> {
        let name = step.effect.as_ref().map(Effect::name)?;
        if rec.state.phase != Phase::Draining || !matches!(name, "reweight" | "mark-out") {
            return None;
        }
        let applied = match self.d.store.actions(rec.id).await {
            Ok(actions) => actions.iter().any(|a| a.succeeded() && a.effect == name),
            Err(e) => {
                tracing::error!("cannot read the actions of removal {}: {e}", rec.number);
                false
            }
        };
        let what = undone_outside(&rec.state, step, obs, applied);
        if let Some(w) = &what {
            tracing::warn!("{w}");
        }
        what
    }

    /// A progress sample when one is due (or when someone undid the drain):
    /// the PGs left, the space used, and the bytes still to move with what
    /// holds them, from the PGs still on the OSD.
    pub(super) async fn record_sample(&self, before: &RemovalRecord, after: &RemovalRecord, outside: Option<String>) {
        if !(after.state.phase.is_draining() || before.state.phase.is_draining()) {
            return;
        }
        let last = match self.d.store.recent_samples(after.id, 0).await {
            Ok(s) => s.last().map(|x| x.at),
            Err(e) => {
                tracing::error!("cannot read the samples of removal {}: {e}", after.number);
                return;
            }
        };
        let Some(pgs) = sample_due(before, after, last).or(after.state.pgs_now.filter(|_| outside.is_some())) else {
            return;
        };
        let osd = after.state.osd_id;
        let (bytes_left, held) = match self.d.ceph.pgs_on_osd(osd).await {
            Ok(on) => (Some(bytes_to_move(osd, &on) as i64), held_back(&on)),
            Err(e) => {
                tracing::warn!("cannot read the PGs still on osd.{osd}: {e}");
                (None, None)
            }
        };
        let blocked = match (outside, held) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        let sample =
            DrainSampleRow { at: after.updated_at, pgs, kb_used: after.state.kb_used_now, bytes_left, blocked };
        if let Err(e) = self.d.store.add_sample(after.id, &sample).await {
            tracing::error!("cannot record a progress sample of removal {}: {e}", after.number);
        }
    }
}
