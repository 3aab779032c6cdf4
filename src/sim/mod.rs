//! A simulated cluster for demos, tests of the daemon without Ceph, and
//! scale runs: OSDs that hold placement groups which drain at a set pace,
//! and host agents whose disks follow what happens to the OSDs. It sits
//! behind the same traits as the real adapters (`CephCluster`,
//! `HostAgents`) and is never mixed into them.
//!
//! `state.rs` holds its state and clock, `cluster.rs` the Ceph side,
//! `agents.rs` the agents (inventories that follow the OSDs), `prepare.rs`
//! ceph-volume's OSD creation (planned by the dry-run's own function),
//! `identity.rs` the agents' checks of what a request names (the real
//! agent's rule), `answers.rs` and `health.rs` what the cluster says,
//! `placement.rs` a toy straw2-like placement for the removal preview,
//! `pgmap.rs` the PG map a swap needs (opt-in, `SimCluster::with_pg_map`),
//! `faults.rs` what a test makes go wrong.

mod agents;
mod answers;
mod cluster;
mod faults;
mod health;
mod identity;
mod pgmap;
mod placement;
mod prepare;
mod state;
/// The CRUSH weight a new OSD of `bytes` gets: its size in TiB, as
/// ceph-osd sets it (`osd_crush_initial_weight` unset): a 1.9 TB disk
/// weighs 1.72800, not 1.9.
pub fn crush_weight_of(bytes: f64) -> f64 {
    bytes / (1u64 << 40) as f64
}

#[cfg(test)]
mod tests;

pub use cluster::{SimCluster, SimOsd, SIM_FSID};

use crate::domain::inventory::{Affinity, DeviceReport, DeviceType, Found, Lv};
use crate::wire::ceph_volume::report_of;

/// The CRUSH class Ceph gives a disk: `hdd` when it is rotational.
pub(super) fn class_of(device: &DeviceReport) -> String {
    if device.kind == DeviceType::Hdd { "hdd" } else { "ssd" }.to_string()
}

/// The field report's cluster (specs/f5-422-inventory.json): its hosts and
/// disks, with an OSD of `pgs` placement groups on every disk that holds an
/// OSD volume.
pub fn field_report_cluster(pgs: f64, drain_rate: f64, pace: f64) -> SimCluster {
    let text = include_str!("../../specs/f5-422-inventory.json");
    let inv: serde_json::Value = serde_json::from_str(text).expect("the bundled inventory is JSON");
    let mut osds = Vec::new();
    let mut devices = Vec::new();
    let mut db_disks = Vec::new();
    for (host, devs) in inv["hosts"].as_object().expect("hosts") {
        let list = devs.as_array().cloned().unwrap_or_default();
        let reports: Vec<DeviceReport> =
            list.iter().map(|d| report_of(d).expect("the bundled inventory reads as ceph-volume's")).collect();
        for d in &reports {
            let lv_id = |lv: &Lv| lv.osd_id.as_deref().and_then(|s| s.parse::<u32>().ok());
            let db_ids: Vec<u32> =
                d.lvs.iter().filter(|lv| lv.kind.as_deref() == Some("db")).filter_map(lv_id).collect();
            if !db_ids.is_empty() {
                db_disks.push((host.clone(), d.path.to_string(), db_ids));
            }
            for lv in d.lvs.iter().filter(|lv| lv.kind.as_deref() == Some("block")) {
                let affinity = match &lv.affinity {
                    Affinity::Value(Found::Str(s)) => s.to_string(),
                    _ => String::new(),
                };
                osds.push(SimOsd {
                    id: lv_id(lv).unwrap_or(0),
                    host: host.clone(),
                    device: d.path.to_string(),
                    device_id: d.device_id.to_string(),
                    up: true,
                    is_in: true,
                    destroyed: false,
                    noout: false,
                    crush_weight: crush_weight_of(d.size_bytes.unwrap_or(1e12)),
                    pgs,
                    daemon_running: true,
                    affinity,
                    device_class: class_of(d),
                    fsid: sim_fsid(host, &d.path, lv_id(lv).unwrap_or(0)),
                    activated: true,
                });
            }
        }
        // The base inventory holds the disks as blank: the simulator adds the OSD volumes.
        let blank: Vec<serde_json::Value> = list
            .into_iter()
            .zip(&reports)
            .map(|(mut d, read)| {
                if !read.lvs.is_empty() {
                    d["available"] = serde_json::json!(true);
                    d["ceph_device"] = serde_json::json!(false);
                    d["rejected_reasons"] = serde_json::json!([]);
                    d["lvs"] = serde_json::json!([]);
                }
                d
            })
            .collect();
        devices.push((host.clone(), blank));
    }
    osds.sort_by_key(|o| o.id);
    let sim = SimCluster::new(osds, devices, drain_rate, pace);
    for (host, path, ids) in db_disks {
        sim.add_db_disk(&host, &path, ids);
    }
    sim
}

/// A large generated cluster for scale runs: `hosts` hosts named
/// `sim-0001`..., each with `per_host` disks (an OS disk, then HDDs and SSDs,
/// about half of them holding an OSD with `pgs` placement groups).
pub fn generated_cluster(hosts: usize, per_host: usize, pgs: f64, drain_rate: f64, pace: f64) -> SimCluster {
    let mut osds = Vec::new();
    let mut devices = Vec::new();
    let mut next_id = 0u32;
    let mut seed: u64 = 0x5eed;
    let mut rand = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as u32
    };
    for h in 0..hosts {
        let host = format!("sim-{:04}", h + 1);
        let mut list = Vec::new();
        for i in 0..per_host {
            let path = format!("/dev/sd{}", char::from(b'a' + (i % 26) as u8));
            let (rot, size, model) = match (i, rand() % 3) {
                (0, _) => ("0", 240_057_409_536.0, "OS SSD 240G"),
                (_, 0) => ("0", 1_920_383_410_176.0, "Micron_5300_MTFD"),
                _ => ("1", 4_000_787_030_016.0, "ST4000NM0025"),
            };
            let device_id = format!("{}_{host}_{i}", model.replace(' ', "_"));
            let mut d = device_json(&path, rot, size, model, &device_id);
            if i == 0 {
                d["available"] = serde_json::json!(false);
                d["rejected_reasons"] = serde_json::json!(["Has partitions"]);
            } else if rand() % 2 == 0 {
                osds.push(SimOsd {
                    id: next_id,
                    host: host.clone(),
                    device: path.clone(),
                    device_id: device_id.clone(),
                    up: true,
                    is_in: true,
                    destroyed: false,
                    noout: false,
                    crush_weight: crush_weight_of(size),
                    pgs,
                    daemon_running: true,
                    affinity: String::new(),
                    device_class: if rot == "1" { "hdd".into() } else { "ssd".into() },
                    fsid: sim_fsid(&host, &path, next_id),
                    activated: true,
                });
                next_id += 1;
            }
            list.push(d);
        }
        devices.push((host, list));
    }
    SimCluster::new(osds, devices, drain_rate, pace)
}

/// One blank disk in ceph-volume's inventory format, with every `sys_api`
/// key ceph-volume 16.2 reports for a SATA disk (scale runs should carry
/// reports of the real size: about 0.8 KB each).
fn device_json(path: &str, rotational: &str, size: f64, model: &str, device_id: &str) -> serde_json::Value {
    let devname = path.trim_start_matches("/dev/");
    serde_json::json!({
        "path": path,
        "sys_api": {"removable": "0", "ro": "0", "vendor": "ATA", "model": model, "rev": "SN04",
            "sas_address": "", "sas_device_handle": "",
            "support_discard": if rotational == "1" { "0" } else { "512" }, "rotational": rotational,
            "nr_requests": "256", "partitions": {}, "device_nodes": devname, "actuators": "",
            "scheduler_mode": "mq-deadline", "sectors": 0, "sectorsize": "512", "size": size,
            "human_readable_size": human_size(size), "path": path, "devname": devname, "type": "disk",
            "parent": path, "id_bus": "ata"},
        "available": true, "ceph_device": false, "rejected_reasons": [], "device_id": device_id,
        "lvs": [], "lsm_data": {}
    })
}

/// ceph-volume's 1024-based "%.2f UNIT".
fn human_size(bytes: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2} {}", units[i])
}

/// A simulated OSD's fsid: the same for the same OSD, another for an OSD
/// made later with the same id on another disk.
pub(crate) fn sim_fsid(host: &str, device: &str, id: u32) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in host.bytes().chain(device.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{id:08x}-5151-4000-8000-{:012x}", h & 0xffff_ffff_ffff)
}
