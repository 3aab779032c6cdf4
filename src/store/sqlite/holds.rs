//! Devices held back from every spec.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::store::backend::HoldRows;
use crate::store::{HeldDevice, Result};

fn hold_from(r: &sqlx::sqlite::SqliteRow) -> Result<HeldDevice> {
    Ok(HeldDevice {
        host: r.try_get(0)?,
        path: r.try_get(1)?,
        reason: r.try_get(2)?,
        since: r.try_get(3)?,
        device_id: r.try_get(4)?,
        waits_for_slot: r.try_get(5)?,
    })
}

#[async_trait]
impl HoldRows for SqliteBackend {
    async fn hold(
        &self,
        host: &str,
        path: &str,
        device_id: Option<&str>,
        reason: &str,
        waits_for_slot: Option<&str>,
        now: i64,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO held_devices (host, path, reason, since, device_id, waits_for_slot) VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT DO NOTHING",
        )
        .bind(host)
        .bind(path)
        .bind(reason)
        .bind(now)
        .bind(device_id)
        .bind(waits_for_slot)
        .execute(&self.writes)
        .await?;
        Ok(())
    }

    async fn hold_for_slot(
        &self,
        host: &str,
        path: &str,
        device_id: Option<&str>,
        reason: &str,
        slot: &str,
        now: i64,
    ) -> Result<Option<HeldDevice>> {
        let mut tx = self.write().await?;
        let before = sqlx::query(
            "DELETE FROM held_devices WHERE host = ? AND path = ? \
             RETURNING host, path, reason, since, device_id, waits_for_slot",
        )
        .bind(host)
        .bind(path)
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO held_devices (host, path, reason, since, device_id, waits_for_slot) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(host)
        .bind(path)
        .bind(reason)
        .bind(now)
        .bind(device_id)
        .bind(slot)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        before.as_ref().map(hold_from).transpose()
    }

    async fn release(&self, host: &str, path: &str) -> Result<Option<HeldDevice>> {
        let row = sqlx::query(
            "DELETE FROM held_devices WHERE host = ? AND path = ? RETURNING host, path, reason, since, device_id, waits_for_slot",
        )
        .bind(host)
        .bind(path)
        .fetch_optional(&self.writes)
        .await?;
        row.as_ref().map(hold_from).transpose()
    }

    async fn release_slot(&self, host: &str, slot: &str) -> Result<Vec<HeldDevice>> {
        let rows = sqlx::query(
            "DELETE FROM held_devices WHERE host = ? AND waits_for_slot = ? \
             RETURNING host, path, reason, since, device_id, waits_for_slot",
        )
        .bind(host)
        .bind(slot)
        .fetch_all(&self.writes)
        .await?;
        let mut lifted = rows.iter().map(hold_from).collect::<Result<Vec<_>>>()?;
        lifted.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(lifted)
    }

    async fn holds(&self) -> Result<Vec<HeldDevice>> {
        let rows = sqlx::query(
            "SELECT host, path, reason, since, device_id, waits_for_slot FROM held_devices ORDER BY host, path",
        )
        .fetch_all(&self.reads)
        .await?;
        rows.iter().map(hold_from).collect()
    }
}
