//! The action log every operation shares.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::domain::operation::{Action, Intent, OutcomeStatus};
use crate::store::backend::ActionRows;
use crate::store::{Result, StoreError};

pub(super) fn action_from(row: &sqlx::sqlite::SqliteRow) -> Result<Action> {
    let outcome: Option<String> = row.try_get("outcome")?;
    let outcome = match outcome {
        Some(o) => {
            Some(OutcomeStatus::parse(&o).ok_or_else(|| StoreError::Corrupt(format!("an action's outcome {o:?}")))?)
        }
        None => None,
    };
    Ok(Action {
        id: row.try_get("id")?,
        operation_id: row.try_get("operation_id")?,
        effect: row.try_get("effect")?,
        args: row.try_get("args")?,
        detail: row.try_get("detail")?,
        destructive: row.try_get::<i64, _>("destructive")? != 0,
        issued_at: row.try_get("issued_at")?,
        finished_at: row.try_get("finished_at")?,
        outcome,
        outcome_detail: row.try_get("outcome_detail")?,
        output: row.try_get("output")?,
    })
}

pub(super) const ACTION_COLUMNS: &str =
    "id, operation_id, effect, args, detail, destructive, issued_at, finished_at, outcome, outcome_detail";

#[async_trait]
impl ActionRows for SqliteBackend {
    async fn log_action(&self, operation_id: i64, intent: &Intent, now: i64) -> Result<i64> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO operation_actions (operation_id, effect, args, detail, destructive, issued_at)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(operation_id)
        .bind(intent.effect)
        .bind(&intent.args)
        .bind(&intent.detail)
        .bind(i64::from(intent.destructive))
        .bind(now)
        .fetch_one(&self.writes)
        .await?;
        Ok(id)
    }

    async fn finish_action(
        &self,
        action_id: i64,
        outcome: OutcomeStatus,
        detail: &str,
        output: Option<&str>,
        now: i64,
    ) -> Result<()> {
        sqlx::query(
            "UPDATE operation_actions SET finished_at = ?, outcome = ?, outcome_detail = ?, output = ? WHERE id = ?",
        )
        .bind(now)
        .bind(outcome.as_str())
        .bind(detail)
        .bind(output)
        .bind(action_id)
        .execute(&self.writes)
        .await?;
        Ok(())
    }

    async fn actions(&self, operation_id: i64) -> Result<Vec<Action>> {
        let rows = sqlx::query(&format!(
            "SELECT {ACTION_COLUMNS}, NULL AS output FROM operation_actions WHERE operation_id = ? ORDER BY id"
        ))
        .bind(operation_id)
        .fetch_all(&self.reads)
        .await?;
        rows.iter().map(action_from).collect()
    }

    async fn latest_action(&self, operation_id: i64, effect: &str) -> Result<Option<Action>> {
        let row = sqlx::query(&format!(
            "SELECT {ACTION_COLUMNS}, output FROM operation_actions WHERE operation_id = ? AND effect = ?
             ORDER BY id DESC LIMIT 1"
        ))
        .bind(operation_id)
        .bind(effect)
        .fetch_optional(&self.reads)
        .await?;
        row.as_ref().map(action_from).transpose()
    }
}
