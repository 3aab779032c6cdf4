//! `device replace HOST DEV [--clear]`: every OSD with a volume on the
//! disk is removed with `--replace --zap` (drained, destroyed keeping its
//! id, its volumes zapped and no other OSD's), and the slot is held until a
//! new disk is in it (`domain::device_replace`; the inventory lifts the
//! holds when it sees one, `inventory/slots.rs`).

use super::schedule::osd_names;
use super::{Removals, RemoveRequest};
use crate::clock::now_ms;
use crate::daemon::deploy::making_pace;
use crate::daemon::DaemonError;
use crate::domain::copies::Accept;
use crate::domain::device_replace::{self, OsdDevice, SlotRemoval};
use crate::domain::drain_preview::observed;
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::{InPlace, Phase};
use crate::domain::swap::cost::{costs, in_place_refusals, CostInput, Costs};
use crate::store::RemovalCodec;
use crate::wire::api::devices::{OsdOnDisk, ReplaceBody, ReplaceWays, Replacement, ReplacementCleared};
use crate::wire::api::swaps::{in_place_row, row};

impl Removals {
    /// The disk's OSDs, their other disks and what happens to each; with
    /// `dry_run`, nothing more. Otherwise the holds are written first (the
    /// intent), then the removals queued all or none; a refusal lifts the
    /// holds it added.
    pub async fn replace_device(&self, req: &ReplaceBody) -> Result<Replacement, DaemonError> {
        let _one = self.replacing.lock().await;
        // A fresh look at the disk before anything is decided from it.
        let host = self.store.host(&req.host).await?;
        if let Err(e) = self.inventory.poll_host(&host).await {
            tracing::warn!(host = %req.host, "device replace: the inventory could not be refreshed: {e}");
        }
        let (host, disk) = match self.inventory.known_device(&req.host, &req.path).await {
            Err(DaemonError::NotFound(m)) => {
                return Err(DaemonError::NotFound(format!(
                    "{m} (a disk that died may have left the inventory: `osdkeeper osd rm ID... --replace` removes \
                     its OSDs without zapping it)"
                )))
            }
            other => other?,
        };
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let raw: Vec<u32> = match self.ceph.all_osd_devices().await {
            Ok(all) => all
                .into_iter()
                .filter(|(_, m)| m.is_on(&host.name) && m.dev_nodes.iter().any(|n| n == &req.path))
                .map(|(id, _)| id)
                .collect(),
            Err(e) => {
                tracing::warn!("device replace: no OSD metadata (raw OSDs on {} stay unknown): {e}", req.path);
                Vec::new()
            }
        };
        let mut on = device_replace::osds_on(&disk, &raw);
        let gone: Vec<String> = on
            .iter()
            .filter(|o| state.osd(o.osd).is_none_or(|s| s.destroyed))
            .map(|o| match state.osd(o.osd) {
                Some(_) => format!("osd.{} (destroyed)", o.osd),
                None => format!("osd.{} (not in the OSD map)", o.osd),
            })
            .collect();
        on.retain(|o| state.osd(o.osd).is_some_and(|s| !s.destroyed));
        if on.is_empty() {
            let left = if gone.is_empty() { String::new() } else { format!(" (its volumes name {})", gone.join(", ")) };
            return Err(DaemonError::Conflict(format!(
                "no OSD of the cluster has a volume on {} on {}{left}: nothing to replace (`osdkeeper device zap` \
                 wipes a disk no OSD uses)",
                req.path, host.name
            )));
        }
        let ids: Vec<u32> = on.iter().map(|o| o.osd).collect();
        let hosts = self.store.hosts().await?;
        let mut devices = Vec::new();
        for &id in &ids {
            let osd = state.osd(id).expect("kept above");
            let located = self.locate(id, osd, &hosts, true).await?;
            for (i, zap) in located.zaps.iter().enumerate() {
                let mut users = vec![id];
                users.extend(zap.others.iter().filter_map(|(o, _)| o.parse::<u32>().ok()));
                devices.push(OsdDevice {
                    path: zap.path.clone(),
                    device_id: located.found.device_ids.get(i).cloned().filter(|d| !d.is_empty()),
                    users,
                });
            }
        }
        let waiting = device_replace::companions(&req.path, &ids, &devices);
        let named = device_replace::describe(&on);
        let device_id = Some(disk.device_id.to_string()).filter(|d| !d.trim().is_empty());
        // osdmaptool's answer costs seconds on a real cluster: asked only
        // where it is shown (a dry run) or decides (in place).
        let costs_asked = req.dry_run || req.in_place;
        let costs = if costs_asked {
            self.replace_costs(&ids, &host.name).await
        } else {
            Err("not asked: the drain needs no cost".to_string())
        };
        let refusals = match (&costs, req.in_place) {
            (_, false) => Vec::new(),
            (Ok(c), true) => in_place_refusals(
                &c.in_place,
                Accept { single_copy: req.accept_single_copy, inactive: req.accept_inactive },
            ),
            (Err(e), true) => vec![format!(
                "in_place: which PGs would be left short cannot be computed ({e}); drain instead (without \
                 --in-place)"
            )],
        };
        let how = if req.in_place { "not drained: noout set, stopped" } else { "drained" };
        let mut first =
            format!("{} on {}: {named}, {how}, destroyed (their ids kept), their volumes zapped", req.path, host.name);
        if let (Ok(c), true) = (&costs, req.in_place) {
            first.push_str(&format!(
                "; {} PGs keep a copy fewer until the OSDs on the new disk have rebuilt their copies once",
                c.in_place.pgs_degraded
            ));
        }
        let mut text = vec![first];
        match (&device_id, waiting.is_empty()) {
            (Some(id), true) => text.push(format!(
                "{} ({id}) stays held; a new disk in its slot is redeployed by the specs with {}",
                req.path,
                osd_names(&ids)
            )),
            (Some(id), false) => text.push(format!(
                "{} ({id}) and {} stay held until a new disk is in {}'s slot; then the specs redeploy {}",
                req.path,
                paths(&waiting),
                req.path,
                osd_names(&ids)
            )),
            (None, _) => text.push(format!(
                "{} reports no serial or WWN, so a new disk in its slot cannot be told from it: once it is in, \
                 `osdkeeper device release {} {}` lets the specs redeploy {}",
                req.path,
                host.name,
                req.path,
                osd_names(&ids)
            )),
        }
        if device_id.is_some() {
            text.push(format!(
                "swap the disk once `osdkeeper osd rm status` shows the removals done; a new disk the kernel names \
                 other than {} is not seen as the slot's: `osdkeeper device release {} {}` then says it is in",
                req.path, host.name, req.path
            ));
        }
        let mut answer = Replacement {
            host: host.name.clone(),
            path: req.path.clone(),
            device_id: device_id.clone(),
            osds: on.iter().map(|o| OsdOnDisk { osd: o.osd, kinds: o.kinds.clone() }).collect(),
            waiting: waiting.iter().map(|d| d.path.clone()).collect(),
            dry_run: req.dry_run,
            in_place: req.in_place,
            preview: None,
            ways: costs.as_ref().ok().map(|c| ways(c, refusals.clone())),
            text,
        };
        if let (Err(e), true) = (&costs, costs_asked) {
            tracing::warn!(host = %host.name, "device replace of {}: no cost of either way: {e}", req.path);
        }
        if req.dry_run {
            answer.preview = Some(self.preview_removal(&ids, true).await?);
            return Ok(answer);
        }
        if !refusals.is_empty() {
            return Err(DaemonError::RefusedUnsafe(format!(
                "not replacing {} in place: {}; nothing was changed (--dry-run shows both ways)",
                req.path,
                refusals.join("; ")
            )));
        }
        if !req.yes_i_really_mean_it {
            let how = if req.in_place { "stops and destroys" } else { "drains and destroys" };
            return Err(DaemonError::Invalid(format!(
                "device replace {how} {named} and zaps their volumes: pass --yes-i-really-mean-it \
                 (--dry-run shows what it does)"
            )));
        }
        // Intent first: the holds (each in place of any older hold at its
        // path), then the removals; a refused removal puts the holds back
        // as they were.
        let now = now_ms();
        let slot_reason =
            format!("being replaced (device replace): {named}; a new disk in its slot takes {}", osd_names(&ids));
        let mut replaced = Vec::new();
        let mut written = vec![req.path.clone()];
        let before = self
            .store
            .hold_until_slot(&host.name, &req.path, device_id.as_deref(), &slot_reason, &req.path, now)
            .await?;
        replaced.extend(before);
        for d in &waiting {
            let reason = format!("waits for a new disk in {}'s slot (device replace of {named})", req.path);
            let before = self
                .store
                .hold_until_slot(&host.name, &d.path, d.device_id.as_deref(), &reason, &req.path, now)
                .await?;
            replaced.extend(before);
            written.push(d.path.clone());
        }
        let removal = RemoveRequest {
            ids: ids.clone(),
            replace: true,
            force: false,
            zap: true,
            fast: req.fast,
            ignore_preview_blockers: req.ignore_preview_blockers,
            slot: Some(req.path.clone()),
            in_place: req.in_place.then_some(InPlace {
                accept_inactive: req.accept_inactive,
                accept_single_copy: req.accept_single_copy,
            }),
            // The OSDs found on the disk, not others that took their ids since.
            expected_uuids: ids.iter().filter_map(|id| state.osd(*id)?.uuid.clone().map(|u| (*id, u))).collect(),
        };
        if let Err(e) = self.schedule_removals(&removal).await {
            for path in &written {
                let put_back = match replaced.iter().find(|h| &h.path == path) {
                    Some(h) => self.store.restore_hold(h).await,
                    None => self.store.release(&host.name, path).await.map(|_| ()),
                };
                if let Err(undo) = put_back {
                    tracing::error!("cannot put back the hold on {path} after a refused device replace: {undo}");
                }
            }
            return Err(e);
        }
        self.events
            .record(
                Level::Info,
                EventKind::DeviceReplace,
                Some(&host.name),
                Some(&req.path),
                format!("Replacing {} on {}: {}", req.path, host.name, answer.text.join("; ")),
            )
            .await;
        Ok(answer)
    }

    /// What draining first and replacing in place each cost: every PG now
    /// and with the OSDs at weight 0 (the new disk's OSDs take the same
    /// ids and weights, so the final map is today's).
    async fn replace_costs(&self, ids: &[u32], host: &str) -> Result<Costs, String> {
        let placements = self.ceph.swap_placements(ids, host, &[]).await.map_err(|e| e.to_string())?;
        let recent = self.recent_drains().await.map_err(|e| e.to_string())?;
        Ok(costs(&CostInput {
            olds: ids.to_vec(),
            throughput: observed(placements.recovery_now, &recent),
            final_known: placements.final_known,
            pgs: placements.pgs,
            pools: placements.pools,
            down: placements.down,
            making: making_pace(&self.store, host, ids.len()).await,
        }))
    }

    /// `device replace HOST DEV --clear`: the removals that can still stop
    /// are stopped; the slot's hold is lifted, and so are the holds of the
    /// disks whose removals stopped. The disks of removals past the point
    /// of no return stay held until those end (`inventory/slots.rs` then
    /// finds the slot's own hold gone): a disk being zapped is no spec's.
    pub async fn clear_device_replacement(&self, host: &str, path: &str) -> Result<ReplacementCleared, DaemonError> {
        let _one = self.replacing.lock().await;
        let holds: Vec<_> = self
            .store
            .holds()
            .await?
            .into_iter()
            .filter(|h| h.host == host && h.waits_for_slot.as_deref() == Some(path))
            .collect();
        let removals: Vec<_> = self
            .store
            .ops::<RemovalCodec>()
            .active()
            .await?
            .into_iter()
            .filter(|r| r.state.host == host && r.state.slot.as_deref() == Some(path))
            .collect();
        if holds.is_empty() && removals.is_empty() {
            return Err(DaemonError::NotFound(format!("{path} on {host} is not being replaced")));
        }
        let seen: Vec<SlotRemoval> = removals
            .iter()
            .map(|r| SlotRemoval {
                osd: r.state.osd_id,
                can_stop: r.state.accepts_stop(),
                busy: matches!(r.state.phase, Phase::Stopping | Phase::Destroying | Phase::Zapping),
                devices: r.state.devices.clone(),
            })
            .collect();
        let held: Vec<String> = holds.iter().map(|h| h.path.clone()).collect();
        let plan = device_replace::clear_plan(path, &held, &seen);
        let stop = plan.stop;
        if !stop.is_empty() {
            self.stop_removals(&stop).await?;
        }
        let mut released = Vec::new();
        for p in &plan.release {
            match self.store.release(host, p).await {
                Ok(_) => released.push(p.clone()),
                Err(e) => tracing::warn!("device replace --clear: {p} on {host}: {e}"),
            }
        }
        if released.iter().any(|p| p == path) {
            let id = holds.iter().find(|h| h.path == path).and_then(|h| h.device_id.as_deref());
            self.inventory.unmark_slot(host, path, id).await;
        }
        let not_stopped: Vec<String> = removals
            .iter()
            .filter(|r| !r.state.accepts_stop())
            .map(|r| format!("osd.{} ({})", r.state.osd_id, r.state.phase.as_str()))
            .collect();
        let mut said = format!("Cleared the replacement of {path} on {host}: released {}", paths_of(&released));
        if !stop.is_empty() {
            said.push_str(&format!("; stopped the removal of {}", osd_names(&stop)));
        }
        if !not_stopped.is_empty() {
            said.push_str(&format!(
                "; past the point of no return: {} (their disks are let go when they end; the specs then redeploy \
                 their ids on the disks in their slots)",
                not_stopped.join(", ")
            ));
        }
        self.events.record(Level::Info, EventKind::DeviceReplaceCleared, Some(host), Some(path), said).await;
        self.inventory.wake_reconciler();
        Ok(ReplacementCleared { host: host.into(), path: path.into(), released, stopped: stop, not_stopped })
    }
}

fn paths(devices: &[OsdDevice]) -> String {
    devices.iter().map(|d| d.path.as_str()).collect::<Vec<_>>().join(", ")
}

fn paths_of(released: &[String]) -> String {
    if released.is_empty() {
        "no hold".into()
    } else {
        released.join(", ")
    }
}

/// Both ways side by side for the answer.
fn ways(c: &Costs, refusals: Vec<String>) -> ReplaceWays {
    ReplaceWays {
        ways: vec![row("drain-first", Some(&c.drain_first)), in_place_row(&c.in_place)],
        lost: c.in_place.lost.iter().map(Into::into).collect(),
        single_copy: c.in_place.single_copy.iter().map(Into::into).collect(),
        inactive: c.in_place.inactive.iter().map(Into::into).collect(),
        bytes_per_s: c.bytes_per_s,
        eta_basis: c.basis.clone(),
        making: c.in_place.making.as_ref().map(Into::into),
        refusals,
    }
}
