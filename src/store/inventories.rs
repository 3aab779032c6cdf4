//! The latest inventory of each host, as its agent sent it. The device
//! lists live in a table of their own (`inventory_devices`): the many reads
//! that need no devices (the poller's ETags, planning from parsed devices
//! in memory, the read model) and the writes of an unchanged inventory's new
//! time never touch them.

use sqlx::Row;

use super::hosts::host_from;
use super::{Result, Store, Topic};
use crate::wire::agent::inventory_etag;
use crate::wire::api::hosts::Host;

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

/// A stored inventory without its device list (tens of KB per host).
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryHead {
    pub host: String,
    pub taken_at: i64,
    pub received_at: i64,
    pub source: String,
    pub can_create_osds: bool,
    pub note: Option<String>,
    pub fingerprint: String,
}

impl InventoryHead {
    /// The ETag the agent gives this inventory (`wire::agent::inventory_etag`).
    pub fn etag(&self) -> String {
        inventory_etag(&self.fingerprint, &self.source, self.can_create_osds, self.note.as_deref())
    }
}

impl From<&StoredInventory> for InventoryHead {
    fn from(i: &StoredInventory) -> Self {
        InventoryHead {
            host: i.host.clone(),
            taken_at: i.taken_at,
            received_at: i.received_at,
            source: i.source.clone(),
            can_create_osds: i.can_create_osds,
            note: i.note.clone(),
            fingerprint: i.fingerprint.clone(),
        }
    }
}

/// An unchanged inventory seen again: when, and when its host is polled next.
#[derive(Debug, Clone, PartialEq)]
pub struct InventorySeen {
    pub host: String,
    pub at: i64,
    pub next_poll_at: i64,
}

/// What `put_inventory` replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    pub fingerprint: String,
    /// Its device list, when the new one differs (to tell what changed).
    pub devices: Option<String>,
}

fn inventory_from(row: &sqlx::sqlite::SqliteRow) -> Result<StoredInventory> {
    let head = head_from(row)?;
    Ok(StoredInventory {
        devices: row.try_get("devices")?,
        host: head.host,
        taken_at: head.taken_at,
        received_at: head.received_at,
        source: head.source,
        can_create_osds: head.can_create_osds,
        note: head.note,
        fingerprint: head.fingerprint,
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
    })
}

/// Hosts with their inventories' heads (`host_and_head`).
const WITH_HEADS: &str = "SELECT h.name, h.addr, h.labels, h.added_at, h.unreachable_since, h.last_error,
       h.consecutive_failures, h.next_poll_at, i.host AS i_host, i.taken_at AS i_taken_at,
       i.received_at AS i_received_at, i.source AS i_source, i.can_create_osds AS i_can_create_osds,
       i.note AS i_note, i.fingerprint AS i_fingerprint
     FROM hosts h LEFT JOIN inventories i ON i.host = h.name";

fn host_and_head(row: &sqlx::sqlite::SqliteRow) -> Result<(Host, Option<InventoryHead>)> {
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
    };
    Ok((host, Some(head)))
}

const HEAD_COLUMNS: &str = "host, taken_at, received_at, source, can_create_osds, note, fingerprint";
/// The heads with their device lists.
const FULL: &str = "SELECT i.host, taken_at, received_at, source, can_create_osds, note, fingerprint, devices
     FROM inventories i JOIN inventory_devices d ON d.host = i.host";

impl Store {
    /// Stores a host's inventory; says what it replaced. The device list is
    /// written only when it changed.
    pub async fn put_inventory(&self, inv: &StoredInventory) -> Result<Option<Replaced>> {
        let mut tx = self.write().await?;
        let previous = sqlx::query(
            "SELECT fingerprint, CASE WHEN fingerprint = ?2 THEN NULL ELSE devices END AS devices
             FROM inventories i JOIN inventory_devices d ON d.host = i.host WHERE i.host = ?1",
        )
        .bind(&inv.host)
        .bind(&inv.fingerprint)
        .fetch_optional(&mut *tx)
        .await?
        .map(|r| Ok::<_, sqlx::Error>(Replaced { fingerprint: r.try_get(0)?, devices: r.try_get(1)? }))
        .transpose()?;
        sqlx::query(&format!(
            "INSERT INTO inventories ({HEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT(host) DO UPDATE SET taken_at = excluded.taken_at, received_at = excluded.received_at,
               source = excluded.source, can_create_osds = excluded.can_create_osds, note = excluded.note,
               fingerprint = excluded.fingerprint"
        ))
        .bind(&inv.host)
        .bind(inv.taken_at)
        .bind(inv.received_at)
        .bind(&inv.source)
        .bind(i64::from(inv.can_create_osds))
        .bind(&inv.note)
        .bind(&inv.fingerprint)
        .execute(&mut *tx)
        .await?;
        if previous.as_ref().is_none_or(|p| p.devices.is_some()) {
            sqlx::query(
                "INSERT INTO inventory_devices (host, devices) VALUES (?, ?)
                 ON CONFLICT(host) DO UPDATE SET devices = excluded.devices",
            )
            .bind(&inv.host)
            .bind(&inv.devices)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        self.changes.inventory_written(&inv.host, inv.taken_at);
        if previous.as_ref().is_none_or(|p| p.fingerprint != inv.fingerprint) {
            self.changed(Topic::Inventories);
        }
        Ok(previous)
    }

    /// Records unchanged inventories seen again, in one transaction: their
    /// time, and their hosts' next poll (each host answered, so it is
    /// reachable). Hosts removed meanwhile are skipped.
    pub async fn touch_inventories(&self, seen: &[InventorySeen]) -> Result<()> {
        if seen.is_empty() {
            return Ok(());
        }
        let mut tx = self.write().await?;
        let mut written = Vec::with_capacity(seen.len());
        for s in seen {
            let done = sqlx::query("UPDATE inventories SET taken_at = ?1, received_at = ?1 WHERE host = ?2")
                .bind(s.at)
                .bind(&s.host)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() > 0 {
                written.push(s);
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
        for s in written {
            self.changes.inventory_written(&s.host, s.at);
        }
        Ok(())
    }

    pub async fn inventory(&self, host: &str) -> Result<Option<StoredInventory>> {
        sqlx::query(&format!("{FULL} WHERE i.host = ?"))
            .bind(host)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| inventory_from(&r))
            .transpose()
    }

    /// Every stored inventory with its device list: tens of MB at thousands
    /// of hosts (`hosts_with_heads` reads the rest alone).
    pub async fn inventories(&self) -> Result<Vec<StoredInventory>> {
        let rows = sqlx::query(FULL).fetch_all(&self.pool).await?;
        rows.iter().map(inventory_from).collect()
    }

    pub async fn inventory_head(&self, host: &str) -> Result<Option<InventoryHead>> {
        sqlx::query(&format!("SELECT {HEAD_COLUMNS} FROM inventories WHERE host = ?"))
            .bind(host)
            .fetch_optional(&self.pool)
            .await?
            .map(|r| head_from(&r))
            .transpose()
    }

    /// The hosts whose poll is due at `now`, each with its inventory's head
    /// (for the ETag to name), in the order they were added.
    pub async fn due_hosts(&self, now: i64) -> Result<Vec<(Host, Option<InventoryHead>)>> {
        let rows = sqlx::query(&format!("{WITH_HEADS} WHERE h.next_poll_at <= ? ORDER BY h.position"))
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(host_and_head).collect()
    }

    /// When the first host that is not due at `now` is due.
    pub async fn next_poll_after(&self, now: i64) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar("SELECT min(next_poll_at) FROM hosts WHERE next_poll_at > ?")
            .bind(now)
            .fetch_one(&self.pool)
            .await?)
    }

    /// Every host with its inventory's head, in the order they were added:
    /// one read of both for planning and the read model.
    pub async fn hosts_with_heads(&self) -> Result<Vec<(Host, Option<InventoryHead>)>> {
        let rows = sqlx::query(&format!("{WITH_HEADS} ORDER BY h.position")).fetch_all(&self.pool).await?;
        rows.iter().map(host_and_head).collect()
    }
}
