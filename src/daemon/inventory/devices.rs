//! Devices as the operator acts on them: wiping one (`device zap`), and the
//! holds that keep freed devices away from every spec until released
//! (cephadm would re-consume a disk just zapped).

use super::Inventory;
use crate::agent_client::AgentError;
use crate::clock::now_ms;
use crate::daemon::DaemonError;
use crate::domain::event::{EventKind, Level};
use crate::domain::identity::ZapExpect;
use crate::domain::removal::Removal;
use crate::wire::agent::ZapRequest;
use crate::wire::api::devices::Hold;

impl Inventory {
    /// `device zap HOST PATH --force`: refused without force, for an
    /// unknown host or device, and for a device backing an OSD the cluster
    /// still has; the agent refuses a busy device on its own.
    pub async fn zap_device(&self, host_name: &str, path: &str, force: bool) -> Result<Vec<String>, DaemonError> {
        if !force {
            return Err(DaemonError::Invalid("must pass --force to PERMANENTLY ERASE DEVICE DATA".into()));
        }
        let (host, device) = self.known_device(host_name, path).await?;
        let active = self.active_osds_on(host_name, path, &device).await?;
        if !active.is_empty() {
            return Err(DaemonError::RefusedUnsafe(format!(
                "unable to zap: device '{path}' on {host_name} has {} active OSD(s) ({}); use `osdkeeper osd rm` first",
                active.len(),
                active.join(", ")
            )));
        }
        // Intent before action: the disk is held (and the zap announced)
        // before the agent wipes it, so a crash in between never leaves a
        // wiped disk that a spec may take. A refusal lifts a hold we added.
        let held_before = self.store.holds().await?.iter().any(|h| h.covers(host_name, path, &device.device_id));
        self.store.hold(host_name, path, Some(&device.device_id), "zapped by an operator", now_ms()).await?;
        self.events
            .record(
                Level::Info,
                EventKind::Zap,
                Some(host_name),
                Some(path),
                format!("Zapping {path} on {host_name} (requested by an operator)"),
            )
            .await;
        // The disk the operator saw, whatever it holds (no OSD of the cluster uses it).
        let expect = ZapExpect { device_id: device.device_id.to_string(), osd_fsids: None, cluster_fsid: None };
        let req = ZapRequest::expecting(path, expect, "requested by an operator".into());
        let result = match self.agents.zap(&host, &req).await {
            Ok(r) => r,
            Err(e) => {
                let unknown = e.outcome_unknown();
                if !held_before && !unknown {
                    if let Err(release) = self.store.release(host_name, path).await {
                        tracing::error!("cannot lift the hold on {path} after a refused zap: {release}");
                    }
                }
                return Err(match e {
                    AgentError::Refused { message, .. }
                    | AgentError::Busy { message, .. }
                    | AgentError::Mismatch { message, .. } => {
                        DaemonError::RefusedUnsafe(format!("the agent on {host_name} refused: {message}"))
                    }
                    // It may have wiped the disk: the hold stays.
                    other => DaemonError::CannotAct(format!("{other}; {path} stays held until `device release`")),
                });
            }
        };
        self.events
            .record(
                Level::Info,
                EventKind::Zapped,
                Some(host_name),
                Some(path),
                format!("zap successful for {path} on {host_name}"),
            )
            .await;
        if let Err(e) = self.poll_host(&host).await {
            tracing::warn!("cannot refresh the inventory of {host_name} after the zap: {e}");
        }
        Ok(result.steps)
    }

    /// A device of a known host as its latest inventory reports it.
    pub async fn known_device(
        &self,
        host_name: &str,
        path: &str,
    ) -> Result<(crate::store::ManagedHost, crate::domain::inventory::Device), DaemonError> {
        let host = self.store.host(host_name).await?;
        let inv = self
            .store
            .inventory(host_name)
            .await?
            .ok_or_else(|| DaemonError::Conflict(format!("host {host_name} has not reported an inventory yet")))?;
        let devices = self.cache.devices(&inv).map_err(DaemonError::Internal)?;
        match devices.iter().find(|d| &*d.path == path) {
            Some(d) => Ok((host, d.clone())),
            None => Err(DaemonError::NotFound(format!("device path '{path}' not found on host '{host_name}'"))),
        }
    }

    /// The OSDs the cluster still has (not destroyed) with their data on a
    /// device, from its LVs and from the cluster's own metadata (a raw
    /// BlueStore OSD has no LVs), as `osd.N`.
    pub async fn active_osds_on(
        &self,
        host_name: &str,
        path: &str,
        device: &crate::domain::inventory::Device,
    ) -> Result<Vec<String>, DaemonError> {
        let mut ids: Vec<u32> = device.osd_ids().filter_map(|i| i.parse().ok()).collect();
        match self.ceph.all_osd_devices().await {
            Ok(all) => {
                for (id, m) in all {
                    if m.is_on(host_name) && m.dev_nodes.iter().any(|n| n == path) && !ids.contains(&id) {
                        ids.push(id);
                    }
                }
            }
            // The agent's own check (the device is not open) still guards the disk.
            Err(e) => tracing::warn!("cannot read OSD metadata for {path} on {host_name}: {e}"),
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        Ok(ids
            .iter()
            .filter(|id| state.osd(**id).is_some_and(|o| !o.destroyed))
            .map(|id| format!("osd.{id}"))
            .collect())
    }

    /// `device release HOST PATH`: specs may use the device again.
    pub async fn release_device(&self, host: &str, path: &str) -> Result<Hold, DaemonError> {
        let hold = self.store.release(host, path).await?;
        if hold.waits_for_slot.as_deref() == Some(path) {
            // A replaced disk's own slot: the disk there is no longer being replaced.
            self.unmark_slot(host, path, hold.device_id.as_deref()).await;
        }
        self.events
            .record(
                Level::Info,
                EventKind::DeviceReleased,
                Some(host),
                Some(path),
                format!("Released {path} on {host}: specs may use it again"),
            )
            .await;
        // The slot of a `device replace` released by hand: the disks
        // waiting on it go too.
        self.recheck_slots(host).await;
        self.workers.reconciler.wake();
        Ok(hold.into())
    }

    /// Holds the devices a finished removal freed.
    pub async fn hold_freed_devices(&self, r: &Removal) {
        if !r.frees_devices() {
            return;
        }
        let reason = if r.zap {
            format!("zapped after removing osd.{}", r.osd_id)
        } else {
            format!("freed by removing osd.{}", r.osd_id)
        };
        for (i, path) in r.devices.iter().enumerate() {
            // A device other OSDs still use (their DBs) was not freed.
            if r.shared_devices.contains(path) {
                continue;
            }
            let id = r.device_ids.get(i).map(String::as_str);
            if let Err(e) = self.store.hold(&r.host, path, id, &reason, now_ms()).await {
                tracing::error!("cannot hold {path} on {}: {e}", r.host);
            }
        }
    }
}
