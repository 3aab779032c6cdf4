//! A device as ceph-volume's batch sees it, from what the inventory says:
//! whether its LVM side is usable, how large a volume group it offers, and
//! the words for why it gets nothing.

use crate::domain::inventory::Device;

/// ceph-volume assumes 4 MiB extents for a disk that has no VG yet.
const EXTENT: i64 = 4 * 1024 * 1024;

const INSUFFICIENT: &str = "Insufficient space (<10 extents) on vgs";

/// The device ceph-volume would see behind a path, if its batch can use it.
/// Like the oracle's dictionary by path, the last report of a path wins.
pub(super) fn lvm_device<'a>(devices: &'a [Device], path: &str) -> Option<&'a Device> {
    devices.iter().rev().find(|d| &*d.path == path).filter(|d| lvm_available(d))
}

/// ceph-volume's LVM availability: a disk that already carries a volume
/// group only needs free extents; any other disk must have no reject reason.
fn lvm_available(d: &Device) -> bool {
    let has = |r: &str| d.rejected_reasons.iter().any(|x| &**x == r);
    if has("LVM detected") {
        !has(INSUFFICIENT)
    } else {
        d.rejected_reasons.is_empty()
    }
}

pub(super) fn why_unavailable(devices: &[Device], path: &str) -> String {
    let Some(d) = devices.iter().rev().find(|d| &*d.path == path) else {
        return "not in this host's inventory".into();
    };
    if d.rejected_reasons.iter().any(|r| &**r == INSUFFICIENT) {
        let osds: Vec<String> = d.osd_ids().map(|id| format!("osd.{id}")).collect();
        if osds.is_empty() {
            return "its volume group has no free extents left".into();
        }
        return format!("it already holds {} and its volume group has no free extents left", osds.join(", "));
    }
    format!("unavailable ({})", d.rejected_reasons.join(", "))
}

/// The size of the VG ceph-volume would make on the whole disk (its size
/// in 4 MiB extents, one less when it divides exactly, for LVM's metadata).
/// For a disk that already has a VG the real free space is not in the
/// inventory; the oracle takes the whole disk there too.
pub(super) fn vg_bytes(d: &Device) -> i64 {
    let size = d.size_bytes.unwrap_or(0.0).trunc() as i64;
    if size <= 0 {
        return 0;
    }
    let whole = size / EXTENT * EXTENT;
    if size % EXTENT == 0 {
        (whole - EXTENT).max(0)
    } else {
        whole
    }
}

/// A new data OSD in the free space of a VG that holds other OSDs' DB or
/// WAL volumes: ceph-volume's batch lets such disks through on purpose, but
/// a shared DB device with room left is almost always meant for more DBs.
/// ceph-volume sizes the OSD as its share of the whole VG and makes it only
/// if that share is still free; the inventory does not show the free
/// space, so, like the cephadm oracle, the plan counts the OSD, and the
/// warning says where that is known to be wrong.
pub(super) fn note_shared_fast_device(d: &Device, whole_vg_per_osd: bool, warnings: &mut Vec<String>) {
    let fast: Vec<String> = d
        .lvs
        .iter()
        .filter(|lv| matches!(lv.kind.as_deref(), Some("db") | Some("wal")))
        .map(|lv| {
            let kind = lv.kind.as_deref().unwrap_or_default().to_uppercase();
            match &lv.osd_id {
                Some(id) => format!("the {kind} of osd.{id}"),
                None => format!("a {kind} volume"),
            }
        })
        .collect();
    if fast.is_empty() {
        return;
    }
    let fit = if whole_vg_per_osd {
        "Each OSD's share here is the whole volume group, which cannot be free next to those volumes, so \
         ceph-volume 16.2 would in fact skip the device; the plan lists the OSD as cephadm's oracle does, because \
         the inventory does not show the free space"
    } else {
        "The inventory does not show how much of it is free, so the size shown assumes the whole disk"
    };
    let warning = format!(
        "{} already holds {} (a shared DB device with room left): ceph-volume carves a new data OSD out of the \
         free space of its volume group when the OSD's share of the volume group fits there, which is rarely \
         meant. {fit}. To keep the device for DBs, narrow data_devices (size, model, rotational) so that they do \
         not match it",
        d.path,
        fast.join(", ")
    );
    // A path listed twice as data is planned twice; one warning is enough.
    if !warnings.contains(&warning) {
        warnings.push(warning);
    }
}
