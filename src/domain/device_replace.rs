//! `device replace HOST DEV`: which OSDs a disk takes down with it, which
//! of their other disks wait for the new one, and when a new disk is in its
//! slot. Pure; the daemon's `inventory/replace.rs` acts on it.
//!
//! The OSDs on a disk are every OSD with a volume on it: its data, or its
//! DB or WAL (a shared DB SSD takes every HDD OSD whose DB it holds). They
//! are removed with `--replace --zap`, so their ids wait, destroyed, for
//! the specs to redeploy them. Until a new disk is in the slot, the old
//! disk is held by its serial (a spec never takes it again) and so are the
//! OSDs' other disks that only they used (an HDD whose DB was on the
//! failed SSD would otherwise be redeployed at once, without a DB).

use super::device_id::same_disk;
use super::identity::{disk_at_path, DiskAtPath};
use super::inventory::Device;

/// An OSD with volumes on the disk being replaced, and what they are
/// (`block`, `db`, `wal`; `data` for a raw OSD Ceph's metadata names).
#[derive(Debug, Clone, PartialEq)]
pub struct OsdOnDisk {
    pub osd: u32,
    pub kinds: Vec<String>,
}

/// The OSDs on `disk`, from its LVs and from the OSDs whose metadata puts
/// their data on it (`raw`: a raw BlueStore OSD has no LV), by id.
pub fn osds_on(disk: &Device, raw: &[u32]) -> Vec<OsdOnDisk> {
    fn note(found: &mut Vec<OsdOnDisk>, osd: u32, kind: &str) {
        match found.iter_mut().find(|o| o.osd == osd) {
            Some(o) if o.kinds.iter().any(|k| k == kind) => {}
            Some(o) => o.kinds.push(kind.to_string()),
            None => found.push(OsdOnDisk { osd, kinds: vec![kind.to_string()] }),
        }
    }
    let mut found: Vec<OsdOnDisk> = Vec::new();
    for lv in &disk.lvs {
        if let Some(osd) = lv.osd_id.as_deref().and_then(|i| i.parse().ok()) {
            note(&mut found, osd, lv.kind.as_deref().unwrap_or("volume"));
        }
    }
    for &osd in raw {
        if !found.iter().any(|o| o.osd == osd) {
            note(&mut found, osd, "data");
        }
    }
    found.sort_by_key(|o| o.osd);
    found
}

/// `osd.3 (DB), osd.11 (block, DB)`.
pub fn describe(osds: &[OsdOnDisk]) -> String {
    osds.iter()
        .map(|o| {
            let kinds: Vec<String> =
                o.kinds.iter().map(|k| if k == "db" || k == "wal" { k.to_uppercase() } else { k.clone() }).collect();
            format!("osd.{} ({})", o.osd, kinds.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One device of a replaced OSD, with every OSD that has volumes on it.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdDevice {
    pub path: String,
    pub device_id: Option<String>,
    pub users: Vec<u32>,
}

/// The devices that wait with the slot: the replaced OSDs' other devices
/// that no other OSD uses (a DB SSD that other OSDs keep using is theirs,
/// and its free space is where the redeployed OSD's DB goes). Deduplicated,
/// in the order given.
pub fn companions(slot: &str, replaced: &[u32], devices: &[OsdDevice]) -> Vec<OsdDevice> {
    let mut out: Vec<OsdDevice> = Vec::new();
    for d in devices {
        if d.path == slot || out.iter().any(|o| o.path == d.path) {
            continue;
        }
        if d.users.iter().all(|u| replaced.contains(u)) {
            out.push(d.clone());
        }
    }
    out
}

/// Whether the slot holds a new disk: a disk is reported at its path, and
/// both it and the one replaced have ids that name different disks. A disk
/// without a serial or WWN cannot be told from the old one: the operator
/// says so with `device release`.
pub fn slot_filled(old_id: Option<&str>, now_at_slot: Option<&Device>) -> bool {
    let now = now_at_slot.map(|d| &*d.device_id);
    matches!(disk_at_path(old_id.unwrap_or(""), now), DiskAtPath::Another { .. })
}

/// Whether ceph-volume's "being replaced" header is to be written on the
/// slot's disk now: the host's ceph-volume reads it, the disk at the slot
/// is still the one replaced (the same id; a disk without one cannot be
/// told from its successor and is left alone), it is not marked yet, and
/// nothing of an OSD is left on it (the agent checks again, with the disk
/// held, that it is blank). The caller knows that the slot's removals are
/// over.
pub fn header_due(reads_header: bool, old_id: Option<&str>, now_at_slot: Option<&Device>) -> bool {
    let (true, Some(old), Some(now)) = (reads_header, old_id.filter(|i| !i.trim().is_empty()), now_at_slot) else {
        return false;
    };
    same_disk(old, &now.device_id) && !now.being_replaced && now.lvs.is_empty() && !now.ceph_device
}

/// A removal of the replacement, as `--clear` sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotRemoval {
    pub osd: u32,
    /// A stop is taken (a drain's OSD stays; in place, `noout` is lifted
    /// once it waits for the new disk).
    pub can_stop: bool,
    /// Its disks are being worked on (the daemon stopped, destroyed,
    /// zapped): no spec's until that is over.
    pub busy: bool,
    pub devices: Vec<String>,
}

/// What `--clear` does: stop the removals that can stop; lift the slot's
/// own hold and the holds of disks no unstoppable removal still works on
/// (a disk being zapped is no spec's until its removal ends, and then the
/// slot, its own hold gone, lets it go).
#[derive(Debug, Clone, PartialEq)]
pub struct ClearPlan {
    pub stop: Vec<u32>,
    pub release: Vec<String>,
    pub keep: Vec<String>,
}

pub fn clear_plan(slot: &str, held: &[String], removals: &[SlotRemoval]) -> ClearPlan {
    let stop = removals.iter().filter(|r| r.can_stop).map(|r| r.osd).collect();
    let busy: Vec<&String> = removals.iter().filter(|r| r.busy).flat_map(|r| r.devices.iter()).collect();
    let (release, keep) = held.iter().cloned().partition(|p| p == slot || !busy.contains(&p));
    ClearPlan { stop, release, keep }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::inventory::{Device, DeviceReport, Lv};

    fn disk(path: &str, id: &str, lvs: &[(&str, &str)]) -> Device {
        let mut r = DeviceReport { path: path.into(), device_id: id.into(), ..DeviceReport::default() };
        r.lvs = lvs.iter().map(|(osd, kind)| Lv::of_osd(osd, kind)).collect();
        Device::from(r)
    }

    #[test]
    fn the_header_goes_on_the_replaced_disk_once_nothing_is_left_on_it() {
        let zapped = disk("/dev/sdd", "QEMU_HDD_7", &[]);
        assert!(header_due(true, Some("QEMU_HDD_7"), Some(&zapped)));
        assert!(!header_due(false, Some("QEMU_HDD_7"), Some(&zapped)), "a ceph-volume before 19.2.1");
        assert!(!header_due(true, None, Some(&zapped)), "no id: the old disk cannot be told from a new one");
        assert!(!header_due(true, Some("QEMU_HDD_7"), None), "gone from the slot");
        let new = disk("/dev/sdd", "QEMU_SSD_9", &[]);
        assert!(!header_due(true, Some("QEMU_HDD_7"), Some(&new)), "a new disk is in the slot");
        let still = disk("/dev/sdd", "QEMU_HDD_7", &[("4", "block")]);
        assert!(!header_due(true, Some("QEMU_HDD_7"), Some(&still)), "an OSD's LV is on it");
        let mut marked =
            DeviceReport { path: "/dev/sdd".into(), device_id: "QEMU_HDD_7".into(), ..DeviceReport::default() };
        marked.being_replaced = true;
        assert!(!header_due(true, Some("QEMU_HDD_7"), Some(&Device::from(marked))), "marked already");
    }

    #[test]
    fn a_shared_db_disk_takes_every_osd_whose_db_it_holds() {
        let ssd = disk("/dev/sdc", "Samsung_SSD_860_S1009", &[("3", "db"), ("11", "db"), ("11", "wal")]);
        let on = osds_on(&ssd, &[]);
        assert_eq!(
            on,
            [
                OsdOnDisk { osd: 3, kinds: vec!["db".into()] },
                OsdOnDisk { osd: 11, kinds: vec!["db".into(), "wal".into()] }
            ]
        );
        assert_eq!(describe(&on), "osd.3 (DB), osd.11 (DB, WAL)");
    }

    #[test]
    fn a_raw_osd_is_found_by_its_metadata_once() {
        let loop0 = disk("/dev/loop0", "", &[]);
        assert_eq!(osds_on(&loop0, &[4, 4]), [OsdOnDisk { osd: 4, kinds: vec!["data".into()] }]);
        let hdd = disk("/dev/sdd", "WDC_S1016", &[("8", "block")]);
        assert_eq!(describe(&osds_on(&hdd, &[8])), "osd.8 (block)");
    }

    fn dev(path: &str, users: &[u32]) -> OsdDevice {
        OsdDevice { path: path.into(), device_id: Some(format!("ID-{path}")), users: users.to_vec() }
    }

    #[test]
    fn only_disks_no_other_osd_uses_wait_with_the_slot() {
        // The SSD with osd.3's and osd.11's DBs fails: both HDDs wait.
        let devices =
            [dev("/dev/sdb", &[3]), dev("/dev/sdc", &[3, 11]), dev("/dev/sdf", &[11]), dev("/dev/sdc", &[3, 11])];
        let waiting: Vec<String> = companions("/dev/sdc", &[3, 11], &devices).into_iter().map(|d| d.path).collect();
        assert_eq!(waiting, ["/dev/sdb", "/dev/sdf"]);
        // osd.8's HDD fails: the DB SSD it shares with osd.15 stays free for specs.
        let devices = [dev("/dev/sdd", &[8]), dev("/dev/sdf", &[8, 15])];
        assert!(companions("/dev/sdd", &[8], &devices).is_empty());
    }

    #[test]
    fn a_new_disk_is_one_with_another_id_at_the_slot() {
        let old = "Samsung_SSD_860_S1009";
        assert!(!slot_filled(Some(old), None), "the slot is empty");
        assert!(!slot_filled(Some(old), Some(&disk("/dev/sdc", old, &[]))), "the old disk, zapped");
        assert!(slot_filled(Some(old), Some(&disk("/dev/sdc", "Samsung_SSD_870_S2001", &[]))));
        assert!(!slot_filled(Some(old), Some(&disk("/dev/sdc", "", &[]))), "no id: cannot tell");
        assert!(!slot_filled(None, Some(&disk("/dev/sdc", "Samsung_SSD_870_S2001", &[]))), "the old one had none");
    }

    #[test]
    fn clear_lets_go_of_a_disk_being_zapped_only_when_its_removal_ends() {
        let held: Vec<String> = ["/dev/sdb", "/dev/sdc", "/dev/sdf"].map(String::from).to_vec();
        let removals = [
            SlotRemoval { osd: 3, can_stop: false, busy: true, devices: vec!["/dev/sdb".into(), "/dev/sdc".into()] },
            SlotRemoval { osd: 11, can_stop: true, busy: false, devices: vec!["/dev/sdf".into(), "/dev/sdc".into()] },
        ];
        let plan = clear_plan("/dev/sdc", &held, &removals);
        assert_eq!(plan.stop, [11]);
        assert_eq!(plan.release, ["/dev/sdc", "/dev/sdf"], "the slot always; osd.11's HDD, its removal stopped");
        assert_eq!(plan.keep, ["/dev/sdb"], "osd.3's HDD is still being zapped");
        let all_stop: Vec<SlotRemoval> =
            removals.iter().map(|r| SlotRemoval { can_stop: true, busy: false, ..r.clone() }).collect();
        assert!(clear_plan("/dev/sdc", &held, &all_stop).keep.is_empty());
        // In place, a removal being zapped takes the stop (it lifts noout
        // once it waits for the new disk) and still keeps its disks.
        let in_place = [SlotRemoval { can_stop: true, ..removals[0].clone() }, removals[1].clone()];
        let plan = clear_plan("/dev/sdc", &held, &in_place);
        assert_eq!((plan.stop, plan.keep), (vec![3, 11], vec!["/dev/sdb".to_string()]));
    }
}
