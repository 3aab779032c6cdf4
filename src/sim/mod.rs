//! A simulated cluster for demos, tests of the daemon without Ceph, and
//! scale runs: OSDs that hold placement groups which drain at a set pace,
//! and host agents whose disks follow what happens to the OSDs. It sits
//! behind the same traits as the real adapters (`CephCluster`,
//! `HostAgents`) and is never mixed into them.

mod agents;
mod cluster;

pub use cluster::{SimCluster, SimOsd};

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
        for d in &list {
            let db_ids: Vec<u32> = d["lvs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|lv| lv["type"] == "db")
                .filter_map(|lv| lv["osd_id"].as_str().and_then(|s| s.parse().ok()))
                .collect();
            if !db_ids.is_empty() {
                db_disks.push((host.clone(), d["path"].as_str().unwrap_or_default().to_string(), db_ids));
            }
            for lv in d["lvs"].as_array().into_iter().flatten() {
                if lv["type"] != "block" {
                    continue;
                }
                let id: u32 = lv["osd_id"].as_str().and_then(|s| s.parse().ok()).unwrap_or(0);
                osds.push(SimOsd {
                    id,
                    host: host.clone(),
                    device: d["path"].as_str().unwrap_or_default().to_string(),
                    device_id: d["device_id"].as_str().unwrap_or_default().to_string(),
                    up: true,
                    is_in: true,
                    destroyed: false,
                    crush_weight: d["sys_api"]["size"].as_f64().unwrap_or(1e12) / 1e12,
                    pgs,
                    daemon_running: true,
                    affinity: lv["osdspec_affinity"].as_str().unwrap_or_default().to_string(),
                });
            }
        }
        // The base inventory holds the disks as blank: the simulator adds the OSD volumes.
        let blank: Vec<serde_json::Value> = list
            .into_iter()
            .map(|mut d| {
                if d["lvs"].as_array().is_some_and(|l| !l.is_empty()) {
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
