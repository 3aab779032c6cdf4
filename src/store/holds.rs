//! Devices held back from every spec until an operator releases them.

use sqlx::Row;

use super::{Result, Store, StoreError, Topic};
use crate::wire::api::devices::Hold;

impl Store {
    /// Holds a device; holding it again keeps the first reason and time.
    pub async fn hold(&self, host: &str, path: &str, device_id: Option<&str>, reason: &str, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO held_devices (host, path, reason, since, device_id) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(host)
        .bind(path)
        .bind(reason)
        .bind(now)
        .bind(device_id.filter(|d| !d.is_empty()))
            .execute(&self.pool)
            .await?;
        self.changed(Topic::Holds);
        Ok(())
    }

    pub async fn release(&self, host: &str, path: &str) -> Result<Hold> {
        let row = sqlx::query(
            "DELETE FROM held_devices WHERE host = ? AND path = ? RETURNING host, path, reason, since, device_id",
        )
        .bind(host)
        .bind(path)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("{path} on {host} is not held")))?;
        self.changed(Topic::Holds);
        Ok(Hold {
            host: row.try_get(0)?,
            path: row.try_get(1)?,
            reason: row.try_get(2)?,
            since: row.try_get(3)?,
            device_id: row.try_get(4)?,
        })
    }

    pub async fn holds(&self) -> Result<Vec<Hold>> {
        let rows = sqlx::query("SELECT host, path, reason, since, device_id FROM held_devices ORDER BY host, path")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Hold {
                    host: r.try_get(0)?,
                    path: r.try_get(1)?,
                    reason: r.try_get(2)?,
                    since: r.try_get(3)?,
                    device_id: r.try_get(4)?,
                })
            })
            .collect()
    }
}
