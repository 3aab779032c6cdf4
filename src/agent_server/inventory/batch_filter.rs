//! `GET /v1/inventory?filter_for_batch=true`: the device list cephadm
//! works from. cephadm asks `ceph-volume inventory --filter-for-batch`,
//! which keeps a device only when ceph-volume 16.2's
//! `Device.available_lvm_batch` holds:
//!
//! * it has no partitions (`sys_api.partitions` is empty),
//! * it is not mounted (its path or real path is no mount's source),
//! * it is a device (`is_device`: type `disk`, `device` or `mpath`, and
//!   lsblk or blkid knew it); partitions are dropped by this rule.
//!
//! Whether it is *available* does not matter here: a used disk stays in
//! the list, marked unavailable. ceph-volume applies the filter itself;
//! this module applies it to the kernel's view and to inventory files.
//! Loop devices named in `--devices` pass the type rule (ceph-volume takes
//! them only with `CEPH_VOLUME_ALLOW_LOOP_DEVICES`, which the agent sets
//! for them); the other two rules still apply to them.

use std::collections::BTreeSet;

use crate::agent_server::inventory::device_list::is_loop_device;
use crate::agent_server::inventory::device_list::Devices;
use crate::agent_server::inventory::kernel::NOT_ACCEPTABLE;
use crate::agent_server::inventory::mounts::Mounts;
use crate::wire::ceph_volume::DeviceReport;

/// Device types ceph-volume's `is_device` accepts.
const DEVICE_TYPES: [&str; 3] = ["disk", "device", "mpath"];

/// Why a device was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    Partitions,
    Mounted(Vec<String>),
    /// Its type (`part`, `loop`, `lvm`, ...), or that nothing knew it.
    NotADevice(String),
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeftOut::Partitions => f.write_str("has partitions"),
            LeftOut::Mounted(at) => write!(f, "mounted at {}", at.join(", ")),
            LeftOut::NotADevice(t) => write!(f, "not a disk or multipath device ({t})"),
        }
    }
}

/// What the filter knows besides the device reports.
pub struct BatchFilter<'a> {
    /// `--devices`.
    pub named: Option<&'a BTreeSet<String>>,
    /// The host's mount table; `None` for an inventory file, which
    /// describes some host whose mounts the agent cannot see.
    pub mounts: Option<&'a Mounts>,
    /// A device path's real path (`/dev/mapper/x` -> `/dev/dm-3`).
    pub resolve: &'a dyn Fn(&str) -> Option<String>,
}

impl BatchFilter<'_> {
    /// Why `device` is left out, or `None` when it stays.
    pub fn left_out(&self, device: &DeviceReport) -> Option<LeftOut> {
        let path = &*device.path;
        if device.has_partitions() {
            return Some(LeftOut::Partitions);
        }
        if let Some(mounts) = self.mounts {
            let resolved = (self.resolve)(path);
            let at = mounts.mount_points(path, resolved.as_deref());
            if !at.is_empty() {
                return Some(LeftOut::Mounted(at.into_iter().map(str::to_string).collect()));
            }
        }
        let named_loop = is_loop_device(path) && self.named.is_some_and(|n| n.contains(path));
        if named_loop {
            return None;
        }
        let dev_type = &*device.dev_type;
        if !DEVICE_TYPES.contains(&dev_type) {
            let shown = if dev_type.is_empty() { "no type" } else { dev_type };
            return Some(LeftOut::NotADevice(shown.to_string()));
        }
        // ceph-volume says this of a whole device only when neither lsblk
        // nor blkid knew it, which also makes it no device for batch.
        if device.rejected_reasons.iter().any(|r| &**r == NOT_ACCEPTABLE) {
            return Some(LeftOut::NotADevice("unknown to lsblk and blkid".into()));
        }
        None
    }

    /// Drops what cephadm would not see; says what was dropped and why.
    pub fn apply(&self, devices: &mut Devices) -> Vec<(String, LeftOut)> {
        let mut dropped = Vec::new();
        devices.retain(|d| match self.left_out(d) {
            None => true,
            Some(why) => {
                let path = if d.path.is_empty() { "?" } else { &d.path };
                dropped.push((path.to_string(), why));
                false
            }
        });
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ceph_volume::{report_of, reports_of};
    use serde_json::{json, Value};

    fn json_dev(path: &str, dev_type: &str, partitions: Value) -> Value {
        json!({"path": path, "sys_api": {"type": dev_type, "partitions": partitions}, "available": true,
               "rejected_reasons": [], "lvs": []})
    }

    fn dev(path: &str, dev_type: &str, partitions: Value) -> DeviceReport {
        report_of(&json_dev(path, dev_type, partitions)).unwrap()
    }

    fn same(p: &str) -> Option<String> {
        Some(p.to_string())
    }

    #[test]
    fn drops_what_ceph_volume_drops() {
        let mounts = Mounts::parse("/dev/sdd / ext4 rw 0 0\n/dev/dm-3 /srv xfs rw 0 0\n", &same);
        let resolve = |p: &str| match p {
            "/dev/mapper/mpathb" => Some("/dev/dm-3".to_string()),
            _ => Some(p.to_string()),
        };
        let f = BatchFilter { named: None, mounts: Some(&mounts), resolve: &resolve };
        let mut unknown = json_dev("/dev/sdf", "disk", json!({}));
        unknown["rejected_reasons"] = json!([NOT_ACCEPTABLE, "Insufficient space (<5GB)"]);
        let mut used = json_dev("/dev/sdg", "disk", json!({}));
        used["available"] = json!(false);
        used["rejected_reasons"] = json!(["LVM detected", "Has BlueStore device label"]);
        let json = vec![
            json_dev("/dev/sda", "disk", json!({"sda1": {"start": "2048"}})),
            json_dev("/dev/sda1", "part", json!({})),
            json_dev("/dev/sdb", "disk", json!({})),
            json_dev("/dev/mapper/mpatha", "mpath", json!({})),
            json_dev("/dev/mapper/mpathb", "mpath", json!({})),
            json_dev("/dev/sdd", "disk", json!({})),
            json_dev("/dev/loop3", "loop", json!({})),
            json_dev("/dev/sde", "", json!({})),
            unknown,
            used,
        ];
        let mut devices = Devices { reports: reports_of(&json, None).unwrap(), json };
        let dropped = f.apply(&mut devices);
        let kept: Vec<&str> = devices.reports.iter().map(|d| &*d.path).collect();
        let sent: Vec<&str> = devices.json.iter().map(|d| d["path"].as_str().unwrap()).collect();
        assert_eq!(kept, sent, "the JSON sent on keeps step with the reports");
        assert_eq!(kept, ["/dev/sdb", "/dev/mapper/mpatha", "/dev/sdg"], "used disks stay, marked unavailable");
        let shown: Vec<String> = dropped.iter().map(|(p, why)| format!("{p}: {why}")).collect();
        assert_eq!(
            shown,
            [
                "/dev/sda: has partitions",
                "/dev/sda1: not a disk or multipath device (part)",
                "/dev/mapper/mpathb: mounted at /srv",
                "/dev/sdd: mounted at /",
                "/dev/loop3: not a disk or multipath device (loop)",
                "/dev/sde: not a disk or multipath device (no type)",
                "/dev/sdf: not a disk or multipath device (unknown to lsblk and blkid)",
            ]
        );
    }

    #[test]
    fn named_loop_devices_stay_unless_partitioned_or_mounted() {
        let named: BTreeSet<String> = ["/dev/loop3", "/dev/loop4", "/dev/loop5"].map(String::from).into();
        let mounts = Mounts::parse("/dev/loop5 /mnt ext4 rw 0 0\n", &same);
        let f = BatchFilter { named: Some(&named), mounts: Some(&mounts), resolve: &same };
        let mut as_ceph_volume_says = json_dev("/dev/loop3", "loop", json!({}));
        as_ceph_volume_says["rejected_reasons"] = json!([NOT_ACCEPTABLE]);
        assert_eq!(f.left_out(&report_of(&as_ceph_volume_says).unwrap()), None);
        assert_eq!(f.left_out(&dev("/dev/loop4", "disk", json!({}))), None);
        assert_eq!(f.left_out(&dev("/dev/loop4", "disk", json!({"loop4p1": {}}))), Some(LeftOut::Partitions));
        assert_eq!(f.left_out(&dev("/dev/loop5", "disk", json!({}))), Some(LeftOut::Mounted(vec!["/mnt".into()])));
        // Not named: a loop device is no device for batch.
        assert!(matches!(f.left_out(&dev("/dev/loop6", "loop", json!({}))), Some(LeftOut::NotADevice(_))));
    }

    #[test]
    fn without_a_mount_table_mounts_are_not_judged() {
        let f = BatchFilter { named: None, mounts: None, resolve: &same };
        assert_eq!(f.left_out(&dev("/dev/sdd", "disk", json!({}))), None);
    }
}
