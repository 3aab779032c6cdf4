//! `device replace` of a DB SSD shared by two HDD OSDs, on real-kernel
//! hosts (testbed/real-hosts: LVM, udev, systemd, Ceph 16.2):
//!
//! 1. f5-422-02 gets two HDD OSDs with their DBs on its SSD; the other two
//!    hosts one SSD OSD each, to take the data; data is written.
//! 2. `device replace f5-422-02 SSD --dry-run` names both OSDs (their DBs)
//!    and both HDDs as waiting; then the replacement: both OSDs drained and
//!    destroyed (ids kept), every LV of theirs gone, their units disabled,
//!    the SSD and both HDDs held.
//! 3. The SSD is pulled and a new one pushed into its bay: the holds are
//!    lifted, and the spec redeploys both ids on the HDDs with their DBs
//!    on the new SSD.
//!
//! Checked from outside osdkeeper (ceph as client.admin, lvs, wipefs,
//! systemctl on the host) and timed (`timeline.txt`).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::field::*;
use common::real_hosts::{RealCluster, Timeline};
use common::wait_for_or;
use serde_json::Value;

const HOST: &str = "f5-422-02";

/// `HOST`'s disks by bay (the serial's tail), from a fresh inventory.
fn bays(op: &Operator) -> BTreeMap<String, String> {
    let listed = op.json(&["device", "ls", HOST, "--refresh"]);
    let mut out = BTreeMap::new();
    for d in listed[0]["devices"].as_array().cloned().unwrap_or_default() {
        let (Some(id), Some(path)) = (d["device_id"].as_str(), d["path"].as_str()) else { continue };
        if let Some((_, bay)) = id.rsplit_once('-') {
            out.insert(bay.to_string(), path.to_string());
        }
    }
    out
}

fn held(op: &Operator) -> Vec<Value> {
    op.json(&["device", "held"]).as_array().cloned().unwrap_or_default()
}

#[test]
fn a_shared_db_ssd_is_replaced_and_its_osds_come_back_with_their_ids() {
    let run = run_dir("device-replace");
    let mut time = Timeline::new(&run);
    let cluster = RealCluster::up(&run);
    let pki = install_agents(&cluster);
    let _daemon = start_daemon(&cluster, &run, &pki);
    let op = Operator { cluster: &cluster };
    add_hosts(&op);
    let disks = wait_disks(&op, &["HDD1", "HDD2", "SSD1"]);
    time.step("3 hosts up, agents installed, daemon up, inventories in");

    // 1. Two HDD OSDs with their DBs on the SSD of f5-422-02; an SSD OSD on
    // each other host to take their data.
    let specs = run.join("specs.yaml");
    write(
        &specs,
        &format!(
            "service_type: osd\nservice_id: hdd_with_db\nplacement:\n  hosts: [{HOST}]\n\
             spec:\n  data_devices:\n    rotational: 1\n  db_devices:\n    rotational: 0\n---\n\
             service_type: osd\nservice_id: receivers\nplacement:\n  hosts: [{}, {}]\n\
             spec:\n  data_devices:\n    rotational: 0\n",
            HOSTS[0], HOSTS[2]
        ),
    );
    op.ok(&["apply", "-i", specs.to_str().unwrap()]);
    let tree = wait_osds(&cluster, &op, 4, Duration::from_secs(1500));
    let mut ids = osds_under(&tree, HOST);
    ids.sort_unstable();
    assert_eq!(ids.len(), 2, "two OSDs under {HOST}: {tree}");
    let ssd = disks[HOST]["SSD1"].clone();
    let hdds = [disks[HOST]["HDD1"].clone(), disks[HOST]["HDD2"].clone()];
    for id in &ids {
        let meta = cluster.admin_ceph(&["osd", "metadata", &id.to_string()]);
        assert_eq!(meta["bluefs_db_devices"], ssd.trim_start_matches("/dev/"), "osd.{id}'s DB on the SSD: {meta}");
    }
    // Two copies: with f5-422-02's OSDs out, two hosts keep every PG whole
    // (at three copies the removal preview refuses, rightly: the drain of
    // a whole host of three could never end).
    admin(
        &cluster,
        "ceph osd pool create data 32 && ceph osd pool application enable data rados && \
         for p in $(ceph osd pool ls); do ceph osd pool set $p size 2 && ceph osd pool set $p min_size 1; done && \
         rados -p data bench 10 write -b 1048576 -t 4 --no-cleanup >/dev/null",
    );
    wait_health_ok(&cluster, Duration::from_secs(900));
    time.step("2 HDD OSDs with DBs on the shared SSD, 2 SSD OSDs elsewhere, data written, HEALTH_OK");

    // 2. The dry run, then the replacement.
    let dry = op.json(&["device", "replace", HOST, &ssd, "--dry-run"]);
    let named: Vec<(u64, Value)> =
        dry["osds"].as_array().unwrap().iter().map(|o| (o["osd"].as_u64().unwrap(), o["kinds"].clone())).collect();
    let want: Vec<(u64, Value)> = ids.iter().map(|id| (*id, serde_json::json!(["db"]))).collect();
    assert_eq!(named, want, "both OSDs, by their DBs: {dry}");
    let mut waiting: Vec<String> =
        dry["waiting"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
    waiting.sort();
    let mut want_waiting = hdds.to_vec();
    want_waiting.sort();
    assert_eq!(waiting, want_waiting, "both HDDs wait for the new SSD: {dry}");
    eprintln!("{}", op.ok(&["device", "replace", HOST, &ssd, "--dry-run"]));
    let units = lvm_units(&cluster, HOST, "*");
    assert_eq!(units.len(), 2, "{units:?}");
    eprintln!("{}", op.ok(&["device", "replace", HOST, &ssd, "--yes-i-really-mean-it"]));
    wait_for_or(
        "both removals to finish",
        Duration::from_secs(3600),
        || op.ok(&["osd", "rm", "status"]).contains("No OSD remove/replace operations reported").then_some(()),
        || format!("{}\n{}", op.ok(&["osd", "rm", "status"]), op.ok(&["events", "--since", "30m"])),
    );
    time.step("device replace: both OSDs drained, destroyed, zapped");
    let tree = cluster.admin_ceph(&["osd", "tree"]);
    for id in &ids {
        let node = tree["nodes"].as_array().unwrap().iter().find(|n| n["id"].as_u64() == Some(*id));
        assert_eq!(node.map(|n| n["status"].clone()), Some("destroyed".into()), "osd.{id}: {tree}");
    }
    let lvs = cluster.sh_ok(HOST, "lvs --noheadings -o lv_name,vg_name,devices");
    assert!(lvs.trim().is_empty(), "no LV left on {HOST}:\n{lvs}");
    for dev in hdds.iter().chain([&ssd]) {
        let sig = cluster.sh(HOST, &format!("wipefs --no-act {dev}"));
        assert!(sig.stdout.trim().is_empty(), "{dev} carries no signature: {}", sig.stdout);
    }
    for unit in &units {
        let state = cluster.sh(HOST, &format!("systemctl is-enabled {unit}"));
        assert_ne!(state.stdout.trim(), "enabled", "{unit} is disabled after the zap");
    }
    let mut held_paths: Vec<String> = held(&op)
        .iter()
        .filter(|h| h["host"] == HOST && h["waits_for_slot"] == ssd.as_str())
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    held_paths.sort();
    let mut want_held: Vec<String> = hdds.iter().chain([&ssd]).cloned().collect();
    want_held.sort();
    assert_eq!(held_paths, want_held, "the SSD and both HDDs held for its slot: {:?}", held(&op));

    // 3. A new SSD in the old one's bay (same SCSI id): the holds go, the
    // spec redeploys both ids with their DBs on it.
    cluster.unplug(HOST, "ssd1");
    cluster.plug(HOST, "ssd3", "ssd", "20G", 3);
    let new_ssd = wait_for_or(
        "the new SSD in the inventory, in the old one's slot",
        Duration::from_secs(600),
        || bays(&op).get("SSD3").cloned(),
        || format!("{:?}\n{}", bays(&op), cluster.sh(HOST, "lsblk -o NAME,SERIAL,ROTA").stdout),
    );
    assert_eq!(new_ssd, ssd, "the new SSD took the slot's name ({:?})", bays(&op));
    wait_for_or(
        "the replacement's holds lifted",
        Duration::from_secs(600),
        || held(&op).iter().all(|h| h["host"] != HOST).then_some(()),
        || format!("{:?}\n{}", held(&op), op.ok(&["events", "--since", "30m"])),
    );
    time.step("a new SSD in the slot: the holds lifted");
    let tree = wait_osds(&cluster, &op, 4, Duration::from_secs(1800));
    let mut back = osds_under(&tree, HOST);
    back.sort_unstable();
    assert_eq!(back, ids, "the same ids under {HOST}: {tree}");
    for id in &ids {
        let meta = cluster.admin_ceph(&["osd", "metadata", &id.to_string()]);
        assert_eq!(meta["bluefs_db_devices"], ssd.trim_start_matches("/dev/"), "osd.{id}'s DB on the new SSD: {meta}");
        assert_eq!(meta["bluestore_bdev_type"], "hdd", "osd.{id}: {meta}");
    }
    let lsblk = cluster.sh_ok(HOST, "lsblk -o NAME,SIZE,TYPE,FSTYPE,ROTA,SERIAL");
    eprintln!("{HOST} after:\n{lsblk}");
    wait_health_ok(&cluster, Duration::from_secs(1200));
    time.step("both ids back on the HDDs with their DBs on the new SSD, HEALTH_OK");
    eprintln!("timeline:\n{}", std::fs::read_to_string(run.join("timeline.txt")).unwrap());
}
