//! The udev database (`/run/udev/data/b<major>:<minor>`), read directly:
//! ceph-volume asks `udevadm info --query=property` for `ID_BUS` and the
//! device id, and the `E:` lines of this file are exactly those properties.
//! Hosts without udev have no such file; callers then fall back to lsblk.

use std::collections::HashMap;
use std::path::Path;

/// `E:` properties of one device; `None` when udev has no record of it.
pub fn properties(udev_data: &Path, maj_min: &str) -> Option<HashMap<String, String>> {
    let text = std::fs::read_to_string(udev_data.join(format!("b{maj_min}"))).ok()?;
    Some(parse(&text))
}

fn parse(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("E:"))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// ceph-volume's `Device._get_device_id` (kept in step with Ceph's
/// `get_device_id` in blkdev.cc).
pub fn device_id(p: &HashMap<String, String>) -> String {
    let get = |k: &str| p.get(k).map(String::as_str);
    let model: Option<String> = match get("ID_MODEL") {
        // LVM PVs get a made-up model; the encoded one is the real disk's.
        Some(m) if m.starts_with("LVM PV ") => {
            Some(get("ID_MODEL_ENC").unwrap_or("").replace("\\x20", " ").trim().to_string())
        }
        m => m.map(str::to_string),
    };
    match (get("ID_VENDOR"), model.as_deref(), get("ID_SCSI_SERIAL"), get("ID_SERIAL_SHORT")) {
        (Some(vendor), Some(model), Some(serial), _) => format!("{vendor}_{model}_{serial}"),
        (_, Some(model), _, Some(short)) => format!("{model}_{short}"),
        _ => match get("ID_SERIAL") {
            // Micron NVMe drives leave the vendor out of the serial.
            Some(s) if s.starts_with("MTFD") => format!("Micron_{s}"),
            Some(s) => s.to_string(),
            None => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn reads_the_database_format() {
        let p = parse("S:disk/by-id/ata-X\nW:12\nE:ID_BUS=ata\nE:ID_MODEL=WDC_WD2002FAEX-007BA0\nG:systemd\n");
        assert_eq!(p.get("ID_BUS").map(String::as_str), Some("ata"));
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn device_id_rules() {
        let scsi = props(&[
            ("ID_VENDOR", "SEAGATE"),
            ("ID_MODEL", "ST4000NM0025"),
            ("ID_SCSI_SERIAL", "ZC1"),
            ("ID_SERIAL_SHORT", "5000c5"),
        ]);
        assert_eq!(device_id(&scsi), "SEAGATE_ST4000NM0025_ZC1");
        let ata = props(&[("ID_MODEL", "WDC_WD2002FAEX-007BA0"), ("ID_SERIAL_SHORT", "WD-WMAY0")]);
        assert_eq!(device_id(&ata), "WDC_WD2002FAEX-007BA0_WD-WMAY0");
        let micron = props(&[("ID_SERIAL", "MTFDHAL3T8TDP_1234")]);
        assert_eq!(device_id(&micron), "Micron_MTFDHAL3T8TDP_1234");
        let pv = props(&[
            ("ID_MODEL", "LVM PV abc on /dev/sdb"),
            ("ID_MODEL_ENC", "Samsung\\x20SSD\\x20860\\x20\\x20"),
            ("ID_SERIAL_SHORT", "S3Z"),
        ]);
        assert_eq!(device_id(&pv), "Samsung SSD 860_S3Z");
        assert_eq!(device_id(&props(&[("ID_BUS", "usb")])), "");
    }
}
