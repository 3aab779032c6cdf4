//! The simulated host agents: inventories that follow the OSDs (a disk
//! holds an OSD volume while its OSD exists, a BlueStore label after a
//! purge until it is zapped), daemon stop, zap and OSD creation.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::cluster::SIM_FSID;
use super::cluster::{SimCluster, SimOsd, SimState};
use crate::agent_client::{AgentError, HostAgents, InventoryAnswer};
use crate::domain::osd_layout::{command_layout, Refusal};
use crate::store::ManagedHost;
use crate::wire::agent::{
    ActivateRequest, CephVolumeRequest, CommandResult, HostOsds, InventoryReport, InventorySource, ListedOsd,
    OsdDaemonStatus, OsdKind, ProbeRequest, ProbeResult, ZapOsdRequest, ZapOsdResult, ZapRequest, ZapResult,
};
use crate::wire::ceph_volume::{parse_device_list, report_of};

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
fn inventory(s: &mut SimState, host: &str) -> Vec<Value> {
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
                    "cluster_name": "ceph", "type": "block", "osdspec_affinity": o.affinity}))
                    .collect::<Vec<_>>());
            } else if let Some((_, _, ids)) = s
                .db_disks
                .iter()
                .find(|(h, p, ids)| h == host && *p == path && ids.iter().any(|id| s.osds.iter().any(|o| o.id == *id)))
            {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] = json!(["Has a FileSystem", "LVM detected"]);
                d["lvs"] = json!(ids
                    .iter()
                    .map(|id| json!({"name": format!("osd-db-{id}"), "osd_id": id.to_string(),
                    "cluster_name": "ceph", "type": "db", "osdspec_affinity": ""}))
                    .collect::<Vec<_>>());
            } else if s.dirty.iter().any(|(h, p)| h == host && *p == path) {
                d["available"] = json!(false);
                d["rejected_reasons"] = json!(["Has BlueStore device label"]);
                d["lvs"] = json!([]);
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
                ceph_release: None,
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
    ) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
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
            s.dirty.retain(|(h, p)| !(h == &host.name && *p == request.path));
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
                s.dirty.retain(|(h, p)| !(h == &host.name && *p == device));
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
}

/// What ceph-volume does with the command, simulated: it plans with the
/// same function as the dry-run (so the demo carries out exactly the plan
/// it showed, or fails where ceph-volume would) and makes each planned OSD,
/// prepared but not activated or started, with its claimed (destroyed) id
/// where it has one; the spec's class or the disk's, unless the claimed id
/// still has one bound (Ceph's OSD sets its class at boot only where none
/// is). DB and WAL devices then show their new volumes in the inventory.
fn prepare(s: &mut SimState, host: &str, request: &CephVolumeRequest) -> Result<Vec<String>, Refusal> {
    let inv = inventory(s, host);
    let devices = serde_json::to_vec(&inv)
        .map_err(|e| e.to_string())
        .and_then(|j| parse_device_list(&j).map_err(|e| e.to_string()))
        .map_err(|e| Refusal {
            exit_code: 1,
            message: format!("the simulated inventory does not read as ceph-volume's: {e}"),
            detail: None,
            by_osdkeeper: true,
        })?;
    // The simulated cluster is Ceph 16.2.15 (`ceph versions`), its ceph-volume too.
    let layout = command_layout(&request.args, &devices, crate::domain::ceph_release::Release::Pacific)?;
    let class = request.args.windows(2).find(|w| w[0] == "--crush-device-class").map(|w| w[1].clone());
    let mut created = Vec::new();
    for osd in layout.osds {
        let path = osd.data.to_string();
        let device = devices.iter().find(|d| *d.path == *path).map(|d| d.report.clone()).unwrap_or_default();
        let (id, bound, noout) = match osd.osd_id.and_then(|id| id.parse().ok()) {
            Some(id) => {
                let old = s.osds.iter().find(|o| o.id == id && o.destroyed);
                let bound = old.filter(|o| !o.device_class.is_empty()).map(|o| o.device_class.clone());
                // `osd new` on a destroyed id keeps its other state bits: noout stays.
                let noout = old.is_some_and(|o| o.noout);
                s.osds.retain(|o| !(o.id == id && o.destroyed));
                s.osds_changed();
                (id, bound, noout)
            }
            None => (s.free_ids(1)[0], None, false),
        };
        for fast in [&osd.db, &osd.wal].into_iter().flatten() {
            match s.db_disks.iter_mut().find(|(h, p, _)| h == host && **p == **fast) {
                Some((_, _, ids)) => ids.push(id),
                None => s.db_disks.push((host.to_string(), fast.to_string(), vec![id])),
            }
        }
        let crush_weight =
            super::answers::initial_weight(s, id, super::crush_weight_of(device.size_bytes.unwrap_or(1e12)));
        s.osds.push(SimOsd {
            id,
            host: host.to_string(),
            device: path.clone(),
            device_id: device.device_id.to_string(),
            up: false,
            is_in: true,
            destroyed: false,
            noout,
            crush_weight,
            pgs: 0.0,
            daemon_running: false,
            affinity: request.osdspec_affinity.clone().unwrap_or_default(),
            device_class: bound.unwrap_or_else(|| class.clone().unwrap_or_else(|| super::class_of(&device))),
            fsid: super::sim_fsid(host, &path, id),
            activated: false,
        });
        s.osds_changed();
        created.push(format!("osd.{id} on {path}"));
    }
    Ok(created)
}
