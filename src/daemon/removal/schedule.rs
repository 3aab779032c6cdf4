//! `osd rm ID...` and `osd rm stop ID...`: checked in full before anything
//! is stored, so a request is queued (or stopped) all or none.

use super::preview::check_ids;
use super::Removals;
use crate::clock::now_ms;
use crate::daemon::{audit, DaemonError};
use crate::domain::cluster::same_host;
use crate::domain::cluster::OsdState;
use crate::domain::event::{EventKind, Level};
use crate::domain::identity::same_uuid;
use crate::domain::operation::NewOperation;
use crate::domain::removal::{identify, zap_plan, Identified, InPlace, Phase, Removal, RemovalRecord};
use crate::store::ManagedHost;
use crate::store::{removal_subject, RemovalCodec};

/// Where an OSD is: its host, its devices, what a zap does to each.
pub(super) struct Located {
    pub host: ManagedHost,
    pub found: Identified,
    pub zaps: Vec<zap_plan::DeviceZap>,
}

/// What `osd rm` asks for.
#[derive(Debug, Clone, Default)]
pub struct RemoveRequest {
    pub ids: Vec<u32>,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
    /// Recovery raised while it drains.
    pub fast: bool,
    /// Queue it even when the preview finds blockers (or cannot be computed).
    pub ignore_preview_blockers: bool,
    /// `device replace` of the disk at this path: its holds keep the disks.
    pub slot: Option<String>,
    /// No drain (`device replace --in-place`), its risk checked and accepted by the caller.
    pub in_place: Option<InPlace>,
    /// The uuid an OSD must have to be removed (a swap's old OSDs, as the
    /// swap recorded them): another OSD at the id is not removed.
    pub expected_uuids: Vec<(u32, String)>,
}

impl Removals {
    /// `osd rm ID... [--replace] [--force] [--zap]`: checks every id, finds
    /// each OSD's host and devices, and queues them all or none.
    pub async fn schedule_removals(&self, req: &RemoveRequest) -> Result<Vec<RemovalRecord>, DaemonError> {
        check_ids(&req.ids)?;
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let hosts = self.store.hosts().await?;
        let mut removals = Vec::new();
        for &id in &req.ids {
            let Some(osd) = state.osd(id) else {
                return Err(DaemonError::NotFound(format!("osd.{id} does not exist in the cluster")));
            };
            if osd.destroyed {
                return Err(DaemonError::Conflict(format!(
                    "osd.{id} is already destroyed (waiting for a replacement disk)"
                )));
            }
            if let Some((_, want)) = req.expected_uuids.iter().find(|(i, _)| *i == id) {
                if !osd.uuid.as_deref().is_some_and(|u| same_uuid(u, want)) {
                    return Err(DaemonError::NotFound(format!(
                        "osd.{id} is now another OSD (uuid {}, not {want})",
                        osd.uuid.as_deref().unwrap_or("none")
                    )));
                }
            }
            if let Some(active) = self.store.ops::<RemovalCodec>().active_on(&removal_subject(id)).await? {
                return Err(DaemonError::Conflict(format!(
                    "osd.{id} is already being removed ({}); `osdkeeper osd rm stop {id}` stops that removal",
                    active.state.phase.as_str()
                )));
            }
            let located = self.locate(id, osd, &hosts, req.zap).await?;
            let (host, found, zaps) = (located.host, located.found, located.zaps);
            let mut r = Removal::new(id, host.name.clone(), req.replace, req.force, req.zap, found.paths);
            r.osd_uuid = osd.uuid.clone();
            r.device_ids = found.device_ids;
            if req.zap && zaps.iter().any(|d| !d.own.is_empty()) {
                let Some(fsid) = osd.uuid.clone() else {
                    return Err(DaemonError::CannotAct(format!(
                        "osd.{id} is an LVM OSD, but the OSD map gives no fsid to pin its LVs by; remove it without \
                         --zap and zap its devices with ceph-volume"
                    )));
                };
                r.lvm_fsid = Some(fsid);
                r.shared_devices = zaps.iter().filter(|d| d.is_shared()).map(|d| d.path.clone()).collect();
            }
            r.fast = req.fast;
            r.slot = req.slot.clone();
            r.in_place = req.in_place;
            removals.push(r);
        }
        // The preview's blockers are a drain's; in place nothing drains.
        let ignored = if req.in_place.is_some() { Vec::new() } else { self.preview_check(req).await? };
        for r in &mut removals {
            r.ignored_blockers = ignored.clone();
        }
        let new: Vec<NewOperation<Removal>> = removals
            .into_iter()
            .map(|r| NewOperation {
                subject: removal_subject(r.osd_id),
                host: Some(r.host.clone()),
                state: r,
                actor: audit::actor(),
            })
            .collect();
        let busy = |s: &str| format!("{s} is already being removed");
        let records = self.store.ops::<RemovalCodec>().add(&new, now_ms(), busy, |_, _| {}).await?;
        let names: Vec<String> = req.ids.iter().map(|i| format!("osd.{i}")).collect();
        let flags: Vec<&str> = [
            (req.replace, "replace"),
            (req.force, "force"),
            (req.zap, "zap"),
            (req.fast, "fast"),
            (req.in_place.is_some(), "in place"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        let flags = if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) };
        let (level, overridden) = if ignored.is_empty() {
            (Level::Info, String::new())
        } else {
            (
                Level::Warning,
                format!("; ignoring the preview's blockers (--ignore-preview-blockers): {}", ignored.join(" | ")),
            )
        };
        self.events
            .record(
                level,
                EventKind::RemovalScheduled,
                None,
                None,
                format!("Scheduled OSD(s) for removal: {}{flags}{overridden}", names.join(", ")),
            )
            .await;
        self.worker.wake();
        self.read_model.notify_current(crate::daemon::live::Live::Removals { osds: req.ids.clone() }).await;
        Ok(records)
    }

    /// An OSD's host (one osdkeeper manages) and devices, found in its
    /// metadata and matched against the host's inventory, with what a zap
    /// does to each device.
    pub(super) async fn locate(
        &self,
        id: u32,
        osd: &OsdState,
        hosts: &[ManagedHost],
        zap: bool,
    ) -> Result<Located, DaemonError> {
        let meta = match self.ceph.osd_devices(id).await {
            Ok(m) => Some(m),
            Err(e) => {
                // Without metadata the host comes from CRUSH and no device is known.
                tracing::warn!(osd = id, "no metadata for osd.{id}: {e}");
                None
            }
        };
        let host_name = meta
            .as_ref()
            .map(|m| m.hostname.clone())
            .filter(|h| !h.is_empty())
            .or_else(|| osd.crush_host.clone())
            .ok_or_else(|| DaemonError::CannotAct(format!("Ceph does not say which host osd.{id} is on")))?;
        let Some(host) = hosts.iter().find(|h| same_host(&h.name, &host_name)) else {
            return Err(DaemonError::CannotAct(format!(
                "osd.{id} is on host {host_name}, which osdkeeper does not manage: add it with \
                 `osdkeeper host add {host_name} ADDR` (its agent stops the daemon and wipes the disk)"
            )));
        };
        // The poller's parse, from the cache: a removal reads no inventory twice.
        let inventory = match self.store.inventory(&host.name).await? {
            Some(i) => self.inventory.parsed(&i).map_err(DaemonError::Internal)?,
            None => Default::default(),
        };
        let found = identify(id, &host.name, meta.as_ref(), &inventory, zap)
            .map_err(|e| DaemonError::CannotAct(e.to_string()))?;
        let zaps = zap_plan::plan(id, &found.paths, &inventory);
        Ok(Located { host: host.clone(), found, zaps })
    }

    /// The preview's verdict on the request: refused with the blockers, or
    /// the blockers the caller chose to ignore (none when there are none).
    async fn preview_check(&self, req: &RemoveRequest) -> Result<Vec<String>, DaemonError> {
        let skip = "`osd rm ... --ignore-preview-blockers` removes them anyway";
        match self.compute_preview(&req.ids).await {
            Ok(p) if p.blockers.is_empty() => Ok(Vec::new()),
            Ok(p) if req.ignore_preview_blockers => Ok(p.blockers),
            Ok(p) => Err(DaemonError::RefusedUnsafe(format!(
                "not removing {}: the removal could not finish: {}; nothing was scheduled ({skip})",
                osd_names(&req.ids),
                p.blockers.join("; ")
            ))),
            Err(e) if req.ignore_preview_blockers => {
                tracing::warn!("removing without a preview, as asked: {e}");
                Ok(vec![format!("no preview: {e}")])
            }
            Err(e) => Err(DaemonError::CannotAct(format!(
                "not removing {} without checking first: {e}; nothing was scheduled ({skip})",
                osd_names(&req.ids)
            ))),
        }
    }

    /// `osd rm stop ID...`: each must be stoppable, or nothing changes.
    pub async fn stop_removals(&self, ids: &[u32]) -> Result<Vec<RemovalRecord>, DaemonError> {
        for &id in ids {
            match self.store.ops::<RemovalCodec>().active_on(&removal_subject(id)).await? {
                None => return Err(DaemonError::NotFound(format!("osd.{id} is not being removed"))),
                Some(r) if !r.state.accepts_stop() => {
                    return Err(DaemonError::Conflict(format!(
                        "osd.{id} is past the point of no return ({}); it can no longer be stopped",
                        r.state.phase.as_str()
                    )))
                }
                Some(_) => {}
            }
        }
        let out = self.store.ops::<RemovalCodec>().request_stop(ids, now_ms()).await?;
        for rec in &out {
            let id = rec.state.osd_id;
            let then = if rec.state.in_place.is_none() {
                "its weight will be restored"
            } else if rec.state.phase == Phase::Queued {
                "nothing was changed yet"
            } else {
                "once it is destroyed and zapped, noout is lifted and Ceph rebuilds its copies on the other OSDs"
            };
            self.events
                .record(
                    Level::Info,
                    EventKind::RemovalStop,
                    None,
                    Some(&format!("osd.{id}")),
                    format!("Stopping the removal of osd.{id}; {then}"),
                )
                .await;
        }
        self.worker.wake();
        Ok(out)
    }
}

pub(super) fn osd_names(ids: &[u32]) -> String {
    ids.iter().map(|i| format!("osd.{i}")).collect::<Vec<_>>().join(", ")
}
