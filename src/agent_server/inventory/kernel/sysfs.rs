//! `/sys/block`: which devices ceph-volume would list
//! (`disk.get_block_devs_sysfs`) and their `sys_api` facts
//! (`disk.get_devices`), with ceph-volume's quirks kept (missing files give
//! `""`, a partition's `sectorsize` is the number 512, `sectors` is 0).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::size::human_readable_size;

/// What a listed device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Disk,
    Mpath,
    Part,
    /// A loop device named in `--devices`: reported and checked as a disk
    /// (ceph-volume skips loop devices unless told otherwise).
    Loop,
}

/// A device to report.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// As reported: `/dev/sda`, `/dev/mapper/mpatha`, `/dev/sda1`.
    pub path: String,
    /// The kernel name: `sda`, `dm-3`, `sda1`.
    pub devname: String,
    pub kind: Kind,
    /// ceph-volume's `parent`: the device's own path for whole devices,
    /// the parent's kernel name for partitions.
    pub parent: String,
    pub sysdir: PathBuf,
}

/// Lists the devices ceph-volume would report. With `wanted`, only those
/// paths, and loop devices among them are taken too.
pub fn candidates(sys_block: &Path, dev: &Path, wanted: Option<&BTreeSet<String>>) -> std::io::Result<Vec<Candidate>> {
    let mut names: Vec<String> =
        std::fs::read_dir(sys_block)?.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect();
    names.sort();
    let mut out = Vec::new();
    for name in &names {
        let sysdir = sys_block.join(name);
        if let Some(c) = whole_device(sys_block, dev, name, &sysdir, wanted) {
            out.push(c);
        }
        // Partitions are listed whatever their parent is (ceph-volume
        // walks /sys/dev/block for them).
        for part in partition_names(&sysdir) {
            out.push(Candidate {
                path: format!("/dev/{part}"),
                sysdir: sysdir.join(&part),
                devname: part,
                kind: Kind::Part,
                parent: name.clone(),
            });
        }
    }
    if let Some(wanted) = wanted {
        out.retain(|c| wanted.contains(&c.path));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn whole_device(
    sys_block: &Path,
    dev: &Path,
    name: &str,
    sysdir: &Path,
    wanted: Option<&BTreeSet<String>>,
) -> Option<Candidate> {
    if !dev.join(name).exists() {
        return None;
    }
    // The paths of a multipath device are reported through the map only.
    let held_by_mpath = list(&sysdir.join("holders"))
        .iter()
        .any(|h| dm_type(&contents(&sys_block.join(name).join("holders").join(h).join("dm/uuid"))) == "mpath");
    if held_by_mpath {
        return None;
    }
    let path = format!("/dev/{name}");
    let mut kind = Kind::Disk;
    let mut reported = path.clone();
    if sysdir.join("dm").is_dir() {
        match dm_type(&contents(&sysdir.join("dm/uuid"))).as_str() {
            "mpath" => kind = Kind::Mpath,
            // LVs, dm-crypt and the like are not devices to put OSDs on.
            _ => return None,
        }
        reported = format!("/dev/mapper/{}", contents(&sysdir.join("dm/name")));
    }
    if name.starts_with("loop") {
        let named = wanted.is_some_and(|w| w.contains(&path));
        if !named || !sysdir.join("loop").exists() {
            return None;
        }
        kind = Kind::Loop;
    }
    if reported.starts_with("/dev/rbd") {
        return None;
    }
    Some(Candidate { path: reported, devname: name.to_string(), kind, parent: path, sysdir: sysdir.to_path_buf() })
}

/// The prefix of a device-mapper uuid names its user (`LVM-`, `mpath-`, `CRYPT-`).
fn dm_type(uuid: &str) -> String {
    uuid.split('-').next().unwrap_or("").to_lowercase()
}

/// Names of the partitions under a device's sysfs directory, sorted.
pub fn partition_names(sysdir: &Path) -> Vec<String> {
    let mut parts: Vec<String> = list(sysdir)
        .into_iter()
        .filter(|p| {
            let n = contents(&sysdir.join(p).join("partition"));
            n.parse::<u64>().is_ok_and(|n| n > 0)
        })
        .collect();
    parts.sort();
    parts
}

/// A sysfs file's content, stripped; `None` when it does not exist or
/// cannot be read (ceph-volume's `get_file_contents` then gives its default).
pub fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn contents(path: &Path) -> String {
    read(path).unwrap_or_default()
}

fn text_or(path: &Path, default: Value) -> Value {
    read(path).map(Value::String).unwrap_or(default)
}

/// Directory entries in the directory's own order (ceph-volume joins
/// `slaves/` in that order); empty when the directory is missing.
fn list(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect(),
        Err(_) => Vec::new(),
    }
}

/// ceph-volume's `sys_api` for one device, except `id_bus` (from udev).
pub fn sys_api(c: &Candidate) -> Map<String, Value> {
    let dir = &c.sysdir;
    let mut m = Map::new();
    let facts = [
        ("removable", "removable"),
        ("ro", "ro"),
        ("vendor", "device/vendor"),
        ("model", "device/model"),
        ("rev", "device/rev"),
        ("sas_address", "device/sas_address"),
        ("sas_device_handle", "device/sas_device_handle"),
        ("support_discard", "queue/discard_granularity"),
        ("rotational", "queue/rotational"),
        ("nr_requests", "queue/nr_requests"),
    ];
    for (key, file) in facts {
        m.insert(key.into(), Value::String(contents(&dir.join(file))));
    }
    let device_nodes = if c.kind == Kind::Part {
        c.parent.clone()
    } else {
        let slaves = list(&dir.join("slaves"));
        if slaves.is_empty() {
            c.devname.clone()
        } else {
            slaves.join(",")
        }
    };
    m.insert("device_nodes".into(), Value::String(device_nodes));
    m.insert("actuators".into(), actuators(dir));
    m.insert("scheduler_mode".into(), Value::String(scheduler_mode(&contents(&dir.join("queue/scheduler")))));
    m.insert("partitions".into(), Value::Object(partitions(dir)));
    m.insert("sectors".into(), text_or(&dir.join("sectors"), Value::from(0)));
    let fallback = text_or(&dir.join("queue/hw_sector_size"), Value::from(512));
    m.insert("sectorsize".into(), text_or(&dir.join("queue/logical_block_size"), fallback));
    let size = sectors_to_bytes(&contents(&dir.join("size")));
    m.insert("size".into(), Value::from(size));
    m.insert("human_readable_size".into(), Value::String(human_readable_size(size)));
    m.insert("path".into(), Value::String(c.path.clone()));
    m.insert("devname".into(), Value::String(c.devname.clone()));
    let kind = match c.kind {
        Kind::Disk | Kind::Loop => "disk",
        Kind::Mpath => "mpath",
        Kind::Part => "part",
    };
    m.insert("type".into(), Value::String(kind.into()));
    m.insert("parent".into(), Value::String(c.parent.clone()));
    m
}

/// sysfs sizes count 512-byte sectors whatever the device's sector size.
fn sectors_to_bytes(text: &str) -> f64 {
    text.parse::<f64>().unwrap_or(0.0) * 512.0
}

/// Multi-actuator disks expose one access range per actuator.
fn actuators(dir: &Path) -> Value {
    let ranges = dir.join("queue/independent_access_ranges");
    if !ranges.is_dir() {
        return Value::String(String::new());
    }
    let mut n = 0u64;
    while ranges.join(n.to_string()).is_dir() {
        n += 1;
    }
    Value::from(n)
}

/// `none [mq-deadline] kyber` -> `mq-deadline`; no brackets -> empty.
fn scheduler_mode(text: &str) -> String {
    let Some(open) = text.find('[') else { return String::new() };
    match text.rfind(']') {
        Some(close) if close > open => text[open + 1..close].to_string(),
        _ => String::new(),
    }
}

/// `sys_api.partitions` (`disk.get_partitions_facts`).
fn partitions(dir: &Path) -> Map<String, Value> {
    let mut out = Map::new();
    for name in partition_names(dir) {
        let p = dir.join(&name);
        let sectors = text_or(&p.join("size"), Value::from(0));
        let size = sectors_to_bytes(sectors.as_str().unwrap_or("0"));
        let mut sectorsize = text_or(&p.join("queue/logical_block_size"), Value::String(String::new()));
        if sectorsize.as_str() == Some("") {
            sectorsize = text_or(&p.join("queue/hw_sector_size"), Value::from(512));
        }
        let mut part = Map::new();
        part.insert("start".into(), text_or(&p.join("start"), Value::from(0)));
        part.insert("sectors".into(), sectors);
        part.insert("sectorsize".into(), sectorsize);
        part.insert("size".into(), Value::from(size));
        part.insert("human_readable_size".into(), Value::String(human_readable_size(size)));
        part.insert("holders".into(), Value::Array(list(&p.join("holders")).into_iter().map(Value::String).collect()));
        out.insert(name, Value::Object(part));
    }
    out
}

/// The `major:minor` of a device, for the udev database.
pub fn maj_min(c: &Candidate) -> Option<String> {
    read(&c.sysdir.join("dev"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler() {
        assert_eq!(scheduler_mode("none [mq-deadline] kyber bfq"), "mq-deadline");
        assert_eq!(scheduler_mode("[none] mq-deadline"), "none");
        assert_eq!(scheduler_mode("none"), "");
        assert_eq!(scheduler_mode(""), "");
    }
}
