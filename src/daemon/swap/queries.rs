//! `swap ls` and `swap status N`: the swaps as stored, with the actions
//! each logged (in place, its removal's too: its `noout`, stop, destroy
//! and zap).

use super::Swaps;
use crate::daemon::DaemonError;
use crate::domain::operation::Action;
use crate::domain::swap::{SwapRecord, Way};
use crate::store::SwapCodec;

impl Swaps {
    /// The active swaps and the latest `history` finished ones, oldest first.
    pub async fn list(&self, history: i64) -> Result<Vec<SwapRecord>, DaemonError> {
        Ok(self.store.ops::<SwapCodec>().with_finished(history.clamp(0, 1000)).await?)
    }

    /// One swap with its actions, in place with its removal's, in the order issued.
    pub async fn get(&self, number: i64) -> Result<(SwapRecord, Vec<Action>), DaemonError> {
        let rec = self.store.ops::<SwapCodec>().get(number).await?;
        let mut actions = self.store.actions(rec.id).await?;
        if rec.state.way == Way::InPlace {
            for r in self.removals_of(&rec).await? {
                actions.extend(self.store.actions(r.id).await?);
            }
            actions.sort_by_key(|a| (a.issued_at, a.id));
        }
        Ok((rec, actions))
    }
}
