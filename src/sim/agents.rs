//! The simulated host agents: inventories that follow the OSDs (a disk
//! holds an OSD volume while its OSD exists, a BlueStore label after a
//! purge until it is zapped), daemon stop, zap and OSD creation.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::cluster::SIM_FSID;
use super::cluster::{SimCluster, SimOsd, SimState};
use super::prepare::prepare;
use crate::agent_client::{AgentError, HostAgents, InventoryAnswer};
use crate::store::ManagedHost;
use crate::wire::agent::{
    ActivateRequest, CephVolumeRequest, CommandResult, HostOsds, InventoryReport, InventorySource, ListedOsd,
    OsdDaemonStatus, OsdKind, ProbeRequest, ProbeResult, ReplaceHeaderRequest, ReplaceHeaderResult, StopRequest,
    ZapOsdRequest, ZapOsdResult, ZapRequest, ZapResult,
};
use crate::wire::ceph_volume::report_of;

fn unreachable(s: &SimState, host: &ManagedHost) -> Result<(), AgentError> {
    if s.unreachable.contains(&host.name) {
        return Err(AgentError::Unreachable {
            addr: host.addr.clone(),
            message: "connection refused (simulated)".into(),
        });
    }
    Ok(())
}

/// The host's devices as ceph-volume would report them now.
pub(super) fn inventory(s: &mut SimState, host: &str) -> Vec<Value> {
    let base = s.devices.get(host).cloned().unwrap_or_default();
    let on_host: Vec<SimOsd> = s.osds_on(host).into_iter().cloned().collect();
    // As the real agents answer the daemon: `--filter-for-batch`, so disks
    // with partitions (the OS disks) are not listed.
    base.into_iter()
        .filter_map(|d| match report_of(&d) {
            Ok(read) => Some((d, read)),
            Err(e) => {
                tracing::error!(host, "a simulated device report does not read as ceph-volume's ({e}): left out");
                None
            }
        })
        .filter(|(_, read)| !read.has_partitions())
        .map(|(mut d, read)| {
            let path = read.path.to_string();
            let on_disk: Vec<&SimOsd> = on_host.iter().filter(|o| o.device == path).collect();
            if !on_disk.is_empty() {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] =
                    json!(["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"]);
                d["lvs"] = json!(on_disk
                    .iter()
                    .map(|o| json!({"name": format!("osd-block-{}", o.id), "osd_id": o.id.to_string(),
                    "cluster_name": "ceph", "type": "block", "osdspec_affinity": o.affinity,
                    "osd_fsid": o.fsid, "cluster_fsid": SIM_FSID}))
                    .collect::<Vec<_>>());
            } else if let Some((_, _, ids)) = s
                .db_disks
                .iter()
                .find(|(h, p, ids)| h == host && *p == path && ids.iter().any(|id| s.osds.iter().any(|o| o.id == *id)))
            {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] = json!(["Has a FileSystem", "LVM detected"]);
                let fsid_of = |id: &u32| s.osds.iter().find(|o| o.id == *id).map(|o| o.fsid.clone());
                d["lvs"] = json!(ids
                    .iter()
                    .map(|id| json!({"name": format!("osd-db-{id}"), "osd_id": id.to_string(),
                    "cluster_name": "ceph", "type": "db", "osdspec_affinity": "",
                    "osd_fsid": fsid_of(id), "cluster_fsid": SIM_FSID}))
                    .collect::<Vec<_>>());
            } else if let Some((_, _, lv)) = s.foreign.iter().find(|(h, p, _)| h == host && *p == path) {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] = json!(["LVM detected"]);
                d["lvs"] = json!([lv]);
            } else if s.dirty.iter().any(|(h, p, _)| h == host && *p == path) {
                d["available"] = json!(false);
                d["rejected_reasons"] = json!(["Has BlueStore device label"]);
                d["lvs"] = json!([]);
            } else if s.marked.iter().any(|(h, p)| h == host && *p == path) {
                d["available"] = json!(false);
                d["being_replaced"] = json!(true);
                d["rejected_reasons"] = json!(["Is being replaced"]);
            }
            d
        })
        .collect()
}

impl HostAgents for SimCluster {
    fn inventory<'a>(
        &'a self,
        host: &'a ManagedHost,
        known: Option<&'a str>,
    ) -> BoxFuture<'a, Result<InventoryAnswer, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            Ok(InventoryReport {
                host: host.name.clone(),
                source: InventorySource::Kernel,
                taken_at_ms: crate::clock::now_ms(),
                devices: inventory(s, &host.name),
                can_create_osds: true,
                note: None,
                ceph_release: s.ceph_volume_release.clone(),
            })
        });
        // Answered as the real agent answers: unchanged when the ETag is the current one.
        Box::pin(async move { r.map(|report| InventoryAnswer::of(report, known)) })
    }

    fn ceph_volume<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let command = format!("ceph-volume {}", request.args.join(" "));
            Ok(match prepare(s, &host.name, request) {
                Ok(created) => CommandResult {
                    command,
                    exit_code: 0,
                    stdout: format!("created {}", created.join(", ")),
                    stderr: String::new(),
                },
                Err(refusal) => CommandResult {
                    command,
                    exit_code: refusal.exit_code,
                    stdout: String::new(),
                    stderr: refusal.to_string(),
                },
            })
        });
        Box::pin(async move { r })
    }

    fn list_osds<'a>(&'a self, host: &'a ManagedHost) -> BoxFuture<'a, Result<HostOsds, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let osds = s
                .osds
                .iter()
                .filter(|o| o.host == host.name && !o.destroyed)
                .map(|o| ListedOsd {
                    osd_id: o.id,
                    osd_fsid: format!("sim-osd-{}", o.id),
                    cluster_fsid: SIM_FSID.to_string(),
                    kind: OsdKind::Lvm,
                    device: o.device.clone(),
                    db_device: None,
                    wal_device: None,
                    osdspec_affinity: Some(o.affinity.clone()).filter(|a| !a.is_empty()),
                })
                .collect();
            Ok(HostOsds { osds, notes: Vec::new() })
        });
        Box::pin(async move { r })
    }

    fn activate_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        _request: &'a ActivateRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let found = s.osds.iter_mut().find(|o| o.id == osd_id && o.host == host.name && !o.destroyed);
            let exit_code = match found {
                Some(o) => {
                    o.activated = true;
                    0
                }
                None => 1,
            };
            Ok(CommandResult {
                command: format!("ceph-volume lvm activate {osd_id} sim-osd-{osd_id}"),
                exit_code,
                stdout: String::new(),
                stderr: if exit_code == 0 { String::new() } else { format!("no osd.{osd_id} on this host") },
            })
        });
        Box::pin(async move { r })
    }

    fn start_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            match s.osds.iter_mut().find(|o| o.id == osd_id && o.host == host.name && o.activated) {
                Some(o) => {
                    o.daemon_running = true;
                    o.up = true;
                    Ok(OsdDaemonStatus {
                        osd_id,
                        running: true,
                        pids: vec![],
                        detail: format!("started simulated osd.{osd_id}"),
                    })
                }
                None => Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 409,
                    message: format!("osd.{osd_id} is not activated on this host"),
                }),
            }
        });
        Box::pin(async move { r })
    }

    fn osd_status<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let running = s.osds.iter().any(|o| o.id == osd_id && o.host == host.name && o.daemon_running);
            Ok(OsdDaemonStatus { osd_id, running, pids: vec![], detail: format!("simulated osd.{osd_id}") })
        });
        Box::pin(async move { r })
    }

    fn stop_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        osd_id: u32,
        request: &'a StopRequest,
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            super::identity::check_stop_request(s, host, osd_id, request)?;
            if let Some(o) = s.osds.iter_mut().find(|o| o.id == osd_id && o.host == host.name) {
                o.daemon_running = false;
                o.up = false;
            }
            Ok(OsdDaemonStatus {
                osd_id,
                running: false,
                pids: vec![],
                detail: format!("stopped simulated osd.{osd_id}"),
            })
        });
        Box::pin(async move { r })
    }

    fn zap<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapRequest,
    ) -> BoxFuture<'a, Result<ZapResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            if let Some(i) = s.zaps_lost.iter().position(|h| h == &host.name) {
                s.zaps_lost.remove(i);
                return Err(AgentError::Unreachable {
                    addr: host.addr.clone(),
                    message: "connection reset during the zap (simulated)".into(),
                });
            }
            if !request.force {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 400,
                    message: "zap needs force".into(),
                });
            }
            if s.osds.iter().any(|o| o.host == host.name && o.device == request.path && o.daemon_running) {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 409,
                    message: format!("{} is busy: a running OSD holds it", request.path),
                });
            }
            super::identity::check_zap_request(s, host, request)?;
            s.dirty.retain(|(h, p, _)| !(h == &host.name && *p == request.path));
            s.foreign.retain(|(h, p, _)| !(h == &host.name && *p == request.path));
            s.marked.retain(|(h, p)| !(h == &host.name && *p == request.path));
            // A destroyed OSD keeps its id in the map, but no longer its disk.
            for o in s.osds.iter_mut().filter(|o| o.host == host.name && o.device == request.path && o.destroyed) {
                o.device.clear();
            }
            Ok(ZapResult { path: request.path.clone(), steps: vec![format!("wiped {} (simulated)", request.path)] })
        });
        Box::pin(async move { r })
    }

    fn zap_osd<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ZapOsdRequest,
    ) -> BoxFuture<'a, Result<ZapOsdResult, AgentError>> {
        // As ceph-volume's `lvm zap --osd-id --osd-fsid`: that OSD's block
        // LV and its DB LVs go, the other OSDs' DB LVs stay.
        let r = self.with(|s| {
            unreachable(s, host)?;
            if !request.force {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 400,
                    message: "zap needs force".into(),
                });
            }
            let (id, fsid) = (request.osd_id, request.osd_fsid.as_str());
            super::identity::check_zap_osd_request(s, host, request)?;
            if s.osds.iter().any(|o| o.host == host.name && o.id == id && o.fsid == fsid && o.daemon_running) {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 409,
                    message: format!("osd.{id} runs: stop it first"),
                });
            }
            let mut devices = Vec::new();
            let purged = s.purged_lvs.iter().position(|(h, i, f, _)| h == &host.name && *i == id && f == fsid);
            if let Some(pos) = purged {
                let (_, _, _, device) = s.purged_lvs.remove(pos);
                s.dirty.retain(|(h, p, _)| !(h == &host.name && *p == device));
                devices.push(device);
            }
            // A destroyed OSD (`--replace`) keeps its id, not its volumes.
            let destroyed = s
                .osds
                .iter_mut()
                .find(|o| o.host == host.name && o.id == id && o.fsid == fsid && o.destroyed && !o.device.is_empty());
            let destroyed = destroyed.map(|o| std::mem::take(&mut o.device));
            if let Some(device) = &destroyed {
                devices.push(device.clone());
            }
            let zapped = purged.is_some() || destroyed.is_some();
            for (_, path, ids) in s.db_disks.iter_mut().filter(|(h, _, _)| h == &host.name) {
                if zapped && ids.contains(&id) {
                    ids.retain(|i| *i != id);
                    devices.push(path.clone());
                }
            }
            let steps = if devices.is_empty() {
                vec![format!("no LV of osd.{id} (fsid {fsid}) on {} (simulated)", host.name)]
            } else {
                vec![format!("zapped the LVs of osd.{id} on {} (simulated)", devices.join(", "))]
            };
            Ok(ZapOsdResult { osd_id: id, osd_fsid: fsid.to_string(), devices, steps })
        });
        Box::pin(async move { r })
    }

    fn probe<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ProbeRequest,
    ) -> BoxFuture<'a, Result<ProbeResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            // As for benchmarks (`ceph::bench`): no invented numbers.
            Err(AgentError::Refused {
                addr: host.addr.clone(),
                status: 409,
                message: format!(
                    "{} on the simulated host {} has no disk behind it for fio to measure: probes need a real agent",
                    request.path, host.name
                ),
            })
        });
        Box::pin(async move { r })
    }

    fn replace_header<'a>(
        &'a self,
        host: &'a ManagedHost,
        request: &'a ReplaceHeaderRequest,
    ) -> BoxFuture<'a, Result<ReplaceHeaderResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let path = request.path.clone();
            let key = (host.name.clone(), path.clone());
            let was = s.marked.contains(&key);
            let found = s
                .devices
                .get(&host.name)
                .into_iter()
                .flatten()
                .find_map(|d| report_of(d).ok().filter(|r| *r.path == *path).map(|r| r.device_id.to_string()));
            match found {
                None => {
                    return Err(AgentError::Refused {
                        addr: host.addr.clone(),
                        status: 404,
                        message: format!("{path} is not a device in this host's current inventory"),
                    })
                }
                Some(id) if !crate::domain::device_id::same_disk(&id, &request.device_id) => {
                    return Err(AgentError::Refused {
                        addr: host.addr.clone(),
                        status: 409,
                        message: format!("refusing to mark {path}: the disk there now is {id:?}; nothing was written"),
                    })
                }
                Some(_) => {}
            }
            if !request.mark && !was {
                let steps = vec![format!("{path} has no header: nothing to erase (simulated)")];
                return Ok(ReplaceHeaderResult { path, marked: false, changed: false, steps });
            }
            let in_use = s.osds.iter().any(|o| o.host == host.name && o.device == path)
                || s.dirty.iter().any(|(h, p, _)| h == &host.name && *p == path)
                || s.foreign.iter().any(|(h, p, _)| h == &host.name && *p == path);
            if in_use {
                return Err(AgentError::Refused {
                    addr: host.addr.clone(),
                    status: 409,
                    message: format!("refusing to mark {path}: it is not blank (simulated); nothing was written"),
                });
            }
            s.marked.retain(|k| k != &key);
            if request.mark {
                s.marked.push(key);
            }
            let changed = was != request.mark;
            let steps = vec![format!("{} the header on {path} (simulated)", if changed { "set" } else { "left" })];
            Ok(ReplaceHeaderResult { path, marked: request.mark, changed, steps })
        });
        Box::pin(async move { r })
    }
}
