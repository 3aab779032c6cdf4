//! What changed between two inventories of a host: the daemon's "Detected
//! new or changed devices" event says which disks appeared, disappeared or
//! changed (availability, size, OSD volumes, Ceph's device id).
//!
//! The reasons an unavailable disk is rejected are not a change of their
//! own: ceph-volume reads them afresh each scan, and on a disk an OSD is
//! writing to they flap ("Has a FileSystem" there one scan, gone the next:
//! seen on the sandbox's raw OSDs, an event per host every 1-2 s). A disk
//! that becomes available, or stops being, is a change either way.

use crate::domain::inventory::Device;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct InventoryDiff {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
}

impl InventoryDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }

    /// "added /dev/sdf; changed /dev/sdb" for event messages.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (what, list) in [("added", &self.added), ("removed", &self.removed), ("changed", &self.changed)] {
            if !list.is_empty() {
                parts.push(format!("{what} {}", list.join(", ")));
            }
        }
        parts.join("; ")
    }
}

/// Compares by path; both lists as read from inventories (sorted by path).
pub fn diff(before: &[Device], after: &[Device]) -> InventoryDiff {
    let mut d = InventoryDiff::default();
    for a in after {
        match before.iter().find(|b| b.path == a.path) {
            None => d.added.push(a.path.to_string()),
            Some(b) if differs(b, a) => d.changed.push(a.path.to_string()),
            Some(_) => {}
        }
    }
    for b in before {
        if !after.iter().any(|a| a.path == b.path) {
            d.removed.push(b.path.to_string());
        }
    }
    d
}

fn differs(a: &Device, b: &Device) -> bool {
    a.available != b.available
        || a.ceph_device != b.ceph_device
        || a.size_bytes != b.size_bytes
        || a.device_id != b.device_id
        || a.lvs != b.lvs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(path: &str, available: bool) -> Device {
        Device::from(crate::domain::inventory::DeviceReport { path: path.into(), available, ..Default::default() })
    }

    #[test]
    fn added_removed_changed() {
        let before = [dev("/dev/sda", true), dev("/dev/sdb", true)];
        let after = [dev("/dev/sdb", false), dev("/dev/sdc", true)];
        let d = diff(&before, &after);
        assert_eq!(d.added, ["/dev/sdc"]);
        assert_eq!(d.removed, ["/dev/sda"]);
        assert_eq!(d.changed, ["/dev/sdb"]);
        assert_eq!(d.summary(), "added /dev/sdc; removed /dev/sda; changed /dev/sdb");
        assert!(diff(&after, &after).is_empty());
    }

    #[test]
    fn reject_reasons_alone_are_no_change() {
        let with = |reasons: &[&str]| {
            Device::from(crate::domain::inventory::DeviceReport {
                path: "/dev/loop0".into(),
                available: false,
                rejected_reasons: reasons.iter().map(|r| std::sync::Arc::from(*r)).collect(),
                ..Default::default()
            })
        };
        let before = [with(&["Insufficient space (<5GB)", "Has a FileSystem"])];
        let after = [with(&["Insufficient space (<5GB)"])];
        assert!(diff(&before, &after).is_empty(), "a flapping reason of an unavailable disk");
        assert_eq!(diff(&before, &[dev("/dev/loop0", true)]).changed, ["/dev/loop0"], "available now");
    }
}
