//! The simulated host agents: inventories that follow the OSDs (a disk
//! holds an OSD volume while its OSD exists, a BlueStore label after a
//! purge until it is zapped), daemon stop, zap and OSD creation.

use futures::future::BoxFuture;
use serde_json::{json, Value};

use super::cluster::{SimCluster, SimOsd, SimState};
use crate::agent_client::{AgentError, HostAgents};
use crate::wire::agent::{
    CephVolumeRequest, CommandResult, InventoryReport, InventorySource, OsdDaemonStatus, ZapRequest, ZapResult,
};
use crate::wire::api::hosts::Host;

fn unreachable(s: &SimState, host: &Host) -> Result<(), AgentError> {
    if s.unreachable.contains(&host.name) {
        return Err(AgentError::Unreachable {
            addr: host.addr.clone(),
            message: "connection refused (simulated)".into(),
        });
    }
    Ok(())
}

/// The host's devices as ceph-volume would report them now.
fn inventory(s: &SimState, host: &str) -> Vec<Value> {
    let base = s.devices.iter().find(|(h, _)| h == host).map(|(_, d)| d.clone()).unwrap_or_default();
    // As the real agents answer the daemon: `--filter-for-batch`, so disks
    // with partitions (the OS disks) are not listed.
    base.into_iter()
        .filter(|d| d["sys_api"]["partitions"].as_object().is_none_or(|p| p.is_empty()))
        .map(|mut d| {
            let path = d["path"].as_str().unwrap_or_default().to_string();
            if let Some(o) = s.osds.iter().find(|o| o.host == host && o.device == path) {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] = json!(["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"]);
                d["lvs"] = json!([{"name": format!("osd-block-{}", o.id), "osd_id": o.id.to_string(), "cluster_name": "ceph",
                    "type": "block", "osdspec_affinity": o.affinity}]);
            } else if let Some((_, _, ids)) = s
                .db_disks
                .iter()
                .find(|(h, p, ids)| h == host && *p == path && ids.iter().any(|id| s.osds.iter().any(|o| o.id == *id)))
            {
                d["available"] = json!(false);
                d["ceph_device"] = json!(true);
                d["rejected_reasons"] = json!(["Has a FileSystem", "LVM detected"]);
                d["lvs"] = json!(ids.iter().map(|id| json!({"name": format!("osd-db-{id}"), "osd_id": id.to_string(),
                    "cluster_name": "ceph", "type": "db", "osdspec_affinity": ""})).collect::<Vec<_>>());
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
    fn inventory<'a>(&'a self, host: &'a Host) -> BoxFuture<'a, Result<InventoryReport, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            Ok(InventoryReport {
                host: host.name.clone(),
                source: InventorySource::Kernel,
                taken_at_ms: crate::clock::now_ms(),
                devices: inventory(s, &host.name),
                can_create_osds: true,
                note: None,
            })
        });
        Box::pin(async move { r })
    }

    fn ceph_volume<'a>(
        &'a self,
        host: &'a Host,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            // Data devices follow `lvm batch --no-auto` up to the first flag.
            let data: Vec<String> = request.args.iter().skip(3).take_while(|a| !a.starts_with("--")).cloned().collect();
            let inv = inventory(s, &host.name);
            let mut created = Vec::new();
            for path in data {
                let free = inv.iter().any(|d| d["path"] == path.as_str() && d["available"] == true);
                if !free {
                    continue;
                }
                let id = s.next_id;
                s.next_id += 1;
                let device_id = inv
                    .iter()
                    .find(|d| d["path"] == path.as_str())
                    .and_then(|d| d["device_id"].as_str())
                    .unwrap_or_default()
                    .to_string();
                s.osds.push(SimOsd {
                    id,
                    host: host.name.clone(),
                    device: path.clone(),
                    device_id,
                    up: true,
                    is_in: true,
                    destroyed: false,
                    crush_weight: 1.0,
                    pgs: 0.0,
                    daemon_running: true,
                    affinity: request.osdspec_affinity.clone().unwrap_or_default(),
                });
                created.push(format!("osd.{id} on {path}"));
            }
            Ok(CommandResult {
                command: format!("ceph-volume {}", request.args.join(" ")),
                exit_code: 0,
                stdout: format!("created {}", created.join(", ")),
                stderr: String::new(),
            })
        });
        Box::pin(async move { r })
    }

    fn osd_status<'a>(&'a self, host: &'a Host, osd_id: u32) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
            let running = s.osds.iter().any(|o| o.id == osd_id && o.host == host.name && o.daemon_running);
            Ok(OsdDaemonStatus { osd_id, running, pids: vec![], detail: format!("simulated osd.{osd_id}") })
        });
        Box::pin(async move { r })
    }

    fn stop_osd<'a>(&'a self, host: &'a Host, osd_id: u32) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
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

    fn zap<'a>(&'a self, host: &'a Host, request: &'a ZapRequest) -> BoxFuture<'a, Result<ZapResult, AgentError>> {
        let r = self.with(|s| {
            unreachable(s, host)?;
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
}
