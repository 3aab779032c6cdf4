//! OSD removal: scheduling (`osd rm`), stopping (`osd rm stop`), and the
//! worker that drives every removal through `domain::removal::advance`.
//!
//! Each round the worker reads the cluster once (`osd dump`, `osd df`,
//! `osd tree`, `pg stat`), then for each active removal: observes what its
//! phase needs (ok-to-stop, safe-to-destroy, the daemon on its host, its
//! devices), asks `advance` for the next step, **writes that step to SQLite**,
//! and only then performs the step's effect, logging the action before
//! issuing it. After a crash the worker simply observes again.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Daemon, DaemonError};
use crate::agent_client::AgentError;
use crate::ceph::{Answer, ClusterState};
use crate::clock::now_ms;
use crate::domain::removal::{advance, pgs_left, Effect, Observation, Phase, Removal, Verdict};
use crate::store::{Level, RemovalRecord};
use crate::wire::agent::ZapRequest;
use crate::wire::ceph_volume::parse_device_list;

/// What `osd rm` asks for.
#[derive(Debug, Clone)]
pub struct RemoveRequest {
    pub ids: Vec<u32>,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
}

fn verdict(a: Answer) -> Verdict {
    Verdict { ok: a.ok, message: a.message }
}

impl Daemon {
    /// `osd rm ID... [--replace] [--force] [--zap]`: checks every id, finds
    /// each OSD's host and devices, and queues them all or none.
    pub async fn schedule_removals(&self, req: &RemoveRequest) -> Result<Vec<RemovalRecord>, DaemonError> {
        if req.ids.is_empty() {
            return Err(DaemonError::BadRequest("give at least one OSD id".into()));
        }
        let mut seen = Vec::new();
        for id in &req.ids {
            if seen.contains(id) {
                return Err(DaemonError::BadRequest(format!("osd.{id} is listed twice")));
            }
            seen.push(*id);
        }
        let state =
            self.ceph.state().await.map_err(|e| DaemonError::Unprocessable(format!("cannot read the cluster: {e}")))?;
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
            if let Some(active) = self.store.active_removal_of(id).await? {
                return Err(DaemonError::Conflict(format!(
                    "osd.{id} is already being removed ({}); `osdkeeper osd rm stop {id}` stops that removal",
                    active.removal.phase.as_str()
                )));
            }
            let meta = self.ceph.osd_devices(id).await.ok();
            let host_name = meta
                .as_ref()
                .map(|m| m.hostname.clone())
                .filter(|h| !h.is_empty())
                .or_else(|| osd.crush_host.clone())
                .ok_or_else(|| DaemonError::Unprocessable(format!("Ceph does not say which host osd.{id} is on")))?;
            let Some(host) = hosts.iter().find(|h| h.name == host_name || h.name.split('.').next() == Some(&host_name))
            else {
                return Err(DaemonError::Unprocessable(format!(
                    "osd.{id} is on host {host_name}, which osdkeeper does not manage: add it with \
                     `osdkeeper host add {host_name} ADDR` (its agent stops the daemon and wipes the disk)"
                )));
            };
            let (devices, device_ids) = self.identify_devices(id, &host.name, meta.as_ref(), req.zap).await?;
            let mut r = Removal::new(id, host.name.clone(), req.replace, req.force, req.zap, devices);
            r.device_ids = device_ids;
            removals.push(r);
        }
        let records = self.store.add_removals(&removals, now_ms()).await?;
        let names: Vec<String> = req.ids.iter().map(|i| format!("osd.{i}")).collect();
        let flags = [(req.replace, "replace"), (req.force, "force"), (req.zap, "zap")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>();
        self.event(
            Level::Info,
            "removal-scheduled",
            None,
            None,
            format!(
                "Scheduled OSD(s) for removal: {}{}",
                names.join(", "),
                if flags.is_empty() { String::new() } else { format!(" ({})", flags.join(", ")) }
            ),
        )
        .await;
        self.removals_now.notify_one();
        let _ = self.live.send(super::live::Live::Removals { osds: req.ids.clone() });
        Ok(records)
    }

    /// The OSD's devices from the cluster, matched against its host's
    /// inventory by serial/WWN where the cluster knows one, else by device
    /// node; never guessed. With --zap every device must be found.
    async fn identify_devices(
        &self,
        id: u32,
        host: &str,
        meta: Option<&crate::ceph::OsdDevices>,
        zap: bool,
    ) -> Result<(Vec<String>, Vec<String>), DaemonError> {
        let Some(meta) = meta else {
            if zap {
                return Err(DaemonError::Unprocessable(format!(
                    "Ceph has no metadata for osd.{id}, so its devices cannot be identified; remove it without --zap"
                )));
            }
            return Ok((Vec::new(), Vec::new()));
        };
        let inventory = match self.store.inventory(host).await? {
            Some(i) => parse_device_list(i.devices.as_bytes()).unwrap_or_default(),
            None => Vec::new(),
        };
        let mut paths = Vec::new();
        let mut ids = Vec::new();
        for node in &meta.dev_nodes {
            let kernel = node.trim_start_matches("/dev/");
            let serial = meta.device_ids.iter().find(|(k, _)| k == kernel).map(|(_, v)| v.clone());
            let found = match &serial {
                Some(s) => inventory
                    .iter()
                    .find(|d| !d.device_id.is_empty() && (&*d.device_id == s || d.device_id.ends_with(s.as_str()))),
                None => inventory.iter().find(|d| &*d.path == node),
            };
            match found {
                Some(d) => {
                    paths.push(d.path.to_string());
                    ids.push(d.device_id.to_string());
                }
                None if zap => {
                    return Err(DaemonError::Unprocessable(format!(
                        "osd.{id} uses {node}{}, which is not in {host}'s inventory; refresh it (`osdkeeper device ls {host} --refresh`) \
                         or remove without --zap",
                        serial.map(|s| format!(" (id {s})")).unwrap_or_default()
                    )))
                }
                None => {
                    paths.push(node.clone());
                    ids.push(String::new());
                }
            }
        }
        Ok((paths, ids))
    }

    /// `osd rm stop ID...`: each must be stoppable, or nothing changes.
    pub async fn stop_removals(&self, ids: &[u32]) -> Result<Vec<RemovalRecord>, DaemonError> {
        for &id in ids {
            match self.store.active_removal_of(id).await? {
                None => return Err(DaemonError::NotFound(format!("osd.{id} is not being removed"))),
                Some(r) if !r.removal.phase.can_stop() => {
                    return Err(DaemonError::Conflict(format!(
                        "osd.{id} is past the point of no return ({}); it can no longer be stopped",
                        r.removal.phase.as_str()
                    )))
                }
                Some(_) => {}
            }
        }
        let mut out = Vec::new();
        for &id in ids {
            out.push(self.store.request_removal_stop(id, now_ms()).await?);
            self.event(
                Level::Info,
                "removal-stop",
                None,
                Some(&format!("osd.{id}")),
                format!("Stopping the removal of osd.{id}; its weight will be restored"),
            )
            .await;
        }
        self.removals_now.notify_one();
        Ok(out)
    }

    /// One round over all active removals.
    pub async fn removal_round(&self) -> Result<(), DaemonError> {
        let active = self.store.active_removals().await?;
        if active.is_empty() {
            return Ok(());
        }
        let state = match self.ceph.state().await {
            Ok(s) => s,
            Err(e) => {
                for mut rec in active {
                    rec.last_error = Some(format!("cannot read the cluster: {e}"));
                    rec.updated_at = now_ms();
                    let v = rec.version;
                    let _ = self.store.save_removal(&rec, v).await;
                }
                return Ok(());
            }
        };
        let mut draining = active.iter().filter(|r| r.removal.phase.is_draining()).count();
        let osds: Vec<u32> = active.iter().map(|r| r.removal.osd_id).collect();
        for rec in active {
            if let Err(e) = self.drive(rec, &state, &mut draining).await {
                tracing::error!("removal step failed: {e}");
            }
        }
        let _ = self.live.send(super::live::Live::Removals { osds });
        Ok(())
    }

    async fn observe(&self, r: &Removal, state: &ClusterState, draining: usize) -> Observation {
        let osd = state.osd(r.osd_id);
        let unhealthy = state.unhealthy_pgs();
        let may_start_drain = if draining >= self.config.max_draining {
            Verdict { ok: false, message: format!("{draining} OSDs are draining (limit {})", self.config.max_draining) }
        } else if !unhealthy.is_empty() {
            let what: Vec<String> = unhealthy.iter().map(|(s, n)| format!("{n} {s}")).collect();
            Verdict { ok: false, message: format!("the cluster has unhealthy placement groups: {}", what.join(", ")) }
        } else {
            Verdict { ok: true, message: String::new() }
        };
        let mut obs = Observation {
            exists: osd.is_some(),
            destroyed: osd.is_some_and(|o| o.destroyed),
            up: osd.is_some_and(|o| o.up),
            is_in: osd.is_some_and(|o| o.is_in),
            crush_weight: osd.and_then(|o| o.crush_weight),
            pgs: osd.and_then(|o| o.pgs),
            ok_to_stop: None,
            safe_to_destroy: None,
            may_start_drain,
            host_reachable: true,
            daemon_running: None,
            clean_devices: Vec::new(),
        };
        if !obs.exists {
            return obs;
        }
        let needs_safe = match r.phase {
            Phase::WaitingSafe | Phase::Stopping | Phase::Destroying => true,
            Phase::Draining => r.force || pgs_left(&obs) == Some(0),
            _ => false,
        };
        if r.phase == Phase::Queued && obs.may_start_drain.ok && !r.stop_requested {
            obs.ok_to_stop = Some(match self.ceph.ok_to_stop(&[r.osd_id]).await {
                Ok(a) => verdict(a),
                Err(e) => Verdict { ok: false, message: e.to_string() },
            });
        }
        if needs_safe {
            obs.safe_to_destroy = Some(match self.ceph.safe_to_destroy(&[r.osd_id]).await {
                Ok(a) => verdict(a),
                Err(e) => Verdict { ok: false, message: e.to_string() },
            });
        }
        if matches!(r.phase, Phase::Stopping | Phase::Destroying | Phase::Zapping) {
            self.observe_host(r, &mut obs).await;
        }
        obs
    }

    async fn observe_host(&self, r: &Removal, obs: &mut Observation) {
        let Ok(host) = self.store.host(&r.host).await else {
            obs.host_reachable = false;
            return;
        };
        match self.agents.osd_status(&host, r.osd_id).await {
            Ok(s) => obs.daemon_running = Some(s.running),
            Err(AgentError::Unreachable { .. } | AgentError::Timeout { .. }) => obs.host_reachable = false,
            Err(_) => {}
        }
        if r.phase == Phase::Zapping && obs.host_reachable && r.zap {
            let _ = self.poll_host(&host).await;
            if let Ok(Some(inv)) = self.store.inventory(&r.host).await {
                let devices = parse_device_list(inv.devices.as_bytes()).unwrap_or_default();
                for (i, path) in r.devices.iter().enumerate() {
                    let want_id = r.device_ids.get(i).map(String::as_str).unwrap_or("");
                    let clean = devices.iter().any(|d| {
                        &*d.path == path
                            && (want_id.is_empty() || &*d.device_id == want_id)
                            && d.available
                            && d.rejected_reasons.is_empty()
                            && d.lvs.is_empty()
                    });
                    if clean {
                        obs.clean_devices.push(path.clone());
                    }
                }
            }
        }
    }

    /// Advances one removal as far as it goes this round: phase changes
    /// without an effect follow each other at once; an effect ends the round.
    async fn drive(
        &self,
        mut rec: RemovalRecord,
        state: &ClusterState,
        draining: &mut usize,
    ) -> Result<(), DaemonError> {
        for _ in 0..8 {
            let obs = self.observe(&rec.removal, state, *draining).await;
            let step = advance(&rec.removal, &obs);
            let before = rec.removal.phase;
            let now = now_ms();
            let mut next = rec.clone();
            next.removal = step.removal.clone();
            next.waiting_on = step.waiting_on.clone();
            next.pgs_now = pgs_left(&obs);
            next.kb_used_now = state.osd(rec.removal.osd_id).and_then(|o| o.kb_used).map(|k| k as i64);
            next.updated_at = now;
            if before == Phase::Queued && next.removal.phase == Phase::Draining {
                next.drain_started_at = Some(now);
                *draining += 1;
            }
            if next.removal.phase.is_finished() && next.finished_at.is_none() {
                next.finished_at = Some(now);
            }
            let unchanged = next.removal == rec.removal && next.waiting_on == rec.waiting_on && step.effect.is_none();
            if !unchanged || next.pgs_now != rec.pgs_now {
                next.version = self.store.save_removal(&next, rec.version).await?;
            }
            self.record_sample(&rec, &next).await;
            if before != next.removal.phase {
                self.announce(&next, before).await;
            }
            let Some(effect) = step.effect else {
                if next.removal.phase == before || step.waiting_on.is_some() || next.removal.phase.is_finished() {
                    return Ok(());
                }
                rec = next;
                continue;
            };
            rec = next;
            self.perform(&mut rec, &effect).await?;
            return Ok(());
        }
        Ok(())
    }

    async fn record_sample(&self, before: &RemovalRecord, after: &RemovalRecord) {
        let Some(pgs) = after.pgs_now else { return };
        if !(after.removal.phase.is_draining() || before.removal.phase.is_draining()) {
            return;
        }
        let changed = before.pgs_now != Some(pgs);
        let stale = self
            .store
            .recent_samples(after.id, 0)
            .await
            .ok()
            .and_then(|s| s.last().map(|x| after.updated_at - x.at > 30_000))
            .unwrap_or(true);
        if changed || stale {
            let _ = self.store.add_sample(after.id, after.updated_at, pgs, after.kb_used_now).await;
        }
    }

    /// Events for phase changes, in cephadm's words where it has them.
    async fn announce(&self, rec: &RemovalRecord, before: Phase) {
        let r = &rec.removal;
        let id = r.osd_id;
        let host = r.host.as_str();
        let (level, kind, message) = match r.phase {
            Phase::Draining => (
                Level::Info,
                "removal-draining",
                format!(
                    "Draining osd.{id} on {host} ({} PGs){}",
                    rec.pgs_now.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                    if r.replace { ", marked out for replacement" } else { "" }
                ),
            ),
            Phase::WaitingSafe => (
                Level::Info,
                "removal-drained",
                format!(
                    "osd.{id} on {host} is drained{}",
                    if r.force && rec.pgs_now != Some(0) { " (forced)" } else { "" }
                ),
            ),
            Phase::Stopping => (Level::Info, "removal-stopping", format!("Removing daemon osd.{id} from {host}")),
            Phase::Destroying => (
                Level::Info,
                "removal-destroying",
                format!("osd.{id} is down; {} it", if r.replace { "destroying" } else { "purging" }),
            ),
            Phase::Zapping if before == Phase::Destroying || before == Phase::Stopping => {
                let done = if r.replace {
                    format!("Successfully destroyed old osd.{id} on {host}; ready for replacement")
                } else {
                    format!("Successfully purged osd.{id} on {host}")
                };
                (Level::Info, "removal-purged", done)
            }
            Phase::Done => {
                self.hold_devices(r).await;
                (
                    Level::Info,
                    "removal-done",
                    match &r.note {
                        Some(n) => format!("Removal of osd.{id} on {host} finished: {n}"),
                        None => format!("Successfully removed osd.{id} on {host}"),
                    },
                )
            }
            Phase::Restoring => (Level::Info, "removal-restoring", format!("Restoring osd.{id} on {host}")),
            Phase::Cancelled => (
                Level::Info,
                "removal-cancelled",
                format!("Removal of osd.{id} stopped: {}", r.note.clone().unwrap_or_default()),
            ),
            _ => return,
        };
        self.event(level, kind, Some(host), Some(&format!("osd.{id}")), message).await;
    }

    /// Devices freed by a removal are held back from specs until released
    /// (cephadm would re-consume a disk you just zapped).
    async fn hold_devices(&self, r: &Removal) {
        if r.note.as_deref().is_some_and(|n| n.contains("no longer exists")) && r.pgs_at_start.is_none() {
            return;
        }
        let reason = if r.zap {
            format!("zapped after removing osd.{}", r.osd_id)
        } else {
            format!("freed by removing osd.{}", r.osd_id)
        };
        for (i, path) in r.devices.iter().enumerate() {
            let id = r.device_ids.get(i).map(String::as_str);
            if let Err(e) = self.store.hold(&r.host, path, id, &reason, now_ms()).await {
                tracing::error!("cannot hold {path} on {}: {e}", r.host);
            }
        }
    }

    /// Logs the action, performs it, records the outcome.
    async fn perform(&self, rec: &mut RemovalRecord, effect: &Effect) -> Result<(), DaemonError> {
        let r = rec.removal.clone();
        let id = r.osd_id;
        let action = self.store.log_action(rec.id, id, effect, now_ms()).await?;
        let outcome: Result<String, String> = match effect {
            Effect::Reweight { weight } => self
                .ceph
                .reweight(id, *weight)
                .await
                .map(|_| format!("reweighted osd.{id} to {weight}"))
                .map_err(|e| e.to_string()),
            Effect::MarkOut => {
                self.ceph.mark_out(id).await.map(|_| format!("marked osd.{id} out")).map_err(|e| e.to_string())
            }
            Effect::MarkIn => {
                self.ceph.mark_in(id).await.map(|_| format!("marked osd.{id} in")).map_err(|e| e.to_string())
            }
            Effect::MarkDown => {
                self.ceph.mark_down(id).await.map(|_| format!("marked osd.{id} down")).map_err(|e| e.to_string())
            }
            Effect::Destroy => {
                self.ceph.destroy(id).await.map(|_| format!("destroyed osd.{id}")).map_err(|e| e.to_string())
            }
            Effect::Purge => self.ceph.purge(id).await.map(|_| format!("purged osd.{id}")).map_err(|e| e.to_string()),
            Effect::StopDaemon => match self.store.host(&r.host).await {
                Ok(host) => self.agents.stop_osd(&host, id).await.map(|s| s.detail).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
            Effect::Zap { path } => {
                self.event(
                    Level::Info,
                    "zap",
                    Some(&r.host),
                    Some(&format!("osd.{id}")),
                    format!("Zapping devices for osd.{id} on {}", r.host),
                )
                .await;
                match self.store.host(&r.host).await {
                    Ok(host) => {
                        let req = ZapRequest {
                            path: path.clone(),
                            force: true,
                            reason: Some(format!("removal of osd.{id}")),
                        };
                        self.agents.zap(&host, &req).await.map(|z| z.steps.join("; ")).map_err(|e| e.to_string())
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
        };
        if outcome.is_ok() {
            crash_point(effect);
        }
        let now = now_ms();
        match outcome {
            Ok(text) => {
                self.store.finish_action(action, &format!("ok: {text}"), now).await?;
                if let Effect::Zap { path } = effect {
                    rec.removal.zapped.push(path.clone());
                    self.event(
                        Level::Info,
                        "zapped",
                        Some(&r.host),
                        Some(&format!("osd.{id}")),
                        format!("Successfully zapped {path} for osd.{id} on {}", r.host),
                    )
                    .await;
                }
                rec.last_error = None;
            }
            Err(text) => {
                self.store.finish_action(action, &format!("failed: {text}"), now).await?;
                self.event(
                    Level::Error,
                    "removal-action-failed",
                    Some(&r.host),
                    Some(&format!("osd.{id}")),
                    format!("osd.{id}: {text}"),
                )
                .await;
                rec.last_error = Some(text);
            }
        }
        rec.updated_at = now;
        let v = rec.version;
        rec.version = self.store.save_removal(rec, v).await?;
        Ok(())
    }
}

/// Fault injection for the crash tests: with `OSDKEEPER_CRASH_AFTER=purge`
/// (or any effect name) the daemon aborts right after that effect succeeded
/// and before it recorded the outcome, as a power cut would.
fn crash_point(effect: &Effect) {
    static CRASH_AFTER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let Some(name) = CRASH_AFTER.get_or_init(|| std::env::var("OSDKEEPER_CRASH_AFTER").ok().filter(|v| !v.is_empty()))
    else {
        return;
    };
    let kind = serde_json::to_value(effect).ok().and_then(|v| v["effect"].as_str().map(str::to_string));
    if kind.as_deref() == Some(name.as_str()) {
        eprintln!("OSDKEEPER_CRASH_AFTER={name}: aborting after the {name} step, as a crash would");
        std::process::abort();
    }
}

/// The removal worker loop.
pub async fn run(daemon: Arc<Daemon>, cancel: CancellationToken) {
    loop {
        if let Err(e) = daemon.removal_round().await {
            tracing::error!("removal round failed: {e}");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = daemon.removals_now.notified() => {}
            _ = tokio::time::sleep(daemon.config.removal_interval) => {}
        }
    }
}

impl Daemon {
    /// `device zap HOST PATH --force`: refused without force, for an
    /// unknown host or device, and for a device backing an OSD the cluster
    /// still has up; the agent refuses a busy device on its own.
    pub async fn zap_device(&self, host_name: &str, path: &str, force: bool) -> Result<Vec<String>, DaemonError> {
        if !force {
            return Err(DaemonError::BadRequest("must pass --force to PERMANENTLY ERASE DEVICE DATA".into()));
        }
        let host = self.store.host(host_name).await?;
        let inv = self
            .store
            .inventory(host_name)
            .await?
            .ok_or_else(|| DaemonError::Conflict(format!("host {host_name} has not reported an inventory yet")))?;
        let devices = parse_device_list(inv.devices.as_bytes()).map_err(|e| DaemonError::Internal(e.to_string()))?;
        let Some(device) = devices.iter().find(|d| &*d.path == path) else {
            return Err(DaemonError::NotFound(format!("device path '{path}' not found on host '{host_name}'")));
        };
        // The OSDs on this device, from its LVs and from the cluster's own
        // metadata (a raw BlueStore OSD has no LVs).
        let mut ids: Vec<u32> = device.osd_ids().filter_map(|i| i.parse().ok()).collect();
        if let Ok(all) = self.ceph.all_osd_devices().await {
            let short = host_name.split('.').next().unwrap_or(host_name);
            for (id, m) in all {
                let same_host = m.hostname == host_name || m.hostname.split('.').next() == Some(short);
                if same_host && m.dev_nodes.iter().any(|n| n == path) && !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        if !ids.is_empty() {
            let state = self
                .ceph
                .state()
                .await
                .map_err(|e| DaemonError::Unprocessable(format!("cannot read the cluster: {e}")))?;
            let active: Vec<String> = ids
                .iter()
                .filter(|id| state.osd(**id).is_some_and(|o| !o.destroyed))
                .map(|id| format!("osd.{id}"))
                .collect();
            if !active.is_empty() {
                return Err(DaemonError::Conflict(format!(
                    "unable to zap: device '{path}' on {host_name} has {} active OSD(s) ({}); use `osdkeeper osd rm` first",
                    active.len(),
                    active.join(", ")
                )));
            }
        }
        let req = ZapRequest { path: path.to_string(), force: true, reason: Some("requested by an operator".into()) };
        let result = self.agents.zap(&host, &req).await.map_err(|e| match e {
            AgentError::Refused { message, .. } => {
                DaemonError::Conflict(format!("the agent on {host_name} refused: {message}"))
            }
            other => DaemonError::Unprocessable(other.to_string()),
        })?;
        self.store.hold(host_name, path, Some(&device.device_id), "zapped by an operator", now_ms()).await?;
        self.event(
            Level::Info,
            "zapped",
            Some(host_name),
            Some(path),
            format!("zap successful for {path} on {host_name}"),
        )
        .await;
        let _ = self.poll_host(&host).await;
        Ok(result.steps)
    }
}
