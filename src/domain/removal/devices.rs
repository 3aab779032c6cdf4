//! Which disks a removal frees, and when one counts as wiped.
//!
//! An OSD's devices come from the cluster's metadata (device nodes, and
//! serial/WWN ids where udev gave them) and are matched against the host's
//! inventory: by id where the cluster knows one, since a node name can move
//! to another disk after a reboot; else by node. Never guessed: a removal
//! that will wipe the disks must find every one of them.

use crate::domain::cluster::OsdDevices;
use crate::domain::device_id::same_disk;
use crate::domain::identity::{disk_at_path, same_uuid, DiskAtPath, ZapExpect};
use crate::domain::inventory::{Device, Lv};

use super::Removal;

/// The devices of an OSD, in the order the cluster lists them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identified {
    pub paths: Vec<String>,
    /// The same devices' ids, "" where the host reports none.
    pub device_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IdentifyError {
    #[error("Ceph has no metadata for osd.{osd}, so its devices cannot be identified; remove it without --zap")]
    NoMetadata { osd: u32 },
    #[error(
        "osd.{osd} uses {node}{}, which is not in {host}'s inventory; refresh it (`osdkeeper device ls {host} --refresh`) \
         or remove without --zap",
        serial.as_ref().map(|s| format!(" (id {s})")).unwrap_or_default()
    )]
    NotInInventory { osd: u32, host: String, node: String, serial: Option<String> },
}

/// Finds the OSD's devices in its host's inventory. Without `zap` an
/// unknown device is kept by its node name (it will not be wiped, only
/// held), and missing metadata gives no devices at all.
pub fn identify(
    osd: u32,
    host: &str,
    meta: Option<&OsdDevices>,
    inventory: &[Device],
    zap: bool,
) -> Result<Identified, IdentifyError> {
    let Some(meta) = meta else {
        return if zap { Err(IdentifyError::NoMetadata { osd }) } else { Ok(Identified::default()) };
    };
    let mut out = Identified::default();
    for node in &meta.dev_nodes {
        let kernel = node.trim_start_matches("/dev/");
        let serial = meta.device_ids.iter().find(|(k, _)| k == kernel).map(|(_, v)| v.clone());
        let found = match &serial {
            // Ceph may know only the serial's tail (e.g. without the vendor prefix).
            Some(s) => inventory
                .iter()
                .find(|d| !d.device_id.is_empty() && (d.device_id.ends_with(s.as_str()) || same_disk(&d.device_id, s))),
            None => inventory.iter().find(|d| &*d.path == node),
        };
        match found {
            Some(d) => {
                out.paths.push(d.path.to_string());
                out.device_ids.push(d.device_id.to_string());
            }
            None if zap => {
                return Err(IdentifyError::NotInInventory { osd, host: host.to_string(), node: node.clone(), serial })
            }
            None => {
                out.paths.push(node.clone());
                out.device_ids.push(String::new());
            }
        }
    }
    Ok(out)
}

/// The removal's devices that the host's inventory shows wiped: the same
/// disk (by id, where one was recorded), available, with no reason to
/// reject it and no logical volume left.
pub fn clean_devices(r: &Removal, inventory: &[Device]) -> Vec<String> {
    r.devices
        .iter()
        .enumerate()
        .filter(|(i, path)| {
            let want_id = r.device_ids.get(*i).map(String::as_str).unwrap_or("");
            inventory.iter().any(|d| {
                &*d.path == path.as_str()
                    // Recorded when the removal was scheduled: a ceph-volume
                    // upgraded since names the same disk differently.
                    && (want_id.is_empty() || same_disk(&d.device_id, want_id))
                    && d.available
                    && d.rejected_reasons.is_empty()
                    && d.lvs.is_empty()
            })
        })
        .map(|(_, p)| p.clone())
        .collect()
}

/// The removal's devices whose path the host's inventory now shows with
/// another disk (`identity::disk_at_path`): the old one was pulled.
pub fn replaced_devices(r: &Removal, inventory: &[Device]) -> Vec<String> {
    r.devices
        .iter()
        .enumerate()
        .filter(|(i, path)| {
            let want_id = r.device_ids.get(*i).map(String::as_str).unwrap_or("");
            let now = inventory.iter().find(|d| &*d.path == path.as_str()).map(|d| &*d.device_id);
            matches!(disk_at_path(want_id, now), DiskAtPath::Another { .. })
        })
        .map(|(_, p)| p.clone())
        .collect()
}

/// Whether an LV is this removal's OSD's: by its fsid tag where both are
/// known (an id may have been given to a new OSD since), else by its id.
fn is_own(r: &Removal, lv: &Lv) -> bool {
    match (r.uuid(), lv.osd_fsid.as_deref()) {
        (Some(own), Some(tag)) => same_uuid(own, tag),
        _ => lv.osd_id.as_deref() == Some(r.osd_id.to_string().as_str()),
    }
}

/// The removal's devices on which the host's inventory shows an LV that
/// is not its OSD's (another OSD's DB put there during the drain, an OSD
/// that took its id since, an LV of no OSD): they lose this OSD's LVs only.
pub fn shared_now(r: &Removal, inventory: &[Device]) -> Vec<String> {
    r.devices
        .iter()
        .filter(|path| inventory.iter().any(|d| &*d.path == path.as_str() && d.lvs.iter().any(|lv| !is_own(r, lv))))
        .cloned()
        .collect()
}

/// What a zap of one of the removal's devices names to the agent: the
/// disk's id as recorded, the OSD whose volumes may go (by its uuid), and
/// the cluster. A removal without a uuid names no OSD: a disk with an
/// OSD's volume or label on it is then refused.
pub fn zap_expect(r: &Removal, path: &str, cluster_fsid: Option<&str>) -> ZapExpect {
    let i = r.devices.iter().position(|p| p == path);
    ZapExpect {
        device_id: i.and_then(|i| r.device_ids.get(i)).cloned().unwrap_or_default(),
        osd_fsids: Some(r.uuid().map(str::to_string).into_iter().collect()),
        cluster_fsid: cluster_fsid.filter(|f| !f.is_empty()).map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn dev(path: &str, id: &str, available: bool) -> Device {
        let report = crate::domain::inventory::DeviceReport {
            path: Arc::from(path),
            device_id: id.into(),
            available,
            ..Default::default()
        };
        Device::from(report)
    }

    fn meta(nodes: &[&str], ids: &[(&str, &str)]) -> OsdDevices {
        OsdDevices {
            hostname: "f5-422-03".into(),
            dev_nodes: nodes.iter().map(|s| s.to_string()).collect(),
            device_ids: ids.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    #[test]
    fn a_serial_finds_the_disk_even_under_another_node_name() {
        // After a reboot the disk Ceph knew as sdd is sdf; its serial still matches.
        let inv = [dev("/dev/sdd", "OTHER_DISK", true), dev("/dev/sdf", "ATA_ST2000_Z4H0ABCD", false)];
        let m = meta(&["/dev/sdd"], &[("sdd", "Z4H0ABCD")]);
        let found = identify(8, "f5-422-03", Some(&m), &inv, true).unwrap();
        assert_eq!(found.paths, ["/dev/sdf"]);
        assert_eq!(found.device_ids, ["ATA_ST2000_Z4H0ABCD"]);
    }

    #[test]
    fn without_a_serial_the_node_decides() {
        let inv = [dev("/dev/loop4", "", false)];
        let found = identify(4, "h", Some(&meta(&["/dev/loop4"], &[])), &inv, true).unwrap();
        assert_eq!((found.paths, found.device_ids), (vec!["/dev/loop4".to_string()], vec![String::new()]));
    }

    #[test]
    fn a_zap_refuses_what_it_cannot_find() {
        let inv = [dev("/dev/sdb", "A", true)];
        let m = meta(&["/dev/sdd"], &[("sdd", "Z4H0ABCD")]);
        let err = identify(8, "f5-422-03", Some(&m), &inv, true).unwrap_err();
        assert_eq!(
            err.to_string(),
            "osd.8 uses /dev/sdd (id Z4H0ABCD), which is not in f5-422-03's inventory; refresh it \
             (`osdkeeper device ls f5-422-03 --refresh`) or remove without --zap"
        );
        // Without --zap the node is kept as the cluster names it, with no id.
        let found = identify(8, "f5-422-03", Some(&m), &inv, false).unwrap();
        assert_eq!((found.paths, found.device_ids), (vec!["/dev/sdd".to_string()], vec![String::new()]));
        assert_eq!(identify(8, "h", None, &inv, true), Err(IdentifyError::NoMetadata { osd: 8 }));
        assert_eq!(identify(8, "h", None, &inv, false), Ok(Identified::default()));
    }

    #[test]
    fn clean_means_the_same_disk_available_and_empty() {
        let mut r = Removal::new(8, "h".into(), false, false, true, vec!["/dev/sdd".into(), "/dev/sde".into()]);
        r.device_ids = vec!["SERIAL_D".into(), String::new()];
        let mut rejected = dev("/dev/sde", "", true);
        rejected.report.rejected_reasons = vec![Arc::from("Has BlueStore device label")];
        assert!(clean_devices(&r, &[dev("/dev/sdd", "SERIAL_D", true), rejected]) == ["/dev/sdd"]);
        // Another disk in the same bay is not the one that was wiped.
        assert!(clean_devices(&r, &[dev("/dev/sdd", "NEW_DISK", true)]).is_empty());
        assert_eq!(clean_devices(&r, &[dev("/dev/sdd", "SERIAL_D", false), dev("/dev/sde", "X", true)]), ["/dev/sde"]);
    }

    /// The host's ceph-volume went from 16.2 to 18.2 during the drain (ids
    /// from `domain::device_id`'s tests, built from each release's code).
    #[test]
    fn a_ceph_volume_upgrade_during_a_removal_keeps_its_disks() {
        let mut r = Removal::new(8, "h".into(), false, false, true, vec!["/dev/sdd".into()]);
        r.device_ids = vec!["Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X".into()];
        let upgraded = dev("/dev/sdd", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X", true);
        assert_eq!(clean_devices(&r, std::slice::from_ref(&upgraded)), ["/dev/sdd"]);
        // An id in `osd metadata` spelled with `_` for spaces finds the disk in a 16.2 inventory.
        let pacific = [dev("/dev/sdd", "Samsung SSD 860 EVO 500GB_S3Z9NB0K123456X", false)];
        let m = meta(&["/dev/sdd"], &[("sdd", "Samsung_SSD_860_EVO_500GB_S3Z9NB0K123456X")]);
        assert_eq!(identify(8, "h", Some(&m), &pacific, true).unwrap().paths, ["/dev/sdd"]);
    }
}
