use std::sync::Arc;

use super::*;
use crate::domain::inventory::{DeviceReport, Lv};

const HDD: f64 = 4000787030016.0;
const NVME: f64 = 375083606016.0;

fn blank(path: &str, size: f64) -> Device {
    Device::from(DeviceReport {
        path: Arc::from(path),
        available: true,
        size_bytes: Some(size),
        ..DeviceReport::default()
    })
}

fn with_lvs(mut d: Device, reasons: &[&str], lvs: &[(&str, &str)]) -> Device {
    d.report.available = false;
    d.report.ceph_device = true;
    d.report.rejected_reasons = reasons.iter().map(|r| Arc::from(*r)).collect();
    d.report.lvs = lvs.iter().map(|(kind, id)| Lv::of_osd(id, kind)).collect();
    d
}

const USED: [&str; 3] = ["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"];
const SHARED_DB: [&str; 2] = ["Has a FileSystem", "LVM detected"];

fn host() -> Vec<Device> {
    vec![
        blank("/dev/nvme0n1", NVME),
        blank("/dev/nvme1n1", NVME),
        blank("/dev/sdb", HDD),
        blank("/dev/sdc", HDD),
        blank("/dev/sdd", HDD),
        with_lvs(blank("/dev/sde", HDD), &USED, &[("block", "3")]),
    ]
}

fn plan(command: &str, devices: &[Device]) -> Result<Layout, Refusal> {
    planned_osds(&[command.split(' ').map(str::to_string).collect()], devices, Release::Pacific)
}

fn rows(l: &Layout) -> Vec<String> {
    l.osds
        .iter()
        .map(|o| {
            format!(
                "{} {} {} {} {}",
                o.data,
                o.data_size.map(display_size).unwrap_or_default(),
                o.db.as_deref().unwrap_or("-"),
                o.db_size.map(display_size).unwrap_or_default(),
                o.osd_id.as_deref().unwrap_or("-")
            )
        })
        .collect()
}

/// The oracle's simulated report for this host and command (preview.py).
#[test]
fn slots_sizes_and_ids_as_ceph_volume_hands_them_out() {
    let l = plan(
        "lvm batch --no-auto /dev/sdb /dev/sdc /dev/sdd /dev/sde --db-devices /dev/nvme0n1 /dev/nvme1n1 --osd-ids 7 9 --yes --no-systemd",
        &host(),
    )
    .unwrap();
    // The used sde still counts toward the slots: 4 OSDs over 2 devices.
    assert_eq!(
        rows(&l),
        [
            "/dev/sdb 3.64 TB /dev/nvme1n1 174.66 GB 9",
            "/dev/sdc 3.64 TB /dev/nvme0n1 174.66 GB 7",
            "/dev/sdd 3.64 TB /dev/nvme0n1 174.66 GB -",
        ]
    );
    assert_eq!(l.unused.len(), 1);
    assert_eq!(&*l.unused[0].path, "/dev/sde");
    assert!(l.unused[0].why.contains("already holds osd.3"), "{:?}", l.unused);
    assert!(l.warnings.is_empty());
}

#[test]
fn overlapping_lists_are_refused_before_anything_else() {
    let e = plan("lvm batch --no-auto /dev/sdb /dev/nvme0n1 --db-devices /dev/nvme0n1 --yes --no-systemd", &host())
        .unwrap_err();
    assert_eq!(e.message, "Device lists are not disjoint");
    assert_eq!(
        e.to_string(),
        "ceph-volume would fail: Device lists are not disjoint (/dev/nvme0n1 is passed as both data and db)"
    );
}

#[test]
fn a_db_size_larger_than_a_slot_ends_the_run() {
    let e = plan(
        "lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --block-db-size 200G --yes --no-systemd",
        &host(),
    )
    .unwrap_err();
    assert_eq!(e.exit_code, 1);
    assert_eq!(e.message, "200.00 GB was requested for block_db_size, but only 174.66 GB can be fulfilled");
    let ok = plan(
        "lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --block-db-size 30G --yes --no-systemd",
        &host(),
    )
    .unwrap();
    assert!(ok.osds.iter().all(|o| o.db_size == Some(30.0 * 1024f64.powi(3))));
}

#[test]
fn slots_taken_by_existing_lvs_leave_osds_without_a_db_and_the_run_fails() {
    let mut devices = host();
    devices[0] = with_lvs(blank("/dev/nvme0n1", NVME), &SHARED_DB, &[("db", "1")]);
    let e = plan("lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --yes --no-systemd", &devices)
        .unwrap_err();
    assert_eq!(e.message, "1 fast allocations != 2 num_osds");
    assert!(e.detail.as_deref().unwrap().contains("/dev/nvme0n1 1"), "{e:?}");
}

#[test]
fn no_usable_db_device_means_no_osd_at_all() {
    let mut devices = host();
    devices[0] = with_lvs(blank("/dev/nvme0n1", NVME), &USED, &[("db", "1")]);
    let l = plan("lvm batch --no-auto /dev/sdb --db-devices /dev/nvme0n1 --yes --no-systemd", &devices).unwrap();
    assert!(l.osds.is_empty());
    let roles: Vec<(&str, Role)> = l.unused.iter().map(|u| (&*u.path, u.role)).collect();
    assert_eq!(roles, [("/dev/sdb", Role::Data), ("/dev/nvme0n1", Role::Db)]);
    assert!(l.warnings[0].starts_with("ceph-volume would create no OSD on this host"), "{:?}", l.warnings);
}

#[test]
fn a_data_osd_in_a_shared_db_volume_group_is_made_and_warned_about() {
    let mut devices = host();
    devices[1] = with_lvs(blank("/dev/nvme1n1", NVME), &SHARED_DB, &[("db", "4"), ("db", "5")]);
    let l = plan("lvm batch --no-auto /dev/nvme1n1 --yes --no-systemd", &devices).unwrap();
    assert_eq!(rows(&l), ["/dev/nvme1n1 349.32 GB -  -"]);
    assert_eq!(l.warnings.len(), 1);
    assert!(
        l.warnings[0].starts_with("/dev/nvme1n1 already holds the DB of osd.4, the DB of osd.5 (a shared DB device"),
        "{:?}",
        l.warnings
    );
}

#[test]
fn arguments_argparse_refuses_exit_2() {
    let e = plan("lvm batch --no-auto /dev/sdb --block-db-size xor --yes --no-systemd", &host()).unwrap_err();
    assert_eq!((e.exit_code, e.message.as_str()), (2, "argument --block-db-size: invalid parse value: 'xor'"));
    let e = plan("lvm batch --no-auto /dev/sdb --yes /dev/sdc", &host()).unwrap_err();
    assert_eq!(e.message, "unrecognized arguments: /dev/sdc");
}

#[test]
fn osds_per_device_fraction_and_encryption() {
    let l = plan(
        "lvm batch --no-auto /dev/sdb --dmcrypt --osds-per-device 2 --data-allocate-fraction 0.5 --yes --no-systemd",
        &host(),
    )
    .unwrap();
    assert_eq!(rows(&l), ["/dev/sdb 931.50 GB -  -", "/dev/sdb 931.50 GB -  -"]);
    assert!(l.osds.iter().all(|o| o.encrypted));
}

#[test]
fn raw_prepare_pairs_whole_devices() {
    let cmds = ["raw prepare --bluestore --data /dev/sdb --block.db /dev/nvme0n1 --osd-id 4"
        .split(' ')
        .map(str::to_string)
        .collect()];
    let l = planned_osds(&cmds, &host(), Release::Pacific).unwrap();
    assert_eq!(l.osds.len(), 1);
    let o = &l.osds[0];
    assert_eq!(
        (&*o.data, o.db.as_deref(), o.osd_id.as_deref(), o.data_size),
        ("/dev/sdb", Some("/dev/nvme0n1"), Some("4"), None)
    );
}

/// 20.2's `lvm batch`: a DB size without DB devices carves each DB from
/// its own data device, WAL devices without DB devices get no volume, and
/// WAL devices with DB devices serve the last OSD alone.
#[test]
fn tentacle_assigns_db_and_wal_its_own_way() {
    let words = |c: &str| vec![c.split(' ').map(str::to_string).collect::<Vec<_>>()];
    let t = |c: &str| planned_osds(&words(c), &host(), Release::Tentacle).unwrap();
    let db_on_data = t("lvm batch --no-auto /dev/sdb /dev/sdc --block-db-size 10G --objectstore bluestore --yes");
    let gib = 1024.0 * 1024.0 * 1024.0;
    for osd in &db_on_data.osds {
        assert_eq!(osd.db.as_deref(), Some(&*osd.data), "its DB on its own disk");
        assert_eq!(osd.db_size, Some(10.0 * gib));
    }
    let pacific = plan("lvm batch --no-auto /dev/sdb --block-db-size 10G --yes", &host()).unwrap();
    assert_eq!(pacific.osds[0].db, None, "16.2: no DB device, no DB volume");
    assert!(db_on_data.osds[0].data_size < pacific.osds[0].data_size, "the data volume leaves room for the DB");

    let wal_only = "lvm batch --no-auto /dev/sdb /dev/sdc --wal-devices /dev/nvme0n1 --yes";
    assert!(t(wal_only).osds.iter().all(|o| o.wal.is_none()));
    assert!(plan(wal_only, &host()).unwrap().osds.iter().all(|o| o.wal.is_some()), "16.2 gives each a WAL");
    let both = t("lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --wal-devices /dev/nvme1n1 --yes");
    let wals: Vec<bool> = both.osds.iter().map(|o| o.wal.is_some()).collect();
    assert_eq!(wals, [false, true], "the last OSD alone");

    let full =
        planned_osds(&words("lvm batch --no-auto /dev/sdb --db-devices /dev/sde --yes"), &host(), Release::Tentacle);
    assert_eq!(
        full.map(|_| ()).map_err(|r| r.message),
        Err("1 fast devices were passed, but none are available".to_string()),
        "20.2 exits 1 where 16.2 plans nothing"
    );
    assert!(plan("lvm batch --no-auto /dev/sdb --db-devices /dev/sde --yes", &host()).unwrap().osds.is_empty());
}
