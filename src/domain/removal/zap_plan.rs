//! What `--zap` does to each of an OSD's devices, decided from the host's
//! inventory (the LVs on each device and the OSD each belongs to): a device
//! that holds only this OSD's volumes is wiped whole; one that also holds
//! other OSDs' LVs (a DB device shared by several HDD OSDs) loses this
//! OSD's LVs and keeps theirs. Shown by the removal preview and recorded in
//! the removal when it is scheduled.

use crate::domain::inventory::Device;

#[derive(Debug, Clone, PartialEq)]
pub struct DeviceZap {
    pub path: String,
    /// This OSD's volumes on the device by kind (`block`, `db`, `wal`); none
    /// for a raw OSD's device or one the inventory does not know.
    pub own: Vec<String>,
    /// Other OSDs with volumes on it, with their kinds there: they stay.
    pub others: Vec<(String, Vec<String>)>,
}

impl DeviceZap {
    /// Only this OSD's LVs go; the device keeps the others'.
    pub fn is_shared(&self) -> bool {
        !self.others.is_empty()
    }
}

/// Each device's fate, in the order of `devices`.
pub fn plan(osd: u32, devices: &[String], inventory: &[Device]) -> Vec<DeviceZap> {
    let id = osd.to_string();
    devices
        .iter()
        .map(|path| {
            let mut own = Vec::new();
            let mut others: Vec<(String, Vec<String>)> = Vec::new();
            if let Some(d) = inventory.iter().find(|d| &*d.path == path) {
                for lv in &d.lvs {
                    let Some(owner) = lv.osd_id.as_deref() else { continue };
                    let kind = lv.kind.as_deref().unwrap_or("volume").to_string();
                    if owner == id {
                        push_unique(&mut own, kind);
                    } else if let Some((_, kinds)) = others.iter_mut().find(|(o, _)| o == owner) {
                        push_unique(kinds, kind);
                    } else {
                        others.push((owner.to_string(), vec![kind]));
                    }
                }
            }
            others.sort_by_key(|(o, _)| o.parse::<u64>().unwrap_or(u64::MAX));
            DeviceZap { path: path.clone(), own, others }
        })
        .collect()
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

/// What the zap does, one clause per device:
/// `wipes /dev/sdb (its block); zaps osd.3's DB LV on /dev/sdd; osd.4's DB stays`.
/// An OSD in `together` (removed in the same request) is not said to stay:
/// its own zap takes its LVs (`osd.4's DB goes with its own removal`).
pub fn describe(osd: u32, plan: &[DeviceZap], together: &[u32]) -> String {
    plan.iter()
        .map(|d| {
            let own = if d.own.is_empty() { String::new() } else { format!(" (its {})", upper(&d.own)) };
            if !d.is_shared() {
                return format!("wipes {}{own}", d.path);
            }
            let lvs = if d.own.is_empty() { "LVs".to_string() } else { format!("{} LV", upper(&d.own)) };
            let goes = |o: &String| o.parse::<u32>().is_ok_and(|o| together.contains(&o));
            let stay: Vec<String> = d
                .others
                .iter()
                .map(|(o, kinds)| match goes(o) {
                    true => format!("osd.{o}'s {} goes with its own removal", upper(kinds)),
                    false => format!("osd.{o}'s {} stays", upper(kinds)),
                })
                .collect();
            format!("zaps osd.{osd}'s {lvs} on {}; {}", d.path, stay.join("; "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `db` reads DB, `block` block: as operators write them.
fn upper(kinds: &[String]) -> String {
    kinds
        .iter()
        .map(|k| match k.as_str() {
            "db" | "wal" => k.to_uppercase(),
            _ => k.clone(),
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::inventory::{Device, Lv};

    fn lv(osd: &str, kind: &str) -> Lv {
        Lv::of_osd(osd, kind)
    }

    fn device(path: &str, lvs: Vec<Lv>) -> Device {
        let mut d = Device::default();
        d.report.path = path.into();
        d.report.lvs = lvs;
        d
    }

    /// osd.3 with its block on sdb and its DB on sdd, which osd.4's DB
    /// shares: the field report's "before" layout.
    #[test]
    fn a_db_device_shared_with_another_osd_keeps_its_lv() {
        let inventory = vec![
            device("/dev/sdb", vec![lv("3", "block")]),
            device("/dev/sdc", vec![lv("4", "block")]),
            device("/dev/sdd", vec![lv("3", "db"), lv("4", "db")]),
        ];
        let p = plan(3, &["/dev/sdb".into(), "/dev/sdd".into()], &inventory);
        assert!(!p[0].is_shared());
        assert!(p[1].is_shared());
        assert_eq!(
            describe(3, &p, &[3]),
            "wipes /dev/sdb (its block); zaps osd.3's DB LV on /dev/sdd; osd.4's DB stays"
        );
        assert_eq!(
            describe(3, &p, &[3, 4]),
            "wipes /dev/sdb (its block); zaps osd.3's DB LV on /dev/sdd; osd.4's DB goes with its own removal",
            "removed together (device replace of the DB SSD)"
        );
    }

    #[test]
    fn a_db_device_of_its_own_is_wiped_whole() {
        let inventory = vec![device("/dev/sdb", vec![lv("3", "block")]), device("/dev/sdd", vec![lv("3", "db")])];
        let p = plan(3, &["/dev/sdb".into(), "/dev/sdd".into()], &inventory);
        assert!(p.iter().all(|d| !d.is_shared()));
        assert_eq!(describe(3, &p, &[3]), "wipes /dev/sdb (its block); wipes /dev/sdd (its DB)");
    }

    #[test]
    fn a_raw_osd_device_has_no_lvs_and_is_wiped() {
        let p = plan(1, &["/dev/loop3".into()], &[device("/dev/loop3", vec![])]);
        assert_eq!(describe(1, &p, &[1]), "wipes /dev/loop3");
    }

    #[test]
    fn several_others_are_each_named() {
        let inventory = vec![device("/dev/sdd", vec![lv("9", "db"), lv("3", "db"), lv("11", "wal"), lv("11", "db")])];
        let p = plan(3, &["/dev/sdd".into()], &inventory);
        assert_eq!(
            describe(3, &p, &[3]),
            "zaps osd.3's DB LV on /dev/sdd; osd.9's DB stays; osd.11's WAL and DB stays"
        );
    }
}
