//! Hosts and their polling state.

use sqlx::Row;

use super::{json_list, Result, Store, StoreError, Topic};
use crate::wire::api::hosts::Host;

/// A failed poll, as the poller saw it.
#[derive(Debug, Clone)]
pub struct PollFailure {
    pub at: i64,
    pub error: String,
    pub next_poll_at: i64,
}

pub(super) fn host_from(row: &sqlx::sqlite::SqliteRow) -> Result<Host> {
    Ok(Host {
        name: row.try_get("name")?,
        addr: row.try_get("addr")?,
        labels: json_list(&row.try_get::<String, _>("labels")?)?,
        added_at: row.try_get("added_at")?,
        unreachable_since: row.try_get("unreachable_since")?,
        last_error: row.try_get("last_error")?,
        consecutive_failures: row.try_get("consecutive_failures")?,
        next_poll_at: row.try_get("next_poll_at")?,
    })
}

const HOST_COLUMNS: &str =
    "name, addr, labels, added_at, unreachable_since, last_error, consecutive_failures, next_poll_at";

impl Store {
    pub async fn add_host(&self, name: &str, addr: &str, labels: &[String], now: i64) -> Result<Host> {
        let labels_json = serde_json::to_string(labels).expect("strings serialize");
        let inserted = sqlx::query(
            "INSERT INTO hosts (name, addr, labels, position, added_at)
             VALUES (?1, ?2, ?3, (SELECT COALESCE(MAX(position), 0) + 1 FROM hosts), ?4)",
        )
        .bind(name)
        .bind(addr)
        .bind(&labels_json)
        .bind(now)
        .execute(&self.pool)
        .await;
        match inserted {
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(StoreError::Conflict(format!("host {name} is already known")))
            }
            other => other?,
        };
        self.changed(Topic::Hosts);
        self.host(name).await
    }

    pub async fn host(&self, name: &str) -> Result<Host> {
        let row = sqlx::query(&format!("SELECT {HOST_COLUMNS} FROM hosts WHERE name = ?"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("unknown host {name}")))?;
        host_from(&row)
    }

    /// Every host, in the order they were added.
    pub async fn hosts(&self) -> Result<Vec<Host>> {
        let rows =
            sqlx::query(&format!("SELECT {HOST_COLUMNS} FROM hosts ORDER BY position")).fetch_all(&self.pool).await?;
        rows.iter().map(host_from).collect()
    }

    pub async fn remove_host(&self, name: &str) -> Result<()> {
        let done = sqlx::query("DELETE FROM hosts WHERE name = ?").bind(name).execute(&self.pool).await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("unknown host {name}")));
        }
        // Its inventory and holds went with it (ON DELETE CASCADE).
        self.changes.inventory_removed(name);
        for topic in [Topic::Hosts, Topic::Inventories, Topic::Holds] {
            self.changed(topic);
        }
        Ok(())
    }

    pub async fn set_labels(&self, name: &str, labels: &[String]) -> Result<Host> {
        let labels_json = serde_json::to_string(labels).expect("strings serialize");
        let done = sqlx::query("UPDATE hosts SET labels = ? WHERE name = ?")
            .bind(labels_json)
            .bind(name)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(format!("unknown host {name}")));
        }
        self.changed(Topic::Hosts);
        self.host(name).await
    }

    /// Marks a poll as failed; returns true if the host just became unreachable.
    pub async fn record_poll_failure(&self, name: &str, f: &PollFailure) -> Result<bool> {
        let row = sqlx::query(
            "UPDATE hosts SET unreachable_since = COALESCE(unreachable_since, ?1), last_error = ?2,
                consecutive_failures = consecutive_failures + 1, next_poll_at = ?3
             WHERE name = ?4 RETURNING consecutive_failures",
        )
        .bind(f.at)
        .bind(&f.error)
        .bind(f.next_poll_at)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("unknown host {name}")))?;
        let became_unreachable = row.try_get::<i64, _>(0)? == 1;
        if became_unreachable {
            self.changed(Topic::Hosts);
        }
        Ok(became_unreachable)
    }

    /// Marks a poll as successful; returns true if the host was unreachable.
    pub async fn record_poll_success(&self, name: &str, next_poll_at: i64) -> Result<bool> {
        let mut tx = self.write().await?;
        let was: Option<i64> = sqlx::query_scalar("SELECT consecutive_failures FROM hosts WHERE name = ?")
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(was) = was else {
            return Err(StoreError::NotFound(format!("unknown host {name}")));
        };
        sqlx::query(
            "UPDATE hosts SET unreachable_since = NULL, last_error = NULL, consecutive_failures = 0, next_poll_at = ?1
             WHERE name = ?2",
        )
        .bind(next_poll_at)
        .bind(name)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        if was > 0 {
            self.changed(Topic::Hosts);
        }
        Ok(was > 0)
    }
}
