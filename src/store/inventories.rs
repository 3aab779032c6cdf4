//! The latest inventory of each host, as its agent sent it. The device
//! lists live in a table of their own (`inventory_devices`): the many reads
//! that need no devices (the poller's ETags, planning from parsed devices
//! in memory, the read model) and the writes of an unchanged inventory's new
//! time never touch them.

use super::{ManagedHost, Result, Store, Topic};
use crate::wire::agent::inventory_etag;

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
    /// The release of ceph-volume's Ceph as the agent reported it
    /// (`18.2.7 (reef)`), kept as text: one this daemon does not know stays readable.
    pub ceph_release: Option<String>,
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
    pub ceph_release: Option<String>,
}

impl InventoryHead {
    /// The ETag the agent gives this inventory (`wire::agent::inventory_etag`).
    pub fn etag(&self) -> String {
        inventory_etag(
            &self.fingerprint,
            &self.source,
            self.can_create_osds,
            self.note.as_deref(),
            self.ceph_release.as_deref(),
        )
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
            ceph_release: i.ceph_release.clone(),
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

/// A fresh inventory from a successful poll, and when its host is polled next.
#[derive(Debug, Clone, PartialEq)]
pub struct PolledInventory {
    pub inv: StoredInventory,
    pub next_poll_at: i64,
}

/// What storing a polled inventory found.
#[derive(Debug, Clone, PartialEq)]
pub struct PutPolled {
    pub previous: Option<Replaced>,
    /// The host had failed polls before this one (it is reachable again).
    pub was_unreachable: bool,
}

/// Whether storing `inv` over `previous` changes what planning reads.
/// Another release reads the same list differently (`DeviceReport`), so a
/// new release is a change too.
fn is_change(previous: Option<&Replaced>, inv: &StoredInventory) -> bool {
    previous.is_none_or(|p| p.fingerprint != inv.fingerprint || p.ceph_release != inv.ceph_release)
}

/// What `put_inventory` replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Replaced {
    pub fingerprint: String,
    /// Its device list, when the new one differs (to tell what changed).
    pub devices: Option<String>,
    pub ceph_release: Option<String>,
}

impl Store {
    /// Stores a host's inventory; says what it replaced. The device list is
    /// written only when it changed.
    pub async fn put_inventory(&self, inv: &StoredInventory) -> Result<Option<Replaced>> {
        let previous = self.backend.put_inventory(inv).await?;
        self.changes.inventory_written(&inv.host, inv.taken_at);
        if is_change(previous.as_ref(), inv) {
            self.changed(Topic::Inventories);
        }
        Ok(previous)
    }

    /// Stores fresh inventories and their hosts' successful polls, in one
    /// transaction: a store in RADOS pays for each commit (about 16 ms),
    /// which one per host made a cold start of 2000 hosts take a minute
    /// (BENCHMARKS.md). For each, in order: None when its host is gone.
    pub async fn put_polled_inventories(&self, batch: &[PolledInventory]) -> Result<Vec<Option<PutPolled>>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let results = self.backend.put_polled_inventories(batch).await?;
        let mut inventories_changed = false;
        let mut hosts_changed = false;
        for (p, result) in batch.iter().zip(&results) {
            let Some(r) = result else { continue };
            self.changes.inventory_written(&p.inv.host, p.inv.taken_at);
            inventories_changed |= is_change(r.previous.as_ref(), &p.inv);
            hosts_changed |= r.was_unreachable;
        }
        if inventories_changed {
            self.changed(Topic::Inventories);
        }
        if hosts_changed {
            self.changed(Topic::Hosts);
        }
        Ok(results)
    }

    /// Records unchanged inventories seen again, in one transaction: their
    /// time, and their hosts' next poll (each host answered, so it is
    /// reachable). Hosts removed meanwhile are skipped.
    pub async fn touch_inventories(&self, seen: &[InventorySeen]) -> Result<()> {
        if seen.is_empty() {
            return Ok(());
        }
        for i in self.backend.touch_inventories(seen).await? {
            self.changes.inventory_written(&seen[i].host, seen[i].at);
        }
        Ok(())
    }

    pub async fn inventory(&self, host: &str) -> Result<Option<StoredInventory>> {
        self.backend.inventory(host).await
    }

    /// Every stored inventory with its device list: tens of MB at thousands
    /// of hosts (`hosts_with_heads` reads the rest alone).
    pub async fn inventories(&self) -> Result<Vec<StoredInventory>> {
        self.backend.inventories().await
    }

    pub async fn inventory_head(&self, host: &str) -> Result<Option<InventoryHead>> {
        self.backend.inventory_head(host).await
    }

    /// The hosts whose poll is due at `now`, each with its inventory's head
    /// (for the ETag to name), in the order they were added.
    pub async fn due_hosts(&self, now: i64) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>> {
        self.backend.due_hosts(now).await
    }

    /// When the first host that is not due at `now` is due.
    pub async fn next_poll_after(&self, now: i64) -> Result<Option<i64>> {
        self.backend.next_poll_after(now).await
    }

    /// Every host with its inventory's head, in the order they were added:
    /// one read of both for planning and the read model.
    pub async fn hosts_with_heads(&self) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>> {
        self.backend.hosts_with_heads().await
    }
}
