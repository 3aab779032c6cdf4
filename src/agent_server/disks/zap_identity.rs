//! What a zap finds on the disk it is about to wipe, held against what the
//! request names (`domain::identity::check_zap`): first, before anything is
//! run, from the inventory just taken (the disk's id, its LVs' fsid tags),
//! its BlueStore label and what `blkid -p` finds; then again under the
//! exclusive claim the wipe is made through (the label read through that
//! handle, the disk's id as udev gives it for the claimed device's number),
//! so that a disk pushed into the bay in between is not wiped either.

use std::path::Path;

use crate::agent_server::disks::claim::blkid_signatures;
use crate::agent_server::disks::label::{ceph_fsid, osd_uuid, whoami};
use crate::agent_server::inventory::kernel::{signatures, udev};
use crate::wire::agent::{DiskSeen, LabelSeen, LvSeen};
use crate::wire::ceph_volume::DeviceReport;

/// Where udev keeps what it knows of each block device.
pub const UDEV_DATA: &str = "/run/udev/data";

/// The OSD a BlueStore label block names, if it is one.
pub fn label_seen(block: &[u8]) -> Option<LabelSeen> {
    Some(LabelSeen { osd_uuid: osd_uuid(block)?, whoami: whoami(block), cluster_fsid: ceph_fsid(block) })
}

/// Signatures that an OSD's own disk carries (its LVM PV, its BlueStore
/// label): told apart by the LVs and the label themselves.
fn of_an_osd(signature: &str) -> bool {
    matches!(signature, "LVM2_member" | "ceph_bluestore")
}

/// What the disk at `path` holds, before the zap runs anything.
pub async fn seen_before(device: &DeviceReport, path: &str, blkid: &str) -> DiskSeen {
    let node = path.to_string();
    let label = tokio::task::spawn_blocking(move || signatures::read_label(Path::new(&node)))
        .await
        .ok()
        .and_then(Result::ok)
        .flatten()
        .and_then(|(_, block)| label_seen(&block));
    let mut other: Vec<String> = blkid_signatures(blkid, path).await.into_iter().filter(|s| !of_an_osd(s)).collect();
    other.extend(device.partitions.iter().filter(|p| !p.is_empty()).map(|p| format!("a partition {p}")));
    DiskSeen {
        device_id: device.device_id.to_string(),
        lvs: device.lvs.iter().map(LvSeen::from).collect(),
        label,
        other,
    }
}

/// The disk's id as udev gives it for the device number `rdev` (the
/// claimed handle's), when udev knows one (a host without udev, a loop
/// device: none).
pub fn udev_id(rdev: u64, udev_data: &Path) -> Option<String> {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    let props = udev::properties(udev_data, &format!("{major}:{minor}"))?;
    Some(udev::device_id(&props)).filter(|id| !id.trim().is_empty())
}

/// What the disk holds as seen under the claim: the label read through
/// the claimed handle (`label`), the id udev gives the claimed device where
/// it gives one; the LVs and other signatures as seen before (the LVs were
/// removed by ceph-volume in between, when the zap removed them).
pub fn seen_under_claim(before: &DiskSeen, udev_id: Option<String>, label: Option<&[u8]>) -> DiskSeen {
    DiskSeen {
        device_id: udev_id.unwrap_or_else(|| before.device_id.clone()),
        lvs: Vec::new(),
        label: label.and_then(label_seen),
        other: before.other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::disks::label::test_label;
    use crate::wire::agent::{check_zap, ZapExpect};

    #[test]
    fn a_label_names_its_osd_and_cluster() {
        let seen = label_seen(&test_label(Some("4"), 2)).unwrap();
        assert_eq!(seen.osd_uuid, "f9364872-2ea4-4bec-afa7-b42bb5513f12");
        assert_eq!(
            (seen.whoami, seen.cluster_fsid.as_deref()),
            (Some(4), Some("75757249-f864-4e02-9720-f37e52df334e"))
        );
        assert_eq!(label_seen(&[0u8; 4096]), None);
    }

    #[test]
    fn under_the_claim_the_label_read_then_decides() {
        let before = DiskSeen { device_id: "WDC_S1".into(), ..DiskSeen::default() };
        let expect = ZapExpect {
            device_id: String::new(),
            osd_fsids: Some(vec!["0d0d0d0d-2ea4-4bec-afa7-b42bb5513f12".into()]),
            cluster_fsid: None,
        };
        let label = test_label(Some("4"), 2);
        let now = seen_under_claim(&before, None, Some(&label));
        assert_eq!(now.device_id, "WDC_S1", "udev has nothing: the inventory's id");
        let e = check_zap(&expect, &now).unwrap_err();
        assert!(e.to_string().contains("f9364872-2ea4-4bec-afa7-b42bb5513f12"), "{e}");
        let now = seen_under_claim(&before, Some("WDC_S2".into()), None);
        assert_eq!(now.device_id, "WDC_S2", "udev's id for the claimed device wins");
    }
}
