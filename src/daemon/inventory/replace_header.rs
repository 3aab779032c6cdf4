//! ceph-volume's "being replaced" header on a replaced disk still in its
//! slot (`domain::device_replace::header_due`): written once the slot's
//! removals are over, on hosts whose ceph-volume reads it (19.2.1+), so
//! that the host's own tools (`ceph-volume inventory`, a cephadm beside
//! osdkeeper) also see the disk as being replaced; erased when the
//! replacement is cleared or its slot released by hand. osdkeeper's own
//! hold is what keeps specs off the disk on every release; the header says
//! the same to everyone else.
//!
//! The agent takes a fresh inventory first (minutes on a host with many
//! disks), so each write or erasure runs in a task of its own, never in
//! the poll that found it due. They take one turn at a time, and a write
//! looks again under it that the slot's hold is still there: a `--clear`
//! cannot slip between its decision and the write. An erasure is sent
//! whatever the last inventory says (the agent leaves a disk without the
//! header alone), and one that fails is tried again after each poll of the
//! host until it goes through, or until another disk is in its place (not
//! across a restart).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::Inventory;
use crate::agent_client::{AgentError, HostAgents};
use crate::daemon::events::Events;
use crate::domain::ceph_release::CephRelease;
use crate::domain::device_id::same_disk;
use crate::domain::device_replace::header_due;
use crate::domain::event::{EventKind, Level};
use crate::domain::inventory::Device;
use crate::store::Store;
use crate::wire::agent::ReplaceHeaderRequest;

/// A disk: (host, path).
type Disk = (String, String);

/// What the writes and erasures share.
#[derive(Default)]
pub(super) struct Headers {
    turn: tokio::sync::Mutex<()>,
    /// Writes asked for and not over yet: not asked twice.
    writing: Mutex<HashSet<Disk>>,
    /// Erasures asked for and not over yet: not asked twice.
    erasing: Mutex<HashSet<Disk>>,
    /// Erasures that failed, with the disk's id: tried again.
    erase: Mutex<HashMap<Disk, String>>,
    /// The last failure said of each disk: said again only when it changes.
    said: Mutex<HashMap<Disk, String>>,
}

/// What a task needs of the service.
#[derive(Clone)]
struct Job {
    store: Store,
    agents: Arc<dyn HostAgents>,
    events: Arc<Events>,
    headers: Arc<Headers>,
}

impl Inventory {
    fn header_job(&self) -> Job {
        Job {
            store: self.store.clone(),
            agents: self.agents.clone(),
            events: self.events.clone(),
            headers: self.polls.headers.clone(),
        }
    }

    /// Writes the header on the slot's disk, in the background, if it is due.
    pub(super) async fn mark_slot_if_due(&self, host: &str, slot: &str, old_id: Option<&str>, now: Option<&Device>) {
        let Some(disk) = now.filter(|_| header_due(true, old_id, now)) else {
            return;
        };
        if !reads_replace_header(&self.store, host).await {
            return;
        }
        let key = (host.to_string(), slot.to_string());
        if !self.polls.headers.writing.lock().expect("headers lock").insert(key.clone()) {
            return;
        }
        let (job, id) = (self.header_job(), disk.device_id.to_string());
        tokio::spawn(async move {
            {
                let _turn = job.headers.turn.lock().await;
                if job.slot_still_held(&key.0, &key.1, &id).await {
                    let reason = format!("device replace of {}: the disk waits to be swapped", key.1);
                    job.set(&key.0, &key.1, &id, true, reason).await;
                }
            }
            job.headers.writing.lock().expect("headers lock").remove(&key);
        });
    }

    /// Erases the header from the replaced disk `device_id` at `path`, in
    /// the background (`--clear`, `device release`), on hosts whose
    /// ceph-volume reads it.
    pub async fn unmark_slot(&self, host: &str, path: &str, device_id: Option<&str>) {
        let Some(id) = device_id.filter(|i| !i.trim().is_empty()) else {
            return;
        };
        // Another disk at the path (a new one has no header) is found by
        // `retry_erasures`, which drops the erasure.
        if !reads_replace_header(&self.store, host).await {
            return;
        }
        let key = (host.to_string(), path.to_string());
        self.polls.headers.erase.lock().expect("headers lock").insert(key, id.to_string());
        self.retry_erasures(host).await;
    }

    /// Tries again the host's erasures that failed (after each of its
    /// polls); one whose disk another has replaced is dropped (a new disk
    /// has no header).
    pub(super) async fn retry_erasures(&self, host: &str) {
        let pending: Vec<(Disk, String)> = {
            let erase = self.polls.headers.erase.lock().expect("headers lock");
            if !erase.keys().any(|(h, _)| h == host) {
                return;
            }
            erase.iter().filter(|((h, _), _)| h == host).map(|(k, id)| (k.clone(), id.clone())).collect()
        };
        for (key, id) in pending {
            if self.other_disk_at(host, &key.1, &id).await {
                self.polls.headers.erase.lock().expect("headers lock").remove(&key);
                continue;
            }
            if !self.polls.headers.erasing.lock().expect("headers lock").insert(key.clone()) {
                continue;
            }
            let job = self.header_job();
            tokio::spawn(async move {
                job.erase(key.clone()).await;
                job.headers.erasing.lock().expect("headers lock").remove(&key);
            });
        }
    }

    async fn other_disk_at(&self, host: &str, path: &str, id: &str) -> bool {
        let devices = match self.store.inventory(host).await {
            Ok(Some(inv)) => self.cache.devices(&inv),
            Ok(None) => return false,
            Err(e) => {
                tracing::warn!(host, path, "cannot read the inventory before erasing a replacement header: {e}");
                return false;
            }
        };
        match devices {
            Ok(devices) => devices
                .iter()
                .find(|d| &*d.path == path)
                .is_some_and(|d| !d.device_id.trim().is_empty() && !same_disk(id, &d.device_id)),
            Err(e) => {
                tracing::warn!(host, path, "cannot read the inventory before erasing a replacement header: {e}");
                false
            }
        }
    }
}

/// Whether the host's ceph-volume (as its last inventory said) reads the header.
async fn reads_replace_header(store: &Store, host: &str) -> bool {
    match store.inventory_head(host).await {
        Ok(head) => head
            .and_then(|i| i.ceph_release)
            .and_then(|r| CephRelease::parse(&r).ok())
            .is_some_and(|r| r.reads_replace_header()),
        Err(e) => {
            tracing::warn!(host, "cannot read the host's ceph-volume release: {e}");
            false
        }
    }
}

impl Job {
    /// The replacement still holds the slot for this disk.
    async fn slot_still_held(&self, host: &str, slot: &str, id: &str) -> bool {
        match self.store.holds().await {
            Ok(holds) => holds.iter().any(|h| {
                h.host == host
                    && h.path == slot
                    && h.waits_for_slot.as_deref() == Some(slot)
                    && h.device_id.as_deref().is_some_and(|held| same_disk(held, id))
            }),
            Err(e) => {
                tracing::warn!(host, slot, "cannot read the holds before writing a replacement header: {e}");
                false
            }
        }
    }

    async fn erase(&self, key: Disk) {
        let _turn = self.headers.turn.lock().await;
        let Some(id) = self.headers.erase.lock().expect("headers lock").get(&key).cloned() else {
            return;
        };
        let why = format!("the replacement of {} ended without a new disk", key.1);
        if self.set(&key.0, &key.1, &id, false, why).await {
            self.headers.erase.lock().expect("headers lock").remove(&key);
        }
    }

    /// Asks the agent; whether it went through. What changed is said in
    /// the event log; a failure too, once for each new reason.
    async fn set(&self, host: &str, path: &str, device_id: &str, mark: bool, reason: String) -> bool {
        let managed = match self.store.host(host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(host, path, "cannot read the host to set a replacement header: {e}");
                return false;
            }
        };
        let req = ReplaceHeaderRequest { path: path.into(), mark, device_id: device_id.into(), reason: Some(reason) };
        let key = (host.to_string(), path.to_string());
        let error = match self.agents.replace_header(&managed, &req).await {
            Ok(r) => {
                self.headers.said.lock().expect("headers lock").remove(&key);
                if r.changed {
                    let message = if mark {
                        format!(
                            "Marked {path} ({device_id}) on {host} as being replaced: ceph-volume lists it as \
                             `being_replaced` until a new disk is in its slot"
                        )
                    } else {
                        format!("Erased the being-replaced header from {path} ({device_id}) on {host}")
                    };
                    self.events
                        .record(Level::Info, EventKind::DeviceReplaceHeader, Some(host), Some(path), message)
                        .await;
                }
                return true;
            }
            Err(e @ AgentError::Busy { .. }) => {
                // Another command runs there: the next look tries again.
                tracing::debug!(host, path, mark, "replacement header: {e}");
                return false;
            }
            Err(e) => e.to_string(),
        };
        let new = self.headers.said.lock().expect("headers lock").insert(key, error.clone()) != Some(error.clone());
        tracing::warn!(host, path, mark, "replacement header: {error}");
        if new {
            let message = if mark {
                format!(
                    "Could not mark {path} ({device_id}) on {host} as being replaced ({error}); osdkeeper's hold \
                     still keeps its specs off it"
                )
            } else {
                format!(
                    "Could not erase the being-replaced header from {path} ({device_id}) on {host} ({error}); tried \
                     again after its next poll, or `ceph-volume lvm zap --clear-replace-header {path}` \
                     on the host"
                )
            };
            self.events.record(Level::Warning, EventKind::DeviceReplaceHeader, Some(host), Some(path), message).await;
        }
        false
    }
}
