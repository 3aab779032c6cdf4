//! Hosts and their polling state.

use async_trait::async_trait;
use sqlx::Row;

use super::events::insert_event;
use super::{json_list, unique_violation, SqliteBackend};
use crate::store::backend::HostRows;
use crate::store::{ManagedHost, NewHost, PollFailure, Result};

pub(super) fn host_from(row: &sqlx::sqlite::SqliteRow) -> Result<ManagedHost> {
    Ok(ManagedHost {
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

#[async_trait]
impl HostRows for SqliteBackend {
    async fn add_host(&self, name: &str, addr: &str, labels: &[String], now: i64) -> Result<Option<ManagedHost>> {
        let labels_json = serde_json::to_string(labels).expect("strings serialize");
        let inserted = sqlx::query(&format!(
            "INSERT INTO hosts (name, addr, labels, position, added_at)
             VALUES (?1, ?2, ?3, (SELECT COALESCE(MAX(position), 0) + 1 FROM hosts), ?4)
             RETURNING {HOST_COLUMNS}"
        ))
        .bind(name)
        .bind(addr)
        .bind(&labels_json)
        .bind(now)
        .fetch_one(&self.writes)
        .await;
        match inserted {
            Ok(row) => host_from(&row).map(Some),
            Err(e) if unique_violation(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn add_hosts(&self, hosts: &[NewHost], now: i64) -> Result<Vec<Option<(ManagedHost, i64)>>> {
        let mut tx = self.write().await?;
        let mut added = Vec::with_capacity(hosts.len());
        for h in hosts {
            let labels_json = serde_json::to_string(&h.labels).expect("strings serialize");
            let row = sqlx::query(&format!(
                "INSERT INTO hosts (name, addr, labels, position, added_at)
                 VALUES (?1, ?2, ?3, (SELECT COALESCE(MAX(position), 0) + 1 FROM hosts), ?4)
                 ON CONFLICT(name) DO NOTHING
                 RETURNING {HOST_COLUMNS}"
            ))
            .bind(&h.name)
            .bind(&h.addr)
            .bind(&labels_json)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = row else {
                added.push(None);
                continue;
            };
            let id = insert_event(&mut *tx, &h.event, now).await?;
            added.push(Some((host_from(&row)?, id)));
        }
        tx.commit().await?;
        Ok(added)
    }

    async fn host(&self, name: &str) -> Result<Option<ManagedHost>> {
        let row = sqlx::query(&format!("SELECT {HOST_COLUMNS} FROM hosts WHERE name = ?"))
            .bind(name)
            .fetch_optional(&self.reads)
            .await?;
        row.as_ref().map(host_from).transpose()
    }

    async fn hosts(&self) -> Result<Vec<ManagedHost>> {
        let rows =
            sqlx::query(&format!("SELECT {HOST_COLUMNS} FROM hosts ORDER BY position")).fetch_all(&self.reads).await?;
        rows.iter().map(host_from).collect()
    }

    async fn remove_host(&self, name: &str) -> Result<bool> {
        // Its inventory and holds go with it (ON DELETE CASCADE).
        let done = sqlx::query("DELETE FROM hosts WHERE name = ?").bind(name).execute(&self.writes).await?;
        Ok(done.rows_affected() > 0)
    }

    async fn set_labels(&self, name: &str, labels: &[String]) -> Result<Option<ManagedHost>> {
        let labels_json = serde_json::to_string(labels).expect("strings serialize");
        let row = sqlx::query(&format!("UPDATE hosts SET labels = ? WHERE name = ? RETURNING {HOST_COLUMNS}"))
            .bind(labels_json)
            .bind(name)
            .fetch_optional(&self.writes)
            .await?;
        row.as_ref().map(host_from).transpose()
    }

    async fn record_poll_failure(&self, name: &str, f: &PollFailure) -> Result<Option<bool>> {
        let row = sqlx::query(
            "UPDATE hosts SET unreachable_since = COALESCE(unreachable_since, ?1), last_error = ?2,
                consecutive_failures = consecutive_failures + 1, next_poll_at = ?3
             WHERE name = ?4 RETURNING consecutive_failures",
        )
        .bind(f.at)
        .bind(&f.error)
        .bind(f.next_poll_at)
        .bind(name)
        .fetch_optional(&self.writes)
        .await?;
        row.map(|r| Ok(r.try_get::<i64, _>(0)? == 1)).transpose()
    }

    async fn record_poll_success(&self, name: &str, next_poll_at: i64) -> Result<Option<bool>> {
        let mut tx = self.write().await?;
        let was = super::inventories::poll_succeeded(&mut tx, name, next_poll_at).await?;
        tx.commit().await?;
        Ok(was.map(|failures| failures > 0))
    }
}
