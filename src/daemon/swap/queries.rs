//! `swap ls` and `swap status N`: the swaps as stored, with the actions
//! each logged.

use super::Swaps;
use crate::daemon::DaemonError;
use crate::domain::operation::Action;
use crate::domain::swap::SwapRecord;
use crate::store::SwapCodec;

impl Swaps {
    /// The active swaps and the latest `history` finished ones, oldest first.
    pub async fn list(&self, history: i64) -> Result<Vec<SwapRecord>, DaemonError> {
        Ok(self.store.ops::<SwapCodec>().with_finished(history.clamp(0, 1000)).await?)
    }

    /// One swap with its actions.
    pub async fn get(&self, number: i64) -> Result<(SwapRecord, Vec<Action>), DaemonError> {
        let rec = self.store.ops::<SwapCodec>().get(number).await?;
        let actions = self.store.actions(rec.id).await?;
        Ok((rec, actions))
    }
}
