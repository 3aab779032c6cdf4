//! OSD deployments: persisted state-machine state and the action log. The
//! state is written before the action it leads to, and each action is
//! logged before it is issued.

use sqlx::Row;

use super::{Result, Store, StoreError};
use crate::domain::deploy::{DeployEffect, Deployment, DeploymentRecord};
use crate::wire::api::deployments::DeployAction;

const COLUMNS: &str = "id, state, waiting_on, last_error, created_at, updated_at, finished_at, version";

fn record_from(row: &sqlx::sqlite::SqliteRow) -> Result<DeploymentRecord> {
    let state: String = row.try_get("state")?;
    let deployment: Deployment =
        serde_json::from_str(&state).map_err(|e| StoreError::Corrupt(format!("deployment state: {e}")))?;
    Ok(DeploymentRecord {
        id: row.try_get("id")?,
        deployment,
        waiting_on: row.try_get("waiting_on")?,
        last_error: row.try_get("last_error")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        finished_at: row.try_get("finished_at")?,
        version: row.try_get("version")?,
    })
}

fn state_json(d: &Deployment) -> String {
    serde_json::to_string(d).expect("a deployment serializes")
}

impl Store {
    /// Starts a deployment; one active per spec and host.
    pub async fn add_deployment(&self, d: &Deployment, now: i64) -> Result<DeploymentRecord> {
        let inserted = sqlx::query(
            "INSERT INTO deployments (host, service_name, state, phase, active, created_at, updated_at)
             VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id",
        )
        .bind(&d.host)
        .bind(&d.service_name)
        .bind(state_json(d))
        .bind(d.phase.as_str())
        .bind(now)
        .bind(now)
        .fetch_one(&self.pool)
        .await;
        match inserted {
            Ok(row) => self.deployment(row.try_get(0)?).await,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                Err(StoreError::Conflict(format!("{} is already being deployed on {}", d.service_name, d.host)))
            }
            Err(e) => Err(e.into()),
        }
    }

    pub async fn deployment(&self, id: i64) -> Result<DeploymentRecord> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM deployments WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no deployment {id}")))?;
        record_from(&row)
    }

    pub async fn active_deployments(&self) -> Result<Vec<DeploymentRecord>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM deployments WHERE active = 1 ORDER BY id"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(record_from).collect()
    }

    /// The active deployments and the latest `finished_limit` finished ones, oldest first.
    pub async fn deployments(&self, finished_limit: i64) -> Result<Vec<DeploymentRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM deployments WHERE active = 1 OR id IN
               (SELECT id FROM deployments WHERE active = 0 ORDER BY id DESC LIMIT ?) ORDER BY id"
        ))
        .bind(finished_limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from).collect()
    }

    /// The latest deployment of a spec on a host, finished or not.
    pub async fn latest_deployment(&self, service_name: &str, host: &str) -> Result<Option<DeploymentRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM deployments WHERE service_name = ? AND host = ? ORDER BY id DESC LIMIT 1"
        ))
        .bind(service_name)
        .bind(host)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(record_from).transpose()
    }

    /// Writes a new state if nobody else wrote since `expected_version`.
    pub async fn save_deployment(&self, rec: &DeploymentRecord, expected_version: i64) -> Result<i64> {
        let finished = rec.deployment.phase.is_finished();
        let done = sqlx::query(
            "UPDATE deployments SET state = ?, phase = ?, active = ?, waiting_on = ?, last_error = ?, updated_at = ?,
                finished_at = ?, version = version + 1
             WHERE id = ? AND version = ?",
        )
        .bind(state_json(&rec.deployment))
        .bind(rec.deployment.phase.as_str())
        .bind(i64::from(!finished))
        .bind(&rec.waiting_on)
        .bind(&rec.last_error)
        .bind(rec.updated_at)
        .bind(rec.finished_at)
        .bind(rec.id)
        .bind(expected_version)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!("deployment {} changed concurrently", rec.id)));
        }
        Ok(expected_version + 1)
    }

    /// Logs an action before it is issued; returns its id.
    pub async fn log_deploy_action(&self, id: i64, effect: &DeployEffect, detail: &str, now: i64) -> Result<i64> {
        let action: i64 = sqlx::query_scalar(
            "INSERT INTO deployment_actions (deployment_id, effect, detail, issued_at) VALUES (?, ?, ?, ?) RETURNING id",
        )
        .bind(id)
        .bind(serde_json::to_string(effect).expect("an effect serializes"))
        .bind(detail)
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        Ok(action)
    }

    pub async fn finish_deploy_action(&self, action: i64, outcome: &str, now: i64) -> Result<()> {
        sqlx::query("UPDATE deployment_actions SET finished_at = ?, outcome = ? WHERE id = ?")
            .bind(now)
            .bind(outcome)
            .bind(action)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn deploy_actions(&self, id: i64) -> Result<Vec<DeployAction>> {
        let rows = sqlx::query(
            "SELECT id, effect, detail, issued_at, finished_at, outcome FROM deployment_actions
             WHERE deployment_id = ? ORDER BY id",
        )
        .bind(id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DeployAction {
                    id: r.try_get(0)?,
                    effect: r.try_get(1)?,
                    detail: r.try_get(2)?,
                    issued_at: r.try_get(3)?,
                    finished_at: r.try_get(4)?,
                    outcome: r.try_get(5)?,
                })
            })
            .collect()
    }
}
