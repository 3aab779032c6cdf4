//! The action log every operation shares: an effect written before it
//! is carried out (its intent), completed with its outcome after.

use crate::domain::operation::{Action, Intent, OutcomeStatus};
use crate::store::{Result, Store};

impl Store {
    /// Logs an effect before it is carried out; returns the action's id.
    /// The commit proves the leader's lease (`store::lease`).
    pub async fn log_action(&self, operation_id: i64, intent: &Intent, now: i64) -> Result<i64> {
        let began = std::time::Instant::now();
        let id = self.backend.log_action(operation_id, intent, now).await?;
        self.proved(began);
        Ok(id)
    }

    /// Completes a logged action with its outcome.
    pub async fn finish_action(
        &self,
        action_id: i64,
        outcome: OutcomeStatus,
        detail: &str,
        output: Option<&str>,
        now: i64,
    ) -> Result<()> {
        self.backend.finish_action(action_id, outcome, detail, output, now).await
    }

    /// An operation's actions, oldest first (without their output).
    pub async fn actions(&self, operation_id: i64) -> Result<Vec<Action>> {
        self.backend.actions(operation_id).await
    }

    /// The latest action of an operation named `effect`, with its output.
    pub async fn latest_action(&self, operation_id: i64, effect: &str) -> Result<Option<Action>> {
        self.backend.latest_action(operation_id, effect).await
    }
}
