//! Devices held back from every spec until an operator releases them.

use super::{Result, Store, StoreError, Topic};
use crate::domain::device_id::same_disk;

/// A device held back from every spec, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldDevice {
    pub host: String,
    pub path: String,
    pub reason: String,
    pub since: i64,
    /// The held disk's id (serial/WWN), when known; another disk at the same path is not held.
    pub device_id: Option<String>,
    /// Held until a new disk is at this other path of the host (`device
    /// replace` of a disk these OSDs also used).
    pub waits_for_slot: Option<String>,
}

impl HeldDevice {
    /// Whether this hold applies to the device at `path` with `device_id`:
    /// the same disk by `device_id::same_disk`, so that a ceph-volume of
    /// another release, which names the disk differently, keeps it held. A
    /// report without an id (20.2 without udev data) keeps the hold too:
    /// nothing says another disk took the slot, and a hold errs on the side
    /// of keeping a disk out of specs.
    pub fn covers(&self, host: &str, path: &str, device_id: &str) -> bool {
        self.host == host
            && self.path == path
            && match self.device_id.as_deref() {
                None | Some("") => true,
                Some(_) if device_id.trim().is_empty() => true,
                Some(id) => same_disk(id, device_id),
            }
    }
}

impl Store {
    /// Holds a device; holding it again keeps the first reason and time.
    pub async fn hold(&self, host: &str, path: &str, device_id: Option<&str>, reason: &str, now: i64) -> Result<()> {
        self.backend.hold(host, path, device_id.filter(|d| !d.is_empty()), reason, None, now).await?;
        self.changed(Topic::Holds);
        Ok(())
    }

    /// Holds a device until a new disk is at `slot` on the same host, in
    /// place of any hold at its path; the hold it replaced.
    pub async fn hold_until_slot(
        &self,
        host: &str,
        path: &str,
        device_id: Option<&str>,
        reason: &str,
        slot: &str,
        now: i64,
    ) -> Result<Option<HeldDevice>> {
        let before =
            self.backend.hold_for_slot(host, path, device_id.filter(|d| !d.is_empty()), reason, slot, now).await?;
        self.changed(Topic::Holds);
        Ok(before)
    }

    /// Puts back a hold `hold_until_slot` replaced (a refused replacement).
    pub async fn restore_hold(&self, h: &HeldDevice) -> Result<()> {
        let _ = self.backend.release(&h.host, &h.path).await?;
        let id = h.device_id.as_deref();
        self.backend.hold(&h.host, &h.path, id, &h.reason, h.waits_for_slot.as_deref(), h.since).await?;
        self.changed(Topic::Holds);
        Ok(())
    }

    pub async fn release(&self, host: &str, path: &str) -> Result<HeldDevice> {
        let hold = self
            .backend
            .release(host, path)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("{path} on {host} is not held")))?;
        self.changed(Topic::Holds);
        Ok(hold)
    }

    /// Lifts every hold of `host` waiting for `slot` at once: a reader
    /// (the planner) sees all of them or none, never a slot's disks half
    /// released. The holds lifted, by path.
    pub async fn release_slot(&self, host: &str, slot: &str) -> Result<Vec<HeldDevice>> {
        let lifted = self.backend.release_slot(host, slot).await?;
        if !lifted.is_empty() {
            self.changed(Topic::Holds);
        }
        Ok(lifted)
    }

    pub async fn holds(&self) -> Result<Vec<HeldDevice>> {
        self.backend.holds().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(device_id: Option<&str>) -> HeldDevice {
        HeldDevice {
            host: "h1".into(),
            path: "/dev/sdb".into(),
            reason: "zapped by an operator".into(),
            since: 0,
            device_id: device_id.map(String::from),
            waits_for_slot: None,
        }
    }

    /// Held under 16.2's id; the host's ceph-volume is now 18.2 or 20.2
    /// (ids from `domain::device_id`'s tests, built from each release's code).
    #[test]
    fn a_hold_outlives_a_ceph_volume_upgrade_and_follows_no_other_disk() {
        let held = hold(Some("Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X"));
        assert!(held.covers("h1", "/dev/sdb", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X"), "18.2's id");
        assert!(held.covers("h1", "/dev/sdb", "_S3Z9NB0K123456X"), "20.2's id without a model");
        assert!(held.covers("h1", "/dev/sdb", ""), "20.2 without udev data: kept held");
        assert!(
            !held.covers("h1", "/dev/sdb", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K999999X"),
            "another disk in the slot"
        );
        assert!(!held.covers("h1", "/dev/sdc", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X"));
        assert!(!held.covers("h2", "/dev/sdb", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X"));
        assert!(hold(None).covers("h1", "/dev/sdb", "anything"), "held by its slot");
    }
}
