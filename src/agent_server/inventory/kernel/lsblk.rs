//! `lsblk --json` output, flattened: one entry per block device and
//! partition. lsblk's JSON changed over versions (strings "0"/"1" before
//! util-linux 2.33, booleans and numbers after; `mountpoint` before 2.37,
//! `mountpoints` after), so every column is read leniently.

use serde_json::Value;

/// What ceph-volume reads from lsblk for one device (`disk.lsblk_all`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LsblkEntry {
    pub name: String,
    pub kname: String,
    /// The parent's kernel name (`sda` for `sda1`).
    pub pkname: Option<String>,
    /// `disk`, `part`, `loop`, `mpath`, `lvm`, `crypt`, `rom`, ...
    pub dev_type: String,
    pub fstype: Option<String>,
    pub pttype: Option<String>,
    pub partlabel: Option<String>,
    pub parttype: Option<String>,
    pub mountpoints: Vec<String>,
    /// Transport: `sata`, `sas`, `usb`, `nvme`, ...
    pub tran: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
}

/// All entries of one lsblk run, in lsblk's order (parents before children).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lsblk {
    pub entries: Vec<LsblkEntry>,
}

#[derive(Debug, thiserror::Error)]
pub enum LsblkError {
    #[error("lsblk printed invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("lsblk's JSON has no \"blockdevices\" list")]
    Shape,
}

impl Lsblk {
    pub fn parse(json: &[u8]) -> Result<Lsblk, LsblkError> {
        let doc: Value = serde_json::from_slice(json)?;
        let list = doc.get("blockdevices").and_then(Value::as_array).ok_or(LsblkError::Shape)?;
        let mut entries = Vec::new();
        for dev in list {
            flatten(dev, &mut entries);
        }
        Ok(Lsblk { entries })
    }

    /// The entry ceph-volume pairs with a device: the one whose NAME is the
    /// last component of the device path (`mpatha` for `/dev/mapper/mpatha`).
    pub fn find(&self, name: &str) -> Option<&LsblkEntry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

fn flatten(dev: &Value, out: &mut Vec<LsblkEntry>) {
    if let Some(entry) = entry(dev) {
        out.push(entry);
    }
    if let Some(children) = dev.get("children").and_then(Value::as_array) {
        for c in children {
            flatten(c, out);
        }
    }
}

fn entry(dev: &Value) -> Option<LsblkEntry> {
    let name = text(dev, "name")?;
    let mut mountpoints: Vec<String> = match dev.get("mountpoints") {
        Some(Value::Array(list)) => list.iter().filter_map(scalar).filter(|m| !m.is_empty()).collect(),
        _ => Vec::new(),
    };
    if mountpoints.is_empty() {
        mountpoints.extend(text(dev, "mountpoint"));
    }
    Some(LsblkEntry {
        kname: text(dev, "kname").unwrap_or_else(|| name.clone()),
        name,
        pkname: text(dev, "pkname"),
        dev_type: text(dev, "type").unwrap_or_default(),
        fstype: text(dev, "fstype"),
        pttype: text(dev, "pttype"),
        partlabel: text(dev, "partlabel"),
        parttype: text(dev, "parttype"),
        mountpoints,
        tran: text(dev, "tran"),
        model: text(dev, "model"),
        serial: text(dev, "serial"),
        wwn: text(dev, "wwn"),
    })
}

/// A column as text; absent, null and empty all mean "no value".
fn text(dev: &Value, key: &str) -> Option<String> {
    dev.get(key).and_then(scalar).filter(|s| !s.is_empty())
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_new_and_old_formats() {
        let new = br#"{"blockdevices": [{"name": "sda", "kname": "sda", "type": "disk", "rota": true,
            "fstype": null, "pttype": "gpt", "mountpoints": [null], "tran": "sata", "model": "WDC  X ",
            "children": [{"name": "sda1", "kname": "sda1", "pkname": "sda", "type": "part",
                "fstype": "xfs", "partlabel": "ceph data", "mountpoints": ["/var/lib/ceph/osd/ceph-0"]}]}]}"#;
        let l = Lsblk::parse(new).unwrap();
        assert_eq!(l.entries.len(), 2);
        let sda = l.find("sda").unwrap();
        assert_eq!(sda.pttype.as_deref(), Some("gpt"));
        assert_eq!(sda.model.as_deref(), Some("WDC  X"));
        assert!(sda.mountpoints.is_empty() && sda.fstype.is_none());
        let sda1 = l.find("sda1").unwrap();
        assert_eq!(sda1.pkname.as_deref(), Some("sda"));
        assert_eq!(sda1.mountpoints, vec!["/var/lib/ceph/osd/ceph-0".to_string()]);
        assert_eq!(sda1.partlabel.as_deref(), Some("ceph data"));

        let old = br#"{"blockdevices": [{"name": "vdb", "type": "disk", "ro": "0", "fstype": "",
            "mountpoint": "/srv"}]}"#;
        let l = Lsblk::parse(old).unwrap();
        let vdb = l.find("vdb").unwrap();
        assert_eq!(vdb.kname, "vdb");
        assert!(vdb.fstype.is_none());
        assert_eq!(vdb.mountpoints, vec!["/srv".to_string()]);
    }

    #[test]
    fn refuses_other_json() {
        assert!(matches!(Lsblk::parse(b"[]"), Err(LsblkError::Shape)));
        assert!(matches!(Lsblk::parse(b"{"), Err(LsblkError::Json(_))));
    }
}
