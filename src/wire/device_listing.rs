//! The fields `device ls` shows, read from a stored ceph-volume inventory
//! (a JSON list of device reports): type, size, model, vendor, libstoragemgmt's
//! transport, rpm, health and LEDs, and the OSDs with volumes on the disk.

use serde_json::Value;

use crate::wire::api::devices::DeviceRow;

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn led(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    Some(match s {
        "On" | "on" => "On".into(),
        "Off" | "off" => "Off".into(),
        _ => "N/A".into(),
    })
}

/// One device report as a listing row (not held: holds are the daemon's).
pub fn device_row(v: &Value) -> DeviceRow {
    let sys = v.get("sys_api").cloned().unwrap_or(Value::Null);
    let lsm = v.get("lsm_data").cloned().unwrap_or(Value::Null);
    let kind = match sys.get("rotational").and_then(Value::as_str) {
        None => "unknown",
        Some("1") => "hdd",
        Some(_) => "ssd",
    };
    let mut reasons: Vec<String> = v
        .get("rejected_reasons")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    reasons.sort();
    let osd_ids = v
        .get("lvs")
        .and_then(Value::as_array)
        .map(|lvs| lvs.iter().filter_map(|lv| text(lv, "osd_id")).collect())
        .unwrap_or_default();
    let led_support = lsm.get("ledSupport");
    DeviceRow {
        path: text(v, "path").unwrap_or_default(),
        kind: kind.into(),
        device_id: text(v, "device_id").unwrap_or_default(),
        size_bytes: sys.get("size").and_then(Value::as_f64),
        human_readable_size: text(&sys, "human_readable_size"),
        model: text(&sys, "model"),
        vendor: text(&sys, "vendor"),
        available: v.get("available").and_then(Value::as_bool).unwrap_or(false),
        rejected_reasons: reasons,
        held: None,
        deploy_failure: None,
        transport: text(&lsm, "transport"),
        rpm: text(&lsm, "rpm"),
        health: text(&lsm, "health"),
        ident: led(led_support.and_then(|l| l.get("IDENTstatus"))),
        fault: led(led_support.and_then(|l| l.get("FAILstatus"))),
        osd_ids,
        probe: None,
    }
}

/// Every device of a stored inventory.
pub fn device_rows(inventory_json: &str) -> Result<Vec<DeviceRow>, serde_json::Error> {
    Ok(serde_json::from_str::<Vec<Value>>(inventory_json)?.iter().map(device_row).collect())
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
        let hdd = &rows[0];
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
        assert_eq!((rows[1].kind.as_str(), rows[1].available, rows[1].transport.as_deref()), ("ssd", false, None));
        assert!(device_rows("{}").is_err());
    }
}
