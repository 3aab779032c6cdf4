//! The kernel reader on a fake host (`fake_host::standard_host` and the
//! `host_*` fixtures), checked against hand-written expectations, against
//! the wire reader the daemon uses, and against ceph-volume 16.2's own code.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::{json, Value};

use super::fake_host::{standard_host, FakeHost};
use super::*;
use crate::wire::ceph_volume::parse_device_list;

fn facts() -> KernelFacts {
    let read = |name: &str| std::fs::read(FakeHost::fixture(name)).unwrap();
    KernelFacts {
        lsblk: Lsblk::parse(&read("host_lsblk.json")).unwrap(),
        blkid: Blkid::parse_export(&String::from_utf8(read("host_blkid.txt")).unwrap()),
        lvm: Some(LvmFacts::parse_pvs_json(&read("host_pvs.json")).unwrap()),
    }
}

fn scan_with(host: &FakeHost, facts: &KernelFacts, wanted: Option<&[&str]>) -> Vec<Value> {
    let wanted: Option<BTreeSet<String>> = wanted.map(|w| w.iter().map(|s| s.to_string()).collect());
    let paths = host.paths();
    let list = candidates(&paths.sys_block, &paths.dev, wanted.as_ref()).unwrap();
    report(&paths, &list, facts)
}

fn scan(host: &FakeHost) -> Vec<Value> {
    scan_with(host, &facts(), None)
}

fn device<'a>(devices: &'a [Value], path: &str) -> &'a Value {
    devices.iter().find(|d| d["path"] == path).unwrap_or_else(|| panic!("{path} not reported"))
}

fn reasons(d: &Value) -> Vec<&str> {
    d["rejected_reasons"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect()
}

fn paths_of(devices: &[Value]) -> Vec<&str> {
    devices.iter().map(|d| d["path"].as_str().unwrap()).collect()
}

#[test]
fn blank_disk_is_available_with_ceph_volume_fields() {
    let host = standard_host();
    let devices = scan(&host);
    let sda = device(&devices, "/dev/sda");
    assert_eq!(sda["available"], true);
    assert_eq!(reasons(sda), Vec::<&str>::new());
    assert_eq!(sda["ceph_device"], false);
    assert_eq!(sda["lsm_data"], json!({}));
    assert_eq!(sda["lvs"], json!([]));
    assert_eq!(sda["device_id"], "SEAGATE_ST4000NM0025_ZC18JX1Q");
    assert_eq!(
        sda["sys_api"],
        json!({
            "removable": "0", "ro": "0", "vendor": "SEAGATE", "model": "ST4000NM0025", "rev": "E002",
            "sas_address": "", "sas_device_handle": "", "support_discard": "0", "rotational": "1",
            "nr_requests": "256", "partitions": {}, "device_nodes": "sda", "actuators": "",
            "scheduler_mode": "mq-deadline", "sectors": 0, "sectorsize": "512", "size": 4000787030016.0,
            "human_readable_size": "3.64 TB", "path": "/dev/sda", "devname": "sda", "type": "disk",
            "parent": "/dev/sda", "id_bus": "scsi"
        })
    );
}

#[test]
fn partitioned_disk_and_its_partitions() {
    let devices = scan(&standard_host());
    let sdb = device(&devices, "/dev/sdb");
    assert_eq!(reasons(sdb), ["Has GPT headers", "Has partitions"]);
    assert_eq!(
        sdb["sys_api"]["partitions"]["sdb1"],
        json!({"start": "2048", "sectors": "195312500", "sectorsize": 512, "size": 100000000000.0,
               "human_readable_size": "93.13 GB", "holders": []})
    );
    let sdb1 = device(&devices, "/dev/sdb1");
    assert_eq!(reasons(sdb1), ["Has a FileSystem"]);
    assert_eq!(sdb1["sys_api"]["type"], "part");
    assert_eq!(sdb1["sys_api"]["parent"], "sdb");
    assert_eq!(sdb1["sys_api"]["device_nodes"], "sdb");
    assert_eq!(sdb1["sys_api"]["sectorsize"], 512);
    // ceph-volume offers an empty partition like any device.
    let sdb2 = device(&devices, "/dev/sdb2");
    assert_eq!(sdb2["available"], true, "{sdb2}");
}

#[test]
fn filesystem_read_only_usb_tiny() {
    let devices = scan(&standard_host());
    assert_eq!(reasons(device(&devices, "/dev/sdc")), ["Has a FileSystem"]);
    assert_eq!(reasons(device(&devices, "/dev/sdf")), ["read-only"]);
    let usb = device(&devices, "/dev/sdg");
    assert_eq!(reasons(usb), ["id_bus"]);
    assert_eq!(usb["sys_api"]["removable"], "1");
    let tiny = device(&devices, "/dev/sdh");
    assert_eq!(reasons(tiny), ["Insufficient space (<5GB)"]);
    assert_eq!(tiny["sys_api"]["human_readable_size"], "4.00 GB");
}

#[test]
fn without_udev_lsblk_stands_in() {
    let devices = scan(&standard_host());
    let sdk = device(&devices, "/dev/sdk");
    assert_eq!(sdk["sys_api"]["id_bus"], "usb");
    assert_eq!(reasons(sdk), ["id_bus"]);
    assert_eq!(sdk["device_id"], "Elements_25A2_WX11A12B3456");
}

#[test]
fn lvm_disks() {
    let devices = scan(&standard_host());
    let osd = device(&devices, "/dev/sdd");
    assert_eq!(reasons(osd), ["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"]);
    assert_eq!(osd["ceph_device"], true);
    assert_eq!(osd["lvs"][0]["osd_id"], "4");
    assert_eq!(osd["lvs"][0]["type"], "block");
    assert_eq!(osd["lvs"][0]["osdspec_affinity"], "hdd_osds");
    let db = device(&devices, "/dev/sde");
    assert_eq!(reasons(db), ["Has a FileSystem", "LVM detected"]);
    assert_eq!(db["ceph_device"], true);
    assert_eq!(db["lvs"].as_array().unwrap().len(), 1, "the free segment is no LV");

    // Without LVM tools only the signature is seen: no room is assumed.
    let blind = KernelFacts { lvm: None, ..facts() };
    let devices = scan_with(&standard_host(), &blind, None);
    let db = device(&devices, "/dev/sde");
    assert_eq!(reasons(db), ["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"]);
    assert_eq!(db["ceph_device"], false);
    assert_eq!(db["lvs"], json!([]));
}

/// Facts from tools that saw nothing (no blkid, no udev-fed lsblk
/// columns): only the on-disk signatures are left.
fn blind_facts() -> KernelFacts {
    let mut f = facts();
    f.blkid = Blkid::default();
    for e in &mut f.lsblk.entries {
        e.fstype = None;
        e.pttype = None;
    }
    f
}

#[test]
fn bluestore_label() {
    let devices = scan(&standard_host());
    assert_eq!(reasons(device(&devices, "/dev/sdi")), ["Has BlueStore device label", "Has a FileSystem"]);
    let devices = scan_with(&standard_host(), &blind_facts(), None);
    assert_eq!(reasons(device(&devices, "/dev/sdi")), ["Has BlueStore device label"]);
}

#[test]
fn gpt_headers() {
    let devices = scan(&standard_host());
    assert_eq!(reasons(device(&devices, "/dev/sdj")), ["Has GPT headers"]);
    let devices = scan_with(&standard_host(), &blind_facts(), None);
    assert_eq!(reasons(device(&devices, "/dev/sdj")), ["Has GPT headers"]);
    // A partition of a GPT disk is not itself "GPT".
    assert_eq!(device(&devices, "/dev/sdb2")["available"], true);
}

#[test]
fn ceph_disk_leftovers() {
    let devices = scan(&standard_host());
    assert_eq!(reasons(device(&devices, "/dev/sdl")), ["Has GPT headers", "Has partitions", "Used by ceph-disk"]);
    assert_eq!(reasons(device(&devices, "/dev/sdl1")), ["Has a FileSystem", "Used by ceph-disk"]);
}

#[test]
fn multipath_lvs_and_loops() {
    let devices = scan(&standard_host());
    let paths = paths_of(&devices);
    let m = device(&devices, "/dev/mapper/mpatha");
    assert_eq!(m["available"], true, "{m}");
    assert_eq!(m["sys_api"]["type"], "mpath");
    let mut nodes: Vec<&str> = m["sys_api"]["device_nodes"].as_str().unwrap().split(',').collect();
    nodes.sort();
    assert_eq!(nodes, ["sdn", "sdo"]);
    assert_eq!(m["sys_api"]["devname"], "dm-1");
    assert_eq!(m["device_id"], "35000c500a1b2c3ff");
    for hidden in ["/dev/sdn", "/dev/sdo", "/dev/dm-0", "/dev/dm-1", "/dev/loop0", "/dev/loop1"] {
        assert!(!paths.contains(&hidden), "{hidden} reported: {paths:?}");
    }
}

#[test]
fn nvme() {
    let devices = scan(&standard_host());
    let n = device(&devices, "/dev/nvme0n1");
    assert_eq!(n["available"], true);
    assert_eq!(n["sys_api"]["human_readable_size"], "931.51 GB");
    assert_eq!(n["sys_api"]["vendor"], "");
    assert_eq!(n["sys_api"]["model"], "Samsung SSD 970 EVO Plus 1TB");
    assert_eq!(n["sys_api"]["scheduler_mode"], "none");
    assert_eq!(n["sys_api"]["id_bus"], "");
    assert_eq!(n["device_id"], "Samsung SSD 970 EVO Plus 1TB_S4EWNX0R123456");
}

#[test]
fn named_devices_only_and_loops_as_disks() {
    let host = standard_host();
    let devices = scan_with(&host, &facts(), Some(&["/dev/loop0"]));
    assert_eq!(paths_of(&devices), ["/dev/loop0"]);
    let l = &devices[0];
    assert_eq!(l["available"], true, "{l}");
    assert_eq!(l["sys_api"]["type"], "disk");
    assert_eq!(l["sys_api"]["size"], 6442450944.0);
    assert_eq!(l["sys_api"]["human_readable_size"], "6.00 GB");
    // A detached loop device is no device.
    assert!(scan_with(&host, &facts(), Some(&["/dev/loop1"])).is_empty());
    let devices = scan_with(&host, &facts(), Some(&["/dev/sdc", "/dev/sda", "/dev/nope"]));
    assert_eq!(paths_of(&devices), ["/dev/sda", "/dev/sdc"]);
}

#[test]
fn available_devices_come_first() {
    let devices = scan(&standard_host());
    let flags: Vec<bool> = devices.iter().map(|d| d["available"].as_bool().unwrap()).collect();
    let first_unavailable = flags.iter().position(|a| !a).unwrap();
    assert!(flags[first_unavailable..].iter().all(|a| !a), "{flags:?}");
    let avail = &paths_of(&devices)[..first_unavailable];
    assert_eq!(avail, ["/dev/mapper/mpatha", "/dev/nvme0n1", "/dev/sda", "/dev/sdb2"]);
}

#[test]
fn a_mounted_device_is_never_offered() {
    let mut f = blind_facts();
    let sda = f.lsblk.entries.iter_mut().find(|e| e.name == "sda").unwrap();
    sda.mountpoints = vec!["/".into()];
    let devices = scan_with(&standard_host(), &f, Some(&["/dev/sda"]));
    assert_eq!(reasons(&devices[0]), ["Has a FileSystem"]);
}

#[test]
fn unknown_to_lsblk_and_blkid_is_not_acceptable() {
    let mut f = facts();
    f.lsblk.entries.retain(|e| e.name != "sda");
    let devices = scan_with(&standard_host(), &f, Some(&["/dev/sda"]));
    assert_eq!(reasons(&devices[0]), ["Device type is not acceptable. It should be raw device or partition"]);
}

#[test]
fn the_daemon_reads_it_like_cephadm() {
    let devices = scan(&standard_host());
    let json = serde_json::to_vec(&devices).unwrap();
    let parsed = parse_device_list(&json).unwrap();
    assert_eq!(parsed.len(), devices.len());
    let seen: BTreeMap<&str, (bool, Vec<&str>, &str, &str)> = parsed
        .iter()
        .map(|d| {
            let r: Vec<&str> = d.rejected_reasons.iter().map(|r| &**r).collect();
            (&*d.path, (d.available, r, d.human_type(), d.human_size()))
        })
        .collect();
    let want = |available, r: &[&'static str], kind, size| (available, r.to_vec(), kind, size);
    assert_eq!(seen["/dev/sda"], want(true, &[], "hdd", "3.64 TB"));
    assert_eq!(seen["/dev/sde"], want(false, &["Has a FileSystem", "LVM detected"], "ssd", "894.25 GB"));
    assert_eq!(seen["/dev/nvme0n1"], want(true, &[], "ssd", "931.51 GB"));
    assert_eq!(seen["/dev/sdi"], want(false, &["Has BlueStore device label", "Has a FileSystem"], "hdd", "3.64 TB"));
    // Partitions have no queue/ directory, hence no rotational flag: cephadm says ssd.
    assert_eq!(seen["/dev/sdb2"], want(true, &[], "ssd", "186.26 GB"));
    let sdd = parsed.iter().find(|d| &*d.path == "/dev/sdd").unwrap();
    assert!(sdd.ceph_device);
    assert_eq!(sdd.lvs.len(), 1);
    assert_eq!(sdd.model(), "ST4000NM0025");
}

/// Runs ceph-volume 16.2's `Devices().json_report()` on the fake host
/// (tests/fixtures/agent/ceph_volume_oracle.py redirects its reads of /sys
/// and /dev and its lsblk, blkid, udevadm and LVM calls to the fixtures).
fn ceph_volume_report(host: &FakeHost) -> Vec<Value> {
    let fixtures = FakeHost::fixture("");
    for f in ["host_lsblk.json", "host_blkid.txt", "host_pvs.json"] {
        std::fs::copy(fixtures.join(f), host.root().join(f)).unwrap();
    }
    let out = Command::new("/usr/bin/python3")
        .arg(fixtures.join("ceph_volume_oracle.py"))
        .arg(host.root())
        .output()
        .expect("run /usr/bin/python3");
    assert!(
        out.status.success(),
        "the ceph-volume oracle failed (it needs Debian's ceph-osd package for ceph_volume):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn same_report_as_ceph_volume() {
    let host = standard_host();
    let ours = scan(&host);
    let theirs = ceph_volume_report(&host);
    // ceph-volume asks udevadm, which knows nothing of sdk here; we fall
    // back to lsblk (see `without_udev_lsblk_stands_in`).
    let differs_on_purpose = ["/dev/sdk"];
    let normalize = |mut d: Value| {
        if let Some(r) = d.get_mut("rejected_reasons").and_then(Value::as_array_mut) {
            r.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
        d
    };
    let ours: BTreeMap<String, Value> = ours
        .into_iter()
        .filter(|d| !differs_on_purpose.contains(&d["path"].as_str().unwrap()))
        .map(|d| (d["path"].as_str().unwrap().to_string(), normalize(d)))
        .collect();
    let theirs: BTreeMap<String, Value> = theirs
        .into_iter()
        .filter(|d| !differs_on_purpose.contains(&d["path"].as_str().unwrap()))
        .map(|d| (d["path"].as_str().unwrap().to_string(), normalize(d)))
        .collect();
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
    for (path, mine) in &ours {
        assert_eq!(mine, &theirs[path], "{path}: ours (left) vs ceph-volume (right)");
    }
    assert!(ours.len() >= 15, "compared {} devices", ours.len());
}

/// A disk whose head a 16.2 zap wiped (10 MiB zeroed) while Tentacle's
/// label copies stayed: 20.2.4's ceph-volume still rejects it
/// (`inventory_tentacle_20.2.4_loop_head_wiped.json`; 18.2.7's found it
/// available, `..._reef_18.2.7_...`), and so does the kernel view, for any
/// release: the disk is an OSD's to 19.2+'s tools. The copy is a real one
/// (`bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin`).
#[test]
fn a_bluestore_label_copy_behind_a_wiped_head_is_rejected_as_tentacle_20_2_4_does() {
    use std::os::unix::fs::FileExt;
    let fixture = |name: &str| {
        std::fs::read(format!("{}/tests/fixtures/ceph_volume/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    };
    let recorded = |name: &str| -> Value { serde_json::from_slice(&fixture(name)).unwrap() };
    assert_eq!(
        recorded("inventory_tentacle_20.2.4_loop_head_wiped.json")["rejected_reasons"],
        json!(["Has BlueStore device label"])
    );
    assert_eq!(recorded("inventory_reef_18.2.7_loop_head_wiped.json")["rejected_reasons"], json!([]));
    // The standard host's blank sda; its node a file the size of the copy's room.
    let host = standard_host();
    let node = host.paths().node("/dev/sda");
    let file = std::fs::OpenOptions::new().write(true).open(&node).unwrap();
    file.set_len(2 << 30).unwrap();
    let devices = scan_with(&host, &blind_facts(), Some(&["/dev/sda"]));
    assert_eq!(reasons(device(&devices, "/dev/sda")), Vec::<&str>::new(), "blank before the copy");
    file.write_all_at(&fixture("bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin"), 1 << 30).unwrap();
    let devices = scan_with(&host, &blind_facts(), Some(&["/dev/sda"]));
    assert_eq!(reasons(device(&devices, "/dev/sda")), ["Has BlueStore device label"]);
}
