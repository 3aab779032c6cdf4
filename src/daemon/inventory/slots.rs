//! The slots `device replace` holds: when a host's inventory shows a new
//! disk in one (`domain::device_replace::slot_filled`) and none of the
//! slot's OSDs is still being removed, every hold waiting on it is lifted
//! and the specs redeploy the destroyed ids. Until then, the old disk still
//! in the slot gets ceph-volume's "being replaced" header
//! (`replace_header.rs`).

use std::collections::BTreeSet;

use super::Inventory;
use crate::domain::device_replace::slot_filled;
use crate::domain::event::{EventKind, Level};
use crate::domain::inventory::Device;
use crate::domain::removal::Phase;
use crate::store::RemovalCodec;

impl Inventory {
    /// Wakes the planner (a hold lifted, a replacement cleared).
    pub fn wake_reconciler(&self) {
        self.workers.reconciler.wake();
    }

    /// `release_filled_slots` with the host's stored inventory.
    pub async fn recheck_slots(&self, host: &str) {
        match self.store.inventory(host).await {
            Ok(Some(inv)) => match self.cache.devices(&inv) {
                Ok(devices) => self.release_filled_slots(host, &devices).await,
                Err(e) => tracing::warn!(host, "cannot read the inventory to look at its replaced slots: {e}"),
            },
            Ok(None) => {}
            Err(e) => tracing::warn!(host, "cannot read the inventory to look at its replaced slots: {e}"),
        }
    }

    /// Lifts the holds of the host's replaced slots that hold a new disk,
    /// or whose own hold an operator released. A slot whose disks are still
    /// being removed waits (a disk being zapped is no spec's); the end of
    /// each such removal looks again (`recheck_slots`). Errors are logged:
    /// the next look tries again.
    pub(super) async fn release_filled_slots(&self, host: &str, devices: &[Device]) {
        if let Err(e) = self.try_release_filled_slots(host, devices).await {
            tracing::error!(host, "cannot look at the host's replaced slots: {e}");
        }
    }

    async fn try_release_filled_slots(&self, host: &str, devices: &[Device]) -> Result<(), crate::store::StoreError> {
        self.retry_erasures(host).await;
        let holds: Vec<_> = self.store.holds().await?.into_iter().filter(|h| h.host == host).collect();
        let slots: BTreeSet<&str> = holds.iter().filter_map(|h| h.waits_for_slot.as_deref()).collect();
        if slots.is_empty() {
            return Ok(());
        }
        let removing: Vec<String> = self
            .store
            .ops::<RemovalCodec>()
            .active()
            .await?
            .into_iter()
            // In place, a removal waits for the new disk itself, its own zapped.
            .filter(|r| r.state.host == host && r.state.phase != Phase::Rejoining)
            .flat_map(|r| r.state.devices)
            .collect();
        for slot in slots {
            let waiting: Vec<_> = holds.iter().filter(|h| h.waits_for_slot.as_deref() == Some(slot)).collect();
            if waiting.iter().any(|h| removing.contains(&h.path)) {
                continue;
            }
            let own = holds.iter().find(|h| h.path == slot);
            let now_at_slot = devices.iter().find(|d| &*d.path == slot);
            let filled = match own {
                None => true,
                Some(h) => slot_filled(h.device_id.as_deref(), now_at_slot),
            };
            if !filled {
                let old_id = own.and_then(|h| h.device_id.as_deref());
                self.mark_slot_if_due(host, slot, old_id, now_at_slot).await;
                continue;
            }

            // In one write: a planner pass reading the holds meanwhile
            // must not see some of the slot's disks free and others held
            // (it would deploy them apart, and the first would take the
            // whole new DB device). One released meanwhile (`--clear`,
            // `device release`) is gone all the same.
            let lifted: Vec<String> = self.store.release_slot(host, slot).await?.into_iter().map(|h| h.path).collect();
            let new = now_at_slot.map(|d| format!(" ({})", d.device_id)).unwrap_or_default();
            self.events
                .record(
                    Level::Info,
                    EventKind::DeviceSlotFilled,
                    Some(host),
                    Some(slot),
                    format!(
                        "A new disk{new} is in {slot}'s slot on {host}: released {}; the specs redeploy the \
                         destroyed ids",
                        lifted.join(", ")
                    ),
                )
                .await;
            self.wake_reconciler();
        }
        Ok(())
    }
}
