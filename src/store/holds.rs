//! Devices held back from every spec until an operator releases them.

use serde::Serialize;
use sqlx::Row;

use super::{Result, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Hold {
    pub host: String,
    pub path: String,
    pub reason: String,
    pub since: i64,
}

impl Store {
    /// Holds a device; holding it again keeps the first reason and time.
    pub async fn hold(&self, host: &str, path: &str, reason: &str, now: i64) -> Result<()> {
        sqlx::query("INSERT INTO held_devices (host, path, reason, since) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
            .bind(host)
            .bind(path)
            .bind(reason)
            .bind(now)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn release(&self, host: &str, path: &str) -> Result<Hold> {
        let row =
            sqlx::query("DELETE FROM held_devices WHERE host = ? AND path = ? RETURNING host, path, reason, since")
                .bind(host)
                .bind(path)
                .fetch_optional(&self.pool)
                .await?
                .ok_or_else(|| StoreError::NotFound(format!("{path} on {host} is not held")))?;
        Ok(Hold { host: row.try_get(0)?, path: row.try_get(1)?, reason: row.try_get(2)?, since: row.try_get(3)? })
    }

    pub async fn holds(&self) -> Result<Vec<Hold>> {
        let rows = sqlx::query("SELECT host, path, reason, since FROM held_devices ORDER BY host, path")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok(Hold { host: r.try_get(0)?, path: r.try_get(1)?, reason: r.try_get(2)?, since: r.try_get(3)? }))
            .collect()
    }
}
