//! ceph-volume's "being replaced" header on a replaced disk still in its
//! slot (`domain::device_replace::header_due`): written once the slot's
//! removals are over, on hosts whose ceph-volume reads it (19.2.1+), so
//! that the host's own tools (`ceph-volume inventory`, a cephadm beside
//! osdkeeper) also see the disk as being replaced; erased when the
//! replacement is cleared or its slot released by hand. osdkeeper's own
//! hold is what keeps specs off the disk on every release; the header says
//! the same to everyone else.

use super::Inventory;
use crate::domain::ceph_release::CephRelease;
use crate::domain::device_replace::header_due;
use crate::domain::event::{EventKind, Level};
use crate::domain::inventory::Device;
use crate::wire::agent::ReplaceHeaderRequest;

impl Inventory {
    /// Writes the header on the slot's disk if it is due. A failure is
    /// logged and said in the event log; the next inventory that changes
    /// looks again.
    pub(super) async fn mark_slot_if_due(&self, host: &str, slot: &str, old_id: Option<&str>, now: Option<&Device>) {
        let Some(disk) = now.filter(|_| header_due(true, old_id, now)) else {
            return;
        };
        if !self.reads_replace_header(host).await {
            return;
        }
        let reason = format!("device replace of {slot}: the disk waits to be swapped");
        self.set_replace_header(host, slot, &disk.device_id, true, reason).await;
    }

    /// Erases the header from the disk at `path` if the host's last
    /// inventory shows it there (`--clear`, `device release`).
    pub async fn unmark_slot(&self, host: &str, path: &str, why: &str) {
        let inv = match self.store.inventory(host).await {
            Ok(Some(inv)) => inv,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(host, path, "cannot read the inventory to erase a replacement header: {e}");
                return;
            }
        };
        let devices = match self.cache.devices(&inv) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(host, path, "cannot read the inventory to erase a replacement header: {e}");
                return;
            }
        };
        let Some(disk) = devices.iter().find(|d| &*d.path == path && d.being_replaced) else {
            return;
        };
        self.set_replace_header(host, path, &disk.device_id, false, why.to_string()).await;
    }

    /// Whether the host's ceph-volume (as its last inventory said) reads
    /// the header.
    async fn reads_replace_header(&self, host: &str) -> bool {
        match self.store.inventory(host).await {
            Ok(inv) => inv
                .and_then(|i| i.ceph_release)
                .and_then(|r| CephRelease::parse(&r).ok())
                .is_some_and(|r| r.reads_replace_header()),
            Err(e) => {
                tracing::warn!(host, "cannot read the host's ceph-volume release: {e}");
                false
            }
        }
    }

    async fn set_replace_header(&self, host: &str, path: &str, device_id: &str, mark: bool, reason: String) {
        let managed = match self.store.host(host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(host, path, "cannot read the host to set a replacement header: {e}");
                return;
            }
        };
        let req = ReplaceHeaderRequest {
            path: path.to_string(),
            mark,
            device_id: device_id.to_string(),
            reason: Some(reason),
        };
        let (level, message) = match self.agents.replace_header(&managed, &req).await {
            Ok(r) if !r.changed => return,
            Ok(_) if mark => (
                Level::Info,
                format!(
                    "Marked {path} ({device_id}) on {host} as being replaced: ceph-volume lists it as \
                     `being_replaced` until a new disk is in its slot"
                ),
            ),
            Ok(_) => (Level::Info, format!("Erased the being-replaced header from {path} ({device_id}) on {host}")),
            Err(e) if mark => (
                Level::Warning,
                format!(
                    "Could not mark {path} ({device_id}) on {host} as being replaced ({e}); osdkeeper's hold \
                     still keeps its specs off it"
                ),
            ),
            Err(e) => (
                Level::Warning,
                format!(
                    "Could not erase the being-replaced header from {path} ({device_id}) on {host} ({e}); \
                     `ceph-volume lvm zap --clear-replace-header {path}` on the host erases it"
                ),
            ),
        };
        self.events.record(level, EventKind::DeviceReplaceHeader, Some(host), Some(path), message).await;
    }
}
