//! What the same spec over the same disks means to the cephadm of 16.2,
//! 17.2, 18.2, 19.2 and 20.2, rule by rule (docs/differences-from-cephadm.md,
//! "Releases"); the oracle test holds them against the real code too
//! (16.2.15, 17.2.9, 18.2.7, 20.2.4; 19.2.3's was read and run by hand).

use std::sync::Arc;

use crate::domain::ceph_release::Release;
use crate::domain::command::{ceph_volume_commands, shown};
use crate::domain::inventory::{Affinity, Device, DeviceReport, Found, Lv};
use crate::domain::selection::{select, Pass, Selection};
use crate::domain::spec::{parse_spec_file_as, DriveSpec, SpecError};

fn spec(yaml: &str, release: Release) -> Result<DriveSpec, SpecError> {
    let mut docs = parse_spec_file_as(yaml, release).expect("YAML");
    docs.remove(0).spec
}

fn blank(path: &str) -> Device {
    Device::from(DeviceReport { path: Arc::from(path), available: true, ..DeviceReport::default() })
}

/// A disk with an OSD of the spec `of`.
fn osd_of(path: &str, of: &str) -> Device {
    let mut d = blank(path);
    d.report.available = false;
    d.report.ceph_device = true;
    d.report.lvs = vec![Lv { affinity: Affinity::Value(Found::Str(Arc::from(of))), ..Lv::of_osd("7", "block") }];
    d
}

fn data(sel: &Selection) -> Vec<&str> {
    sel.data.iter().map(|p| &**p).collect()
}

const LIMIT_2: &str = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                       spec: {data_devices: {all: true, limit: 2}}\n";

#[test]
fn limit_counts_every_disk_in_16_2_only_new_ones_from_17_2_and_20_2_walks_on_for_its_own() {
    let disks =
        [osd_of("/dev/sdb", "s"), blank("/dev/sdc"), blank("/dev/sdd"), blank("/dev/sde"), osd_of("/dev/sdf", "s")];
    let existing = 1;
    let picked = |release| data(&select(&spec(LIMIT_2, release).unwrap(), &disks, existing).unwrap()).join(" ");
    assert_eq!(picked(Release::Pacific), "/dev/sdb", "its OSD disk and the existing OSD make two");
    assert_eq!(picked(Release::Quincy), "/dev/sdb /dev/sdc", "as 17.2.9's code does: the OSD disk no longer counts");
    assert_eq!(picked(Release::Reef), "/dev/sdb /dev/sdc", "the walk stops");
    assert_eq!(picked(Release::Squid), "/dev/sdb /dev/sdc");
    assert_eq!(picked(Release::Tentacle), "/dev/sdb /dev/sdc /dev/sdf", "past the limit, its own OSD disk still");
    let sel = select(&spec(LIMIT_2, Release::Tentacle).unwrap(), &disks, existing).unwrap();
    let passed: Vec<(usize, Pass)> =
        sel.skipped.iter().map(|s| (s.device, s.passes.iter().next().unwrap().1)).collect();
    assert!(matches!(passed[..], [(2, Pass::Limit { .. }), (3, Pass::Limit { .. })]), "{passed:?}");
}

#[test]
fn a_disk_being_replaced_is_skipped_from_19_2() {
    let mut replaced = blank("/dev/sdc");
    replaced.report.being_replaced = true;
    let disks = [blank("/dev/sdb"), replaced];
    let all = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\nspec: {data_devices: {all: true}}\n";
    let sel = |release| select(&spec(all, release).unwrap(), &disks, 0).unwrap();
    assert_eq!(data(&sel(Release::Reef)), ["/dev/sdb", "/dev/sdc"], "18.2 knows no such mark");
    for release in [Release::Squid, Release::Tentacle] {
        let s = sel(release);
        assert_eq!(data(&s), ["/dev/sdb"]);
        assert_eq!(s.skipped[0].passes.iter().next().map(|p| p.1), Some(Pass::BeingReplaced));
    }
}

#[test]
fn affinity_is_compared_as_text_from_17_2() {
    // A spec without an id: 16.2 compares the LV's "None" with None (another
    // spec's), 18.2 with str(None) (its own).
    let no_id = "service_type: osd\nplacement: {host_pattern: '*'}\nspec: {data_devices: {all: true}}\n";
    let disks = [osd_of("/dev/sdb", "None")];
    let taken = |release| data(&select(&spec(no_id, release).unwrap(), &disks, 0).unwrap()).len();
    assert_eq!((taken(Release::Pacific), taken(Release::Reef)), (0, 1));
    assert_eq!(taken(Release::Quincy), 1, "as 17.2.9's code does");
}

const CLASSES: &str = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\nspec:\n  \
    data_devices: {paths: [{path: /dev/sdb, crush_device_class: ssd}, /dev/sdc, {path: /dev/sdd, crush_device_class: ssd}]}\n  \
    db_devices: {paths: [/dev/nvme0n1]}\n  crush_device_class: hdd\n  encrypted: true\n  tpm2: true\n";

fn commands(s: &DriveSpec) -> Vec<String> {
    let sel = select(s, &[], 0).unwrap();
    ceph_volume_commands(s, &sel, &[]).iter().map(|c| shown(c)).collect()
}

#[test]
fn commands_per_class_with_objectstore_and_tpm_in_20_2() {
    let s = spec(CLASSES, Release::Tentacle).unwrap();
    assert_eq!(
        commands(&s),
        [
            "lvm batch --no-auto /dev/sdb /dev/sdd --db-devices /dev/nvme0n1 --crush-device-class ssd \
             --objectstore bluestore --dmcrypt --with-tpm --yes --no-systemd",
            "lvm batch --no-auto /dev/sdc --db-devices /dev/nvme0n1 --crush-device-class hdd \
             --objectstore bluestore --dmcrypt --with-tpm --yes --no-systemd",
        ]
    );
    let reef = CLASSES.replace("  tpm2: true\n", "");
    assert_eq!(
        commands(&spec(&reef, Release::Reef).unwrap())[1],
        "lvm batch --no-auto /dev/sdc --db-devices /dev/nvme0n1 --crush-device-class hdd --dmcrypt --yes --no-systemd"
    );
    let pacific = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                   spec: {data_devices: {paths: [/dev/sdb]}, crush_device_class: hdd}\n";
    assert_eq!(
        commands(&spec(pacific, Release::Pacific).unwrap()),
        ["lvm batch --no-auto /dev/sdb --yes --no-systemd --crush-device-class hdd"],
        "16.2 puts the class last"
    );
}

#[test]
fn raw_db_devices_reverse_for_every_class_from_17_2() {
    let yaml = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\nspec:\n  method: raw\n  \
        data_devices: {paths: [{path: /dev/a, crush_device_class: x}, {path: /dev/b, crush_device_class: y}, \
        {path: /dev/c, crush_device_class: x}, {path: /dev/e, crush_device_class: y}]}\n  \
        db_devices: {paths: [/dev/d1, /dev/d2, /dev/d3, /dev/d4]}\n";
    let got = commands(&spec(yaml, Release::Reef).unwrap());
    let pairs: Vec<(&str, &str)> = got
        .iter()
        .map(|c| {
            let w: Vec<&str> = c.split(' ').collect();
            (w[4], w[6])
        })
        .collect();
    // Class x takes d1, d2; the rest, reversed again, give class y d4 then d3.
    assert_eq!(pairs, [("/dev/a", "/dev/d1"), ("/dev/c", "/dev/d2"), ("/dev/b", "/dev/d4"), ("/dev/e", "/dev/d3")]);
}

#[test]
fn new_keys_are_unknown_before_their_release_and_refused_with_the_reason_where_osdkeeper_cannot_carry_them_out() {
    let with = |extra: &str| {
        format!("service_type: osd\nservice_id: s\nplacement: {{host_pattern: '*'}}\nspec:\n  data_devices: {{all: true}}\n{extra}")
    };
    let err = |yaml: &str, release| spec(yaml, release).unwrap_err();
    let config = with("config: {osd_memory_target: 1G}\n");
    let e = err(&config, Release::Pacific);
    assert!(!e.stricter_than_cephadm && e.message.starts_with("Feature `config` is not supported"), "{e}");
    let e = err(&config, Release::Reef);
    assert!(e.stricter_than_cephadm && e.field == "config" && e.message.contains("osd_memory_target"), "{e}");

    let tpm = with("  tpm2: true\n");
    assert!(err(&tpm, Release::Reef).message.starts_with("Feature `tpm2` is not supported"));
    let e = err(&tpm, Release::Tentacle);
    assert!(e.stricter_than_cephadm && e.field == "tpm2" && e.message.contains("encrypted"), "{e}");
    assert!(spec(&with("  tpm2: true\n  encrypted: true\n"), Release::Tentacle).unwrap().tpm2);

    let actuators = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                     spec: {data_devices: {actuators: 2}, osds_per_device: 2}\n";
    assert!(err(actuators, Release::Pacific).message.starts_with("Filtering for `actuators` is not supported"));
    let e = err(actuators, Release::Reef);
    assert!(e.stricter_than_cephadm && e.field == "spec.data_devices.actuators", "{e}");

    let dict = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                spec: {data_devices: {paths: [{path: /dev/sdb, crush_device_class: ssd}]}}\n";
    assert!(err(dict, Release::Pacific).stricter_than_cephadm);
    let s = spec(dict, Release::Reef).unwrap();
    assert_eq!(
        (s.data.paths.as_slice(), s.data.path_classes.as_slice()),
        (&["/dev/sdb".to_string()][..], &[Some("ssd".to_string())][..])
    );
    let empty = dict.replace("path: /dev/sdb, ", "");
    let e = err(&empty, Release::Reef);
    assert!(!e.stricter_than_cephadm && e.message == "Device path cannot be empty", "{e}");
}

#[test]
fn host_pattern_narrows_a_label_from_17_2() {
    use crate::domain::spec::HostRef;
    let yaml = "service_type: osd\nservice_id: s\nplacement: {label: osd, host_pattern: 'r2*'}\n\
                spec: {data_devices: {all: true}}\n";
    let labels = vec!["osd".to_string()];
    let hosts = [HostRef { name: "r1-a", labels: &labels }, HostRef { name: "r2-a", labels: &labels }];
    let matched = |release| spec(yaml, release).unwrap().placement.matching_hosts(&hosts);
    assert_eq!(matched(Release::Pacific), ["r1-a", "r2-a"]);
    assert_eq!(matched(Release::Quincy), ["r2-a"], "as 17.2.9's code does");
    assert_eq!(matched(Release::Reef), ["r2-a"]);
}

#[test]
fn quincy_has_per_class_commands_config_and_class_paths_but_not_actuators_as_17_2_9_code_does() {
    let quincy = CLASSES.replace("  tpm2: true\n", "");
    let s = spec(&quincy, Release::Quincy).unwrap();
    assert_eq!(commands(&s), commands(&spec(&quincy, Release::Reef).unwrap()), "one command per class, as 18.2");
    assert_eq!(
        commands(&s)[1],
        "lvm batch --no-auto /dev/sdc --db-devices /dev/nvme0n1 --crush-device-class hdd --dmcrypt --yes --no-systemd"
    );
    let config = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                  spec: {data_devices: {all: true}}\nconfig: {osd_memory_target: 1G}\n";
    let e = spec(config, Release::Quincy).unwrap_err();
    assert!(e.stricter_than_cephadm && e.field == "config", "a key of 17.2, refused on purpose: {e}");
    let actuators = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
                     spec: {data_devices: {actuators: 2}}\n";
    let e = spec(actuators, Release::Quincy).unwrap_err();
    assert!(!e.stricter_than_cephadm && e.message.starts_with("Filtering for `actuators` is not supported"), "{e}");
    let tpm = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n\
               spec: {data_devices: {all: true}, encrypted: true, tpm2: true}\n";
    assert!(spec(tpm, Release::Quincy).unwrap_err().message.starts_with("Feature `tpm2` is not supported"));
}

/// 19.2.3's `lvm batch` planning is 20.2's (DB on the data disk for a DB
/// size without DB devices, WAL only beside DB devices and only for the
/// last OSD) except where no DB slot is free: it plans nothing, as 16.2.
#[test]
fn squid_batch_plans_db_and_wal_as_20_2_but_nothing_without_a_free_slot_as_19_2_3_code_does() {
    use crate::domain::osd_layout::planned_osds;
    let sized = |path: &str, bytes: f64| {
        let mut d = blank(path);
        d.report.size_bytes = Some(bytes);
        d
    };
    let mut full_db = sized("/dev/nvme1n1", 375083606016.0);
    full_db.report.available = false;
    full_db.report.ceph_device = true;
    full_db.report.rejected_reasons =
        ["Has a FileSystem", "Insufficient space (<10 extents) on vgs", "LVM detected"].map(Arc::from).to_vec();
    let host = [sized("/dev/nvme0n1", 375083606016.0), full_db, sized("/dev/sdb", 4e12), sized("/dev/sdc", 4e12)];
    let plan = |cmd: &str, release| planned_osds(&[cmd.split(' ').map(str::to_string).collect()], &host, release);
    let db_size = plan("lvm batch --no-auto /dev/sdb /dev/sdc --block-db-size 10G --yes", Release::Squid).unwrap();
    assert!(db_size.osds.iter().all(|o| o.db.as_deref() == Some(&*o.data)), "its DB on its own disk");
    let both = "lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --wal-devices /dev/nvme1n1 --yes";
    let wal_only = "lvm batch --no-auto /dev/sdb /dev/sdc --wal-devices /dev/nvme0n1 --yes";
    let wals =
        |cmd, release| -> Vec<bool> { plan(cmd, release).unwrap().osds.iter().map(|o| o.wal.is_some()).collect() };
    assert_eq!(wals(wal_only, Release::Squid), [false, false], "no DB devices, no WAL");
    assert_eq!(wals(wal_only, Release::Reef), [true, true]);
    assert!(plan(both, Release::Squid).unwrap().osds.is_empty(), "the used WAL device has no slot: nothing planned");
    assert!(plan(both, Release::Tentacle).is_err(), "20.2 exits 1 there");
}
