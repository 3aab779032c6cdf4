//! The kernel's own view of a host's disks, in the format of
//! `ceph-volume inventory --format json` (Ceph 16.2): used when ceph-volume
//! cannot report, and for loop devices named in `--devices`.
//!
//! The reader's inputs are roots and tool outputs (`KernelPaths`,
//! `KernelFacts`), so tests run it on a fake sysfs tree; `gather` runs the
//! tools on a real host. It reads the first sectors of each reported device
//! (for BlueStore and GPT signatures) and nothing else outside its roots.
//!
//! Where it knows less than ceph-volume: without a udev database, `id_bus`
//! comes from lsblk's transport and `device_id` from lsblk's model and
//! serial; without LVM tools, an `LVM2_member` signature counts as a VG
//! with no free extents. It is stricter in one case: a mounted device whose
//! filesystem nobody could identify is reported as "Has a FileSystem".

mod blkid;
pub mod gather;
mod lsblk;
mod lvm;
mod reasons;
pub mod signatures;
pub mod size;
pub mod sysfs;
pub mod udev;

#[cfg(test)]
pub(crate) mod fake_host;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::{Map, Value};

pub use blkid::{Blkid, BlkidInfo};
pub use lsblk::{Lsblk, LsblkEntry, LsblkError};
pub use lvm::{LvmError, LvmFacts};
pub use reasons::NOT_ACCEPTABLE;
pub use sysfs::{candidates, Candidate, Kind};

/// Where the kernel's view is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPaths {
    /// `/sys/block`.
    pub sys_block: PathBuf,
    /// `/dev`: device nodes, opened to read their first sectors.
    pub dev: PathBuf,
    /// `/run/udev/data`.
    pub udev_data: PathBuf,
}

impl Default for KernelPaths {
    fn default() -> Self {
        KernelPaths {
            sys_block: PathBuf::from("/sys/block"),
            dev: PathBuf::from("/dev"),
            udev_data: PathBuf::from("/run/udev/data"),
        }
    }
}

impl KernelPaths {
    /// The node of a device path (`/dev/mapper/x` -> `<dev>/mapper/x`).
    pub fn node(&self, path: &str) -> PathBuf {
        self.dev.join(path.strip_prefix("/dev/").unwrap_or(path))
    }
}

/// What the host's tools said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KernelFacts {
    pub lsblk: Lsblk,
    /// Probes of the reported devices and their partitions.
    pub blkid: Blkid,
    /// `None` when LVM could not be asked.
    pub lvm: Option<LvmFacts>,
}

/// GPT partition type GUIDs of ceph-disk (`ceph_volume/util/constants.py`).
const CEPH_DISK_GUIDS: [&str; 21] = [
    "45b0969e-9b03-4f30-b4c6-35865ceff106",
    "cafecafe-9b03-4f30-b4c6-35865ceff106",
    "166418da-c469-4022-adf4-b30afd37f176",
    "86a32090-3647-40b9-bbbd-38d8c573aa86",
    "4fbd7e29-9d25-41b8-afd0-35865ceff05d",
    "45b0969e-9b03-4f30-b4c6-5ec00ceff106",
    "cafecafe-9b03-4f30-b4c6-5ec00ceff106",
    "93b0052d-02d9-4d8a-a43b-33a3ee4dfbc3",
    "306e8683-4fe2-4330-b7c0-00a917c16966",
    "4fbd7e29-9d25-41b8-afd0-5ec00ceff05d",
    "fb3aabf9-d25f-47cc-bf5e-721d1816496b",
    "30cd0809-c2b2-499c-8879-2d6b78529876",
    "5ce17fce-4087-4169-b7ff-056cc58473f9",
    "4fbd7e29-9d25-41b8-afd0-062c0ceff05d",
    "cafecafe-9b03-4f30-b4c6-b4b80ceff106",
    "01b41e1b-002a-453c-9f17-88793989ff8f",
    "ec6d6385-e346-45dc-be91-da2a7c8b3261",
    "45b0969e-8ae0-4982-bf9d-5a8d867af560",
    "4fbd7e29-8ae0-4982-bf9d-5a8d867af560",
    "7f4a666a-16f3-47a2-8445-152ef4d03f6c",
    "cafecafe-8ae0-4982-bf9d-5a8d867af560",
];

/// The inventory of `candidates`, ordered as ceph-volume orders it
/// (available devices first, then by path).
pub fn report(paths: &KernelPaths, candidates: &[Candidate], facts: &KernelFacts) -> Vec<Value> {
    let mut devices: Vec<(bool, String, Value)> = candidates
        .iter()
        .map(|c| {
            let (available, v) = device_report(paths, c, facts);
            (available, c.path.clone(), v)
        })
        .collect();
    devices.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    devices.into_iter().map(|(_, _, v)| v).collect()
}

fn device_report(paths: &KernelPaths, c: &Candidate, facts: &KernelFacts) -> (bool, Value) {
    let mut sys_api = sysfs::sys_api(c);
    let udev = sysfs::maj_min(c).and_then(|mm| udev::properties(&paths.udev_data, &mm));
    let name = c.path.rsplit('/').next().unwrap_or(&c.path);
    let lsblk = facts.lsblk.find(name);
    let id_bus = match &udev {
        Some(p) => p.get("ID_BUS").cloned().unwrap_or_default(),
        None => lsblk.and_then(|l| l.tran.as_deref()).map(bus_of_transport).unwrap_or_default().to_string(),
    };
    sys_api.insert("id_bus".into(), Value::String(id_bus.clone()));
    let device_id = match &udev {
        Some(p) => udev::device_id(p),
        None => lsblk.map(device_id_from_lsblk).unwrap_or_default(),
    };

    let blkid = facts.blkid.get(&c.path);
    // The names `sys_api.partitions` was written with.
    let partitions = sysfs::partition_names(&c.sysdir);
    let is_partition = lsblk.is_some_and(|l| l.dev_type == "part");
    // ceph-volume needs lsblk or blkid to know anything about the device.
    let known = lsblk.is_some() || blkid.is_some_and(|b| !b.is_empty());
    let is_device = known && matches!(c.kind, Kind::Disk | Kind::Mpath | Kind::Loop);

    let head = signatures::read_head(&paths.node(&c.path));
    if let Err(e) = &head {
        tracing::debug!(device = %c.path, error = %e, "could not read the first sectors");
    }
    let parent_bluestore = if is_partition {
        lsblk
            .and_then(|l| l.pkname.as_deref())
            .map(|parent| signatures::read_label(&paths.node(&format!("/dev/{parent}"))).ok().map(|l| l.is_some()))
    } else {
        None
    };
    let blkid_type = blkid.and_then(|b| b.get("TYPE"));
    let fstype = blkid_type.map(String::as_str).or_else(|| lsblk.and_then(|l| l.fstype.as_deref()));
    let mounted = lsblk.is_some_and(|l| !l.mountpoints.is_empty());
    let gpt = blkid.and_then(|b| b.get("PTTYPE")).is_some_and(|t| t == "gpt")
        // lsblk shows a partition's table type on the partition too.
        || (!is_partition && lsblk.and_then(|l| l.pttype.as_deref()) == Some("gpt"))
        || head.as_ref().is_ok_and(|h| !is_partition && signatures::has_gpt_header(h));

    // LVM on the device itself or on one of its partitions.
    let dir = c.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("/dev");
    let mut pv_paths = vec![c.path.clone()];
    pv_paths.extend(partitions.iter().map(|p| format!("{dir}/{p}")));
    let (vgs, lvs): (Vec<Option<u64>>, Vec<&lvm::PvSegment>) = match &facts.lvm {
        Some(l) => {
            let mut vgs = Vec::new();
            let mut lvs = Vec::new();
            for pv in &pv_paths {
                if let Some(vg) = l.vg_of(pv) {
                    vgs.push(vg.free_extents);
                    lvs.extend(l.lvs_on(pv));
                }
            }
            (vgs, lvs)
        }
        None => {
            let lvm_signature = pv_paths.iter().any(|pv| {
                let probed = facts.blkid.get(pv).and_then(|b| b.get("TYPE")).map(String::as_str);
                let listed = pv.rsplit('/').next().and_then(|n| facts.lsblk.find(n)).and_then(|l| l.fstype.as_deref());
                probed.or(listed) == Some("LVM2_member")
            });
            (if lvm_signature { vec![None] } else { Vec::new() }, Vec::new())
        }
    };

    let checks = reasons::Checks {
        usb: id_bus == "usb",
        read_only: sys_api.get("ro").and_then(Value::as_str) == Some("1"),
        acceptable: is_device || is_partition,
        size_bytes: sys_api.get("size").and_then(Value::as_f64).unwrap_or(0.0),
        ceph_disk_member: ceph_disk_member(&facts.lsblk, lsblk, &partitions),
        // The head or a copy further in (19.2+), as ceph-volume 19.2+ looks.
        bluestore: signatures::read_label(&paths.node(&c.path)).ok().map(|l| l.is_some()),
        parent_bluestore,
        gpt,
        has_partitions: !partitions.is_empty(),
        has_fs: fstype.is_some() || mounted,
        vgs,
    };
    let (available, rejected) = reasons::verdict(&checks);

    let mut out = Map::new();
    out.insert("path".into(), Value::String(c.path.clone()));
    out.insert("sys_api".into(), Value::Object(sys_api));
    out.insert("ceph_device".into(), Value::Bool(lvs.iter().any(|s| lvm::is_osd_lv(s))));
    out.insert("lsm_data".into(), Value::Object(Map::new()));
    out.insert("available".into(), Value::Bool(available));
    out.insert("rejected_reasons".into(), Value::Array(rejected.into_iter().map(Value::String).collect()));
    out.insert("device_id".into(), Value::String(device_id));
    out.insert("lvs".into(), Value::Array(lvs.iter().map(|s| lvm::lv_report(s)).collect()));
    (available, Value::Object(out))
}

/// ceph-disk marked its partitions by label or by type GUID. For a disk,
/// its partitions are looked at (by name prefix, as ceph-volume does).
fn ceph_disk_member(all: &Lsblk, own: Option<&LsblkEntry>, partitions: &[String]) -> bool {
    let marked = |e: &LsblkEntry| {
        e.partlabel.as_deref().is_some_and(|l| l.contains("ceph"))
            || e.parttype.as_deref().is_some_and(|t| CEPH_DISK_GUIDS.contains(&t.to_lowercase().as_str()))
    };
    if partitions.is_empty() {
        return own.is_some_and(marked);
    }
    partitions.iter().any(|p| all.entries.iter().any(|e| p.starts_with(&e.name) && marked(e)))
}

/// udev's `ID_BUS` for lsblk's transport names.
fn bus_of_transport(tran: &str) -> &'static str {
    match tran {
        "usb" => "usb",
        "sata" | "ata" | "pata" => "ata",
        "sas" | "fc" | "iscsi" | "spi" | "srp" => "scsi",
        _ => "",
    }
}

/// udev's `ID_MODEL_ID_SERIAL_SHORT` rebuilt from lsblk (udev replaces
/// spaces in the model with underscores).
fn device_id_from_lsblk(l: &LsblkEntry) -> String {
    let model = l.model.as_deref().map(|m| m.trim().replace(' ', "_")).filter(|m| !m.is_empty());
    match (model, l.serial.as_deref()) {
        (Some(m), Some(s)) => format!("{m}_{s}"),
        (None, Some(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// What to probe with blkid: the candidates and their partitions (LVM may
/// sit on a partition of a reported disk).
pub fn probe_paths(candidates: &[Candidate]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in candidates {
        out.push(c.path.clone());
        if c.kind != Kind::Part {
            let dir = c.path.rsplit_once('/').map(|(d, _)| d).unwrap_or("/dev");
            out.extend(sysfs::partition_names(&c.sysdir).iter().map(|p| format!("{dir}/{p}")));
        }
    }
    out.sort();
    out.dedup();
    out
}
