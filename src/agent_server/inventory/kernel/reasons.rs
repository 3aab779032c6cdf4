//! ceph-volume 16.2's availability verdict (`util/device.py`:
//! `_check_generic_reject_reasons`, `_check_lvm_reject_reasons`,
//! `_check_raw_reject_reasons`) over facts already gathered, with the exact
//! reason strings cephadm shows.

/// Devices smaller than 5 GiB are rejected.
const MIN_SIZE_BYTES: f64 = 5_368_709_120.0;

pub const ID_BUS: &str = "id_bus";
pub const READ_ONLY: &str = "read-only";
pub const TOO_SMALL: &str = "Insufficient space (<5GB)";
pub const NOT_ACCEPTABLE: &str = "Device type is not acceptable. It should be raw device or partition";
pub const CEPH_DISK: &str = "Used by ceph-disk";
pub const BLUESTORE: &str = "Has BlueStore device label";
pub const BLUESTORE_UNKNOWN: &str = "Failed to determine if device is BlueStore";
pub const PARENT_BLUESTORE: &str = "Parent has BlueStore device label";
pub const PARENT_BLUESTORE_UNKNOWN: &str = "Failed to determine if parent device is BlueStore";
pub const GPT: &str = "Has GPT headers";
pub const PARTITIONS: &str = "Has partitions";
pub const FILESYSTEM: &str = "Has a FileSystem";
pub const VGS_FULL: &str = "Insufficient space (<10 extents) on vgs";
pub const LVM: &str = "LVM detected";

/// Everything the verdict depends on, for one device.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checks {
    /// `sys_api.id_bus == "usb"`.
    pub usb: bool,
    /// `sys_api.ro == "1"`.
    pub read_only: bool,
    /// A disk, mpath (or named loop) device, or a partition.
    pub acceptable: bool,
    pub size_bytes: f64,
    pub ceph_disk_member: bool,
    /// `None`: the device could not be read.
    pub bluestore: Option<bool>,
    /// Partitions only: the parent's label; `Some(None)`: unreadable.
    pub parent_bluestore: Option<Option<bool>>,
    pub gpt: bool,
    pub has_partitions: bool,
    pub has_fs: bool,
    /// Free extents of each VG on the device; `None` when unknown.
    pub vgs: Vec<Option<u64>>,
}

/// `(available, rejected_reasons)`: available for both lvm and raw use;
/// reasons of both, sorted and without repeats (cephadm sorts them).
pub fn verdict(c: &Checks) -> (bool, Vec<String>) {
    let lvm = lvm_reasons(c);
    let raw = raw_reasons(c);
    let available = lvm.is_empty() && raw.is_empty();
    let mut all: Vec<String> = lvm.into_iter().chain(raw).map(str::to_string).collect();
    all.sort();
    all.dedup();
    (available, all)
}

fn generic_reasons(c: &Checks) -> Vec<&'static str> {
    let mut r = Vec::new();
    if c.usb {
        r.push(ID_BUS);
    }
    if c.read_only {
        r.push(READ_ONLY);
    }
    if !c.acceptable {
        r.push(NOT_ACCEPTABLE);
    } else if c.size_bytes.trunc() < MIN_SIZE_BYTES {
        r.push(TOO_SMALL);
    }
    if c.ceph_disk_member {
        r.push(CEPH_DISK);
    }
    match c.bluestore {
        Some(true) => r.push(BLUESTORE),
        Some(false) => {}
        None => r.push(BLUESTORE_UNKNOWN),
    }
    match c.parent_bluestore {
        Some(Some(true)) => r.push(PARENT_BLUESTORE),
        Some(None) => r.push(PARENT_BLUESTORE_UNKNOWN),
        Some(Some(false)) | None => {}
    }
    if c.gpt {
        r.push(GPT);
    }
    if c.has_partitions {
        r.push(PARTITIONS);
    }
    if c.has_fs {
        r.push(FILESYSTEM);
    }
    r
}

/// With a VG on the device only the VGs' free space counts: LVs may hold
/// the device open, which the generic checks would misread.
fn lvm_reasons(c: &Checks) -> Vec<&'static str> {
    if c.vgs.is_empty() {
        return generic_reasons(c);
    }
    if c.vgs.iter().any(|free| free.is_some_and(|n| n > 10)) {
        Vec::new()
    } else {
        vec![VGS_FULL]
    }
}

fn raw_reasons(c: &Checks) -> Vec<&'static str> {
    let mut r = generic_reasons(c);
    if !c.vgs.is_empty() {
        r.push(LVM);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Checks {
        Checks { acceptable: true, size_bytes: 4000787030016.0, bluestore: Some(false), ..Checks::default() }
    }

    #[test]
    fn blank_disk_is_available() {
        assert_eq!(verdict(&blank()), (true, vec![]));
    }

    #[test]
    fn used_osd_disk() {
        let c = Checks { has_fs: true, vgs: vec![Some(0)], ..blank() };
        assert_eq!(verdict(&c), (false, vec![FILESYSTEM.into(), VGS_FULL.into(), LVM.into()]));
    }

    #[test]
    fn shared_db_disk_with_room() {
        let c = Checks { has_fs: true, vgs: vec![Some(11)], ..blank() };
        assert_eq!(verdict(&c), (false, vec![FILESYSTEM.into(), LVM.into()]));
        let c = Checks { has_fs: true, vgs: vec![Some(10)], ..blank() };
        assert!(verdict(&c).1.contains(&VGS_FULL.to_string()));
    }

    #[test]
    fn size_and_type() {
        let tiny = Checks { size_bytes: 5368709119.0, ..blank() };
        assert_eq!(verdict(&tiny).1, vec![TOO_SMALL.to_string()]);
        let exact = Checks { size_bytes: 5368709120.0, ..blank() };
        assert!(verdict(&exact).0);
        // Size is not judged on a device of the wrong type.
        let odd = Checks { acceptable: false, size_bytes: 0.0, ..blank() };
        assert_eq!(verdict(&odd).1, vec![NOT_ACCEPTABLE.to_string()]);
    }

    #[test]
    fn unreadable_devices_are_never_available() {
        let c = Checks { bluestore: None, ..blank() };
        assert_eq!(verdict(&c), (false, vec![BLUESTORE_UNKNOWN.to_string()]));
        let p = Checks { parent_bluestore: Some(None), ..blank() };
        assert_eq!(verdict(&p).1, vec![PARENT_BLUESTORE_UNKNOWN.to_string()]);
        let p = Checks { parent_bluestore: Some(Some(true)), ..blank() };
        assert_eq!(verdict(&p).1, vec![PARENT_BLUESTORE.to_string()]);
    }
}
