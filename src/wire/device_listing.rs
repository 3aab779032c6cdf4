//! The fields `device ls` shows of a stored ceph-volume inventory (a JSON
//! list of device reports, read by `ceph_volume`'s one reader): type, size,
//! model, vendor, libstoragemgmt's transport, rpm, health and LEDs, and the
//! OSDs with volumes on the disk.

use super::ceph_volume::{parse_reports, DeviceReport};
use crate::domain::inventory::Found;
use crate::wire::api::devices::DeviceRow;

/// A looked-up value as the listing writes it: strings as they are,
/// numbers and booleans written out, nothing for null, a list or a mapping.
fn shown(v: Option<&Found>) -> Option<String> {
    match v? {
        Found::Str(s) => Some(s.to_string()),
        Found::Number(n) => Some(n.to_string()),
        Found::Bool(b) => Some(b.to_string()),
        Found::Null | Found::Composite => None,
    }
}

/// An LED's state as cephadm shows it.
fn led(state: Option<&str>) -> Option<String> {
    Some(
        match state? {
            "On" | "on" => "On",
            "Off" | "off" => "Off",
            _ => "N/A",
        }
        .into(),
    )
}

/// One device report as a listing row (not held: holds are the daemon's).
pub fn device_row(d: &DeviceReport) -> DeviceRow {
    let lsm = d.lsm.as_deref();
    let lsm_text = |pick: fn(&crate::domain::inventory::LsmData) -> &Option<std::sync::Arc<str>>| {
        lsm.and_then(|l| pick(l).as_deref()).map(str::to_string)
    };
    DeviceRow {
        path: d.path.to_string(),
        kind: d.human_type().into(),
        device_id: d.device_id.to_string(),
        size_bytes: d.size_bytes,
        human_readable_size: shown(d.lookups.human_readable_size.as_ref()),
        model: shown(d.lookups.model.as_ref()),
        vendor: shown(d.lookups.vendor.as_ref()),
        available: d.available,
        rejected_reasons: d.rejected_reasons.iter().map(|r| r.to_string()).collect(),
        held: None,
        deploy_failure: None,
        transport: lsm_text(|l| &l.transport),
        rpm: lsm_text(|l| &l.rpm),
        health: lsm_text(|l| &l.health),
        ident: led(lsm.and_then(|l| l.ident_led.as_deref())),
        fault: led(lsm.and_then(|l| l.fault_led.as_deref())),
        osd_ids: d.all_osd_ids().map(str::to_string).collect(),
        probe: None,
    }
}

/// Every device of a stored inventory, by path.
pub fn device_rows(inventory_json: &str) -> Result<Vec<DeviceRow>, serde_json::Error> {
    Ok(parse_reports(inventory_json.as_bytes(), None)?.iter().map(device_row).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_device_ls_shows() {
        let json = r#"[{"path": "/dev/sdb", "device_id": "ST2000_Z4H0", "available": false,
            "rejected_reasons": ["locked", "Has BlueStore device label"],
            "sys_api": {"rotational": "1", "size": 2000398934016.0, "human_readable_size": "1.82 TB",
                        "model": "ST2000NM0055", "vendor": "ATA"},
            "lsm_data": {"transport": "SAS", "rpm": 7200, "health": "Good",
                         "ledSupport": {"IDENTstatus": "off", "FAILstatus": "Unknown"}},
            "lvs": [{"osd_id": "8", "type": "block"}]},
            {"path": "/dev/nvme0n1", "sys_api": {"rotational": "0"}}]"#;
        let rows = device_rows(json).unwrap();
        let hdd = rows.iter().find(|r| r.path == "/dev/sdb").unwrap();
        assert_eq!(
            (hdd.kind.as_str(), hdd.size_bytes, hdd.model.as_deref()),
            ("hdd", Some(2000398934016.0), Some("ST2000NM0055"))
        );
        assert_eq!(hdd.rejected_reasons, ["Has BlueStore device label", "locked"], "sorted as cephadm shows them");
        assert_eq!(
            (hdd.rpm.as_deref(), hdd.ident.as_deref(), hdd.fault.as_deref()),
            (Some("7200"), Some("Off"), Some("N/A"))
        );
        assert_eq!(hdd.osd_ids, ["8"]);
        let nvme = rows.iter().find(|r| r.path == "/dev/nvme0n1").unwrap();
        assert_eq!((nvme.kind.as_str(), nvme.available, nvme.transport.as_deref()), ("ssd", false, None));
        assert!(device_rows("{}").is_err());
    }

    /// Where the listing, which once read the JSON by itself, now shows
    /// what the one reader reads.
    #[test]
    fn the_listing_shows_what_the_reader_reads() {
        let row = |device: &str| device_rows(&format!("[{device}]")).unwrap().remove(0);
        // `rotational` given as a number: cephadm's `human_readable_type`
        // compares with "1", so a number is an SSD (the listing said "unknown").
        assert_eq!(row(r#"{"path": "/dev/sdb", "sys_api": {"rotational": 1}}"#).kind, "ssd");
        // `available` as Python finds it true (the listing took booleans only).
        assert!(row(r#"{"path": "/dev/sdb", "available": 1}"#).available);
        // A model that sys_api lacks, where cephadm's matchers find it: the
        // value a spec's `model:` filter matches against (the listing showed none).
        let nested = row(r#"{"path": "/dev/sdb", "sys_api": {"partitions": {"sdb1": {"model": "M"}}}}"#);
        assert_eq!(nested.model.as_deref(), Some("M"));
        // The OSD ids of every volume on the disk, db volumes too, as before.
        let shared = row(r#"{"path": "/dev/nvme0n1", "lvs": [{"osd_id": "3", "type": "db"}, {"osd_id": 4.0}]}"#);
        assert_eq!(shared.osd_ids, ["3", "4"]);
        // A listing of reports the reader refuses is refused, not shown in part.
        assert!(device_rows(r#"[{"path": "/dev/sdb", "rejected_reasons": [1]}]"#).is_err());
        assert!(device_rows(r#"[{"path": "/dev/sdb"}, {"path": "/dev/sdb"}]"#).is_err());
    }
}
