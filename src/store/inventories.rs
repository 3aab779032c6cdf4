//! The latest inventory of each host, as its agent sent it.

use sqlx::Row;

use super::{Result, Store, Topic};

#[derive(Debug, Clone, PartialEq)]
pub struct StoredInventory {
    pub host: String,
    pub taken_at: i64,
    pub received_at: i64,
    pub source: String,
    pub can_create_osds: bool,
    pub note: Option<String>,
    /// The ceph-volume inventory JSON list.
    pub devices: String,
    pub fingerprint: String,
}

fn inventory_from(row: &sqlx::sqlite::SqliteRow) -> Result<StoredInventory> {
    Ok(StoredInventory {
        host: row.try_get("host")?,
        taken_at: row.try_get("taken_at")?,
        received_at: row.try_get("received_at")?,
        source: row.try_get("source")?,
        can_create_osds: row.try_get::<i64, _>("can_create_osds")? != 0,
        note: row.try_get("note")?,
        devices: row.try_get("devices")?,
        fingerprint: row.try_get("fingerprint")?,
    })
}

const COLUMNS: &str = "host, taken_at, received_at, source, can_create_osds, note, devices, fingerprint";

impl Store {
    /// Stores a host's inventory and returns the one it replaces.
    pub async fn put_inventory(&self, inv: &StoredInventory) -> Result<Option<StoredInventory>> {
        let mut tx = self.write().await?;
        let previous = sqlx::query(&format!("SELECT {COLUMNS} FROM inventories WHERE host = ?"))
            .bind(&inv.host)
            .fetch_optional(&mut *tx)
            .await?
            .map(|r| inventory_from(&r))
            .transpose()?;
        sqlx::query(&format!(
            "INSERT INTO inventories ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT(host) DO UPDATE SET taken_at = excluded.taken_at, received_at = excluded.received_at,
               source = excluded.source, can_create_osds = excluded.can_create_osds, note = excluded.note,
               devices = excluded.devices, fingerprint = excluded.fingerprint"
        ))
        .bind(&inv.host)
        .bind(inv.taken_at)
        .bind(inv.received_at)
        .bind(&inv.source)
        .bind(i64::from(inv.can_create_osds))
        .bind(&inv.note)
        .bind(&inv.devices)
        .bind(&inv.fingerprint)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        if previous.as_ref().is_none_or(|p| p.fingerprint != inv.fingerprint) {
            self.changed(Topic::Inventories);
        }
        Ok(previous)
    }

    pub async fn inventory(&self, host: &str) -> Result<Option<StoredInventory>> {
        sqlx::query(&format!("SELECT {COLUMNS} FROM inventories WHERE host = ?"))
            .bind(host)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| inventory_from(&r))
            .transpose()
    }

    pub async fn inventories(&self) -> Result<Vec<StoredInventory>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM inventories")).fetch_all(&self.pool).await?;
        rows.iter().map(inventory_from).collect()
    }

    /// Only the fingerprints, to see which cached inventories are stale.
    pub async fn inventory_fingerprints(&self) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT host, fingerprint FROM inventories").fetch_all(&self.pool).await?;
        rows.iter().map(|r| Ok((r.try_get("host")?, r.try_get("fingerprint")?))).collect()
    }
}
