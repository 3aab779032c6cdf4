//! Inventories: the small columns in `inventories`, the device lists in
//! `inventory_devices`, written only when they changed.

use async_trait::async_trait;
use sqlx::{Row, Sqlite, Transaction};

use super::hosts::host_from;
use super::packed::{pack, unpack};
use super::SqliteBackend;
use crate::store::backend::InventoryRows;
use crate::store::{
    InventoryHead, InventorySeen, ManagedHost, PolledInventory, PutPolled, Replaced, Result, StoredInventory,
};

fn inventory_from(row: &sqlx::sqlite::SqliteRow) -> Result<StoredInventory> {
    let head = head_from(row)?;
    Ok(StoredInventory {
        devices: unpack(&head.host, row.try_get("devices")?)?,
        host: head.host,
        taken_at: head.taken_at,
        received_at: head.received_at,
        source: head.source,
        can_create_osds: head.can_create_osds,
        note: head.note,
        fingerprint: head.fingerprint,
        ceph_release: head.ceph_release,
    })
}

fn head_from(row: &sqlx::sqlite::SqliteRow) -> Result<InventoryHead> {
    Ok(InventoryHead {
        host: row.try_get("host")?,
        taken_at: row.try_get("taken_at")?,
        received_at: row.try_get("received_at")?,
        source: row.try_get("source")?,
        can_create_osds: row.try_get::<i64, _>("can_create_osds")? != 0,
        note: row.try_get("note")?,
        fingerprint: row.try_get("fingerprint")?,
        ceph_release: row.try_get("ceph_release")?,
    })
}

/// Hosts with their inventories' heads (`host_and_head`).
const WITH_HEADS: &str = "SELECT h.name, h.addr, h.labels, h.added_at, h.unreachable_since, h.last_error,
       h.consecutive_failures, h.next_poll_at, i.host AS i_host, i.taken_at AS i_taken_at,
       i.received_at AS i_received_at, i.source AS i_source, i.can_create_osds AS i_can_create_osds,
       i.note AS i_note, i.fingerprint AS i_fingerprint, i.ceph_release AS i_ceph_release
     FROM hosts h LEFT JOIN inventories i ON i.host = h.name";

fn host_and_head(row: &sqlx::sqlite::SqliteRow) -> Result<(ManagedHost, Option<InventoryHead>)> {
    let host = host_from(row)?;
    let Some(name) = row.try_get::<Option<String>, _>("i_host")? else { return Ok((host, None)) };
    let head = InventoryHead {
        host: name,
        taken_at: row.try_get("i_taken_at")?,
        received_at: row.try_get("i_received_at")?,
        source: row.try_get("i_source")?,
        can_create_osds: row.try_get::<i64, _>("i_can_create_osds")? != 0,
        note: row.try_get("i_note")?,
        fingerprint: row.try_get("i_fingerprint")?,
        ceph_release: row.try_get("i_ceph_release")?,
    };
    Ok((host, Some(head)))
}

const HEAD_COLUMNS: &str = "host, taken_at, received_at, source, can_create_osds, note, fingerprint, ceph_release";
/// The heads with their device lists.
const FULL: &str = "SELECT i.host, taken_at, received_at, source, can_create_osds, note, fingerprint, ceph_release,
       CAST(devices AS BLOB) AS devices
     FROM inventories i JOIN inventory_devices d ON d.host = i.host";

#[async_trait]
impl InventoryRows for SqliteBackend {
    async fn put_inventory(&self, inv: &StoredInventory) -> Result<Option<Replaced>> {
        let mut tx = self.write().await?;
        let previous = put_one(&mut tx, inv).await?;
        tx.commit().await?;
        Ok(previous)
    }

    async fn put_polled_inventories(&self, batch: &[PolledInventory]) -> Result<Vec<Option<PutPolled>>> {
        let mut tx = self.write().await?;
        let mut out = Vec::with_capacity(batch.len());
        for p in batch {
            // A host removed since its poll: its inventory would have no host.
            let Some(failures) = poll_succeeded(&mut tx, &p.inv.host, p.next_poll_at).await? else {
                out.push(None);
                continue;
            };
            let previous = put_one(&mut tx, &p.inv).await?;
            out.push(Some(PutPolled { previous, was_unreachable: failures > 0 }));
        }
        tx.commit().await?;
        Ok(out)
    }

    async fn touch_inventories(&self, seen: &[InventorySeen]) -> Result<Vec<usize>> {
        let mut tx = self.write().await?;
        let mut written = Vec::with_capacity(seen.len());
        for (i, s) in seen.iter().enumerate() {
            let done = sqlx::query("UPDATE inventories SET taken_at = ?1, received_at = ?1 WHERE host = ?2")
                .bind(s.at)
                .bind(&s.host)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() > 0 {
                written.push(i);
            }
            sqlx::query(
                "UPDATE hosts SET unreachable_since = NULL, last_error = NULL, consecutive_failures = 0,
                   next_poll_at = ?1 WHERE name = ?2",
            )
            .bind(s.next_poll_at)
            .bind(&s.host)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(written)
    }

    async fn inventory(&self, host: &str) -> Result<Option<StoredInventory>> {
        sqlx::query(&format!("{FULL} WHERE i.host = ?"))
            .bind(host)
            .fetch_optional(&self.reads)
            .await?
            .map(|r| inventory_from(&r))
            .transpose()
    }

    async fn inventories(&self) -> Result<Vec<StoredInventory>> {
        let rows = sqlx::query(FULL).fetch_all(&self.reads).await?;
        rows.iter().map(inventory_from).collect()
    }

    async fn inventory_head(&self, host: &str) -> Result<Option<InventoryHead>> {
        sqlx::query(&format!("SELECT {HEAD_COLUMNS} FROM inventories WHERE host = ?"))
            .bind(host)
            .fetch_optional(&self.reads)
            .await?
            .map(|r| head_from(&r))
            .transpose()
    }

    async fn due_hosts(&self, now: i64) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>> {
        let rows = sqlx::query(&format!("{WITH_HEADS} WHERE h.next_poll_at <= ? ORDER BY h.position"))
            .bind(now)
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(host_and_head).collect()
    }

    async fn next_poll_after(&self, now: i64) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar("SELECT min(next_poll_at) FROM hosts WHERE next_poll_at > ?")
            .bind(now)
            .fetch_one(&self.reads)
            .await?)
    }

    async fn hosts_with_heads(&self) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>> {
        let rows = sqlx::query(&format!("{WITH_HEADS} ORDER BY h.position")).fetch_all(&self.reads).await?;
        rows.iter().map(host_and_head).collect()
    }
}

/// Stores one inventory in `tx`, its device list only when it changed;
/// what it replaced.
async fn put_one(tx: &mut Transaction<'_, Sqlite>, inv: &StoredInventory) -> Result<Option<Replaced>> {
    let previous = sqlx::query(
        "SELECT fingerprint, CASE WHEN fingerprint = ?2 THEN NULL ELSE CAST(devices AS BLOB) END AS devices, ceph_release
         FROM inventories i JOIN inventory_devices d ON d.host = i.host WHERE i.host = ?1",
    )
    .bind(&inv.host)
    .bind(&inv.fingerprint)
    .fetch_optional(&mut **tx)
    .await?
    .map(|r| {
        let devices: Option<Vec<u8>> = r.try_get(1)?;
        Ok::<_, crate::store::StoreError>(Replaced {
            fingerprint: r.try_get(0)?,
            // A damaged list is replaced, not kept forever by failing the
            // batch's transaction: read as empty, all its devices are new.
            devices: devices.map(|d| {
                unpack(&inv.host, d).unwrap_or_else(|e| {
                    tracing::error!(host = inv.host, "the stored device list is replaced: {e}");
                    String::new()
                })
            }),
            ceph_release: r.try_get(2)?,
        })
    })
    .transpose()?;
    sqlx::query(&format!(
        "INSERT INTO inventories ({HEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(host) DO UPDATE SET taken_at = excluded.taken_at, received_at = excluded.received_at,
           source = excluded.source, can_create_osds = excluded.can_create_osds, note = excluded.note,
           fingerprint = excluded.fingerprint, ceph_release = excluded.ceph_release"
    ))
    .bind(&inv.host)
    .bind(inv.taken_at)
    .bind(inv.received_at)
    .bind(&inv.source)
    .bind(i64::from(inv.can_create_osds))
    .bind(&inv.note)
    .bind(&inv.fingerprint)
    .bind(&inv.ceph_release)
    .execute(&mut **tx)
    .await?;
    if previous.as_ref().is_none_or(|p| p.devices.is_some()) {
        sqlx::query(
            "INSERT INTO inventory_devices (host, devices) VALUES (?, ?)
             ON CONFLICT(host) DO UPDATE SET devices = excluded.devices",
        )
        .bind(&inv.host)
        .bind(pack(&inv.devices))
        .execute(&mut **tx)
        .await?;
    }
    Ok(previous)
}

/// Records a host's successful poll in `tx`: its failed polls before it,
/// None when there is no such host.
pub(super) async fn poll_succeeded(
    tx: &mut Transaction<'_, Sqlite>,
    name: &str,
    next_poll_at: i64,
) -> Result<Option<i64>> {
    let was: Option<i64> = sqlx::query_scalar("SELECT consecutive_failures FROM hosts WHERE name = ?")
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?;
    if was.is_some() {
        sqlx::query(
            "UPDATE hosts SET unreachable_since = NULL, last_error = NULL, consecutive_failures = 0, next_poll_at = ?1
             WHERE name = ?2",
        )
        .bind(next_poll_at)
        .bind(name)
        .execute(&mut **tx)
        .await?;
    }
    Ok(was)
}
