//! Low-level probe results (`blkid -c /dev/null -p -o export DEV...`): what
//! ceph-volume's `disk.blkid` sees, under ceph-volume's key names.

use std::collections::{BTreeMap, HashMap};

/// One device's probe: ceph-volume's names (`TYPE`, `PTTYPE`, `PARTLABEL`,
/// `PARTTYPE`, `UUID`, `PARTUUID`) to values.
pub type BlkidInfo = BTreeMap<String, String>;

/// Probes by device path (`DEVNAME`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Blkid {
    pub by_path: HashMap<String, BlkidInfo>,
}

/// blkid's low-level names to the names ceph-volume uses (`_blkid_parser`).
const KEYS: [(&str, &str); 6] = [
    ("UUID", "UUID"),
    ("TYPE", "TYPE"),
    ("PART_ENTRY_NAME", "PARTLABEL"),
    ("PART_ENTRY_UUID", "PARTUUID"),
    ("PART_ENTRY_TYPE", "PARTTYPE"),
    ("PTTYPE", "PTTYPE"),
];

impl Blkid {
    /// Reads `-o export` output: `KEY=value` lines, one block per device,
    /// each starting with `DEVNAME=`.
    pub fn parse_export(text: &str) -> Blkid {
        let mut by_path: HashMap<String, BlkidInfo> = HashMap::new();
        let mut current: Option<String> = None;
        for line in text.lines() {
            let Some((key, raw)) = line.split_once('=') else {
                current = None;
                continue;
            };
            let value = unescape(raw);
            if key == "DEVNAME" {
                by_path.entry(value.clone()).or_default();
                current = Some(value);
                continue;
            }
            let (Some(dev), Some((_, name))) = (&current, KEYS.iter().find(|(k, _)| *k == key)) else {
                continue;
            };
            if let Some(info) = by_path.get_mut(dev) {
                info.insert((*name).to_string(), value);
            }
        }
        Blkid { by_path }
    }

    pub fn get(&self, path: &str) -> Option<&BlkidInfo> {
        self.by_path.get(path)
    }
}

/// `-o export` puts a backslash before shell-special characters.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_several_devices() {
        let out = "DEVNAME=/dev/loop0\nUUID=6970b5f1\nVERSION=1.0\nBLOCK_SIZE=1024\nTYPE=ext4\nUSAGE=filesystem\n\n\
                   DEVNAME=/dev/sdb\nPTUUID=abc\nPTTYPE=gpt\n\n\
                   DEVNAME=/dev/sdb1\nPART_ENTRY_NAME=ceph\\ data\nPART_ENTRY_TYPE=4fbd7e29-9d25-41b8-afd0-062c0ceff05d\n";
        let b = Blkid::parse_export(out);
        assert_eq!(b.get("/dev/loop0").unwrap().get("TYPE").map(String::as_str), Some("ext4"));
        assert!(!b.get("/dev/loop0").unwrap().contains_key("VERSION"));
        assert_eq!(b.get("/dev/sdb").unwrap().get("PTTYPE").map(String::as_str), Some("gpt"));
        let p = b.get("/dev/sdb1").unwrap();
        assert_eq!(p.get("PARTLABEL").map(String::as_str), Some("ceph data"));
        assert_eq!(p.get("PARTTYPE").map(String::as_str), Some("4fbd7e29-9d25-41b8-afd0-062c0ceff05d"));
    }
}
