//! A scan's device list, and the one rule for telling a loop device by
//! its path: leaves that the inventory, ceph-volume and the edge share.

use serde_json::Value;

use crate::wire::ceph_volume::DeviceReport;

/// A scan's devices: each as the JSON it came as (sent on unchanged) and
/// as read, in the same order.
#[derive(Debug, Default)]
pub struct Devices {
    pub json: Vec<Value>,
    pub reports: Vec<DeviceReport>,
}

impl Devices {
    /// Keeps the devices whose report passes `keep`.
    pub fn retain(&mut self, mut keep: impl FnMut(&DeviceReport) -> bool) {
        let kept: Vec<bool> = self.reports.iter().map(&mut keep).collect();
        let mut flags = kept.iter();
        self.json.retain(|_| *flags.next().expect("one flag per device"));
        let mut flags = kept.iter();
        self.reports.retain(|_| *flags.next().expect("one flag per device"));
    }
}

/// Whether `path` names a loop device (`/dev/loopN`).
pub fn is_loop_device(path: &str) -> bool {
    path.strip_prefix("/dev/loop").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
