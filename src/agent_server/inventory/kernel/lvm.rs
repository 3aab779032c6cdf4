//! LVM facts the way ceph-volume gathers them (`api/lvm.py`
//! `get_all_devices_vgs` and `get_device_lvs`, both `pvs` reports), read
//! from one `pvs --reportformat json` run with PV, VG and LV columns (one
//! row per PV segment), and the LV entries of an inventory report.

use serde_json::{json, Map, Value};

/// The `pvs` command line whose output `LvmFacts::parse_pvs_json` reads.
pub const PVS_ARGS: [&str; 9] = [
    "--reportformat",
    "json",
    "--readonly",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "pv_name,vg_name,vg_free_count,lv_name,lv_path,lv_tags,lv_uuid",
    "--quiet",
];

/// One row of the report: a PV segment, possibly free (no LV).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PvSegment {
    pub pv_name: String,
    pub vg_name: String,
    pub vg_free_count: u64,
    pub lv_name: String,
    pub lv_path: String,
    pub lv_tags: String,
}

/// Every PV segment on the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LvmFacts {
    pub segments: Vec<PvSegment>,
}

/// A VG found on a device (or one of its partitions).
#[derive(Debug, Clone, PartialEq)]
pub struct VgOnDevice {
    pub vg_name: String,
    /// `None` when LVM could not be asked (only a signature was seen).
    pub free_extents: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum LvmError {
    #[error("pvs printed invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("pvs's JSON report has no \"report\"[].\"pv\" list")]
    Shape,
}

impl LvmFacts {
    pub fn parse_pvs_json(json: &[u8]) -> Result<LvmFacts, LvmError> {
        let doc: Value = serde_json::from_slice(json)?;
        let reports = doc.get("report").and_then(Value::as_array).ok_or(LvmError::Shape)?;
        let mut segments = Vec::new();
        for report in reports {
            let rows = report.get("pv").and_then(Value::as_array).ok_or(LvmError::Shape)?;
            for row in rows {
                let field = |k: &str| row.get(k).and_then(Value::as_str).unwrap_or("").trim().to_string();
                segments.push(PvSegment {
                    pv_name: field("pv_name"),
                    vg_name: field("vg_name"),
                    vg_free_count: field("vg_free_count").parse().unwrap_or(0),
                    lv_name: field("lv_name"),
                    lv_path: field("lv_path"),
                    lv_tags: field("lv_tags"),
                });
            }
        }
        Ok(LvmFacts { segments })
    }

    /// The VG of a PV (a PV belongs to at most one).
    pub fn vg_of(&self, pv: &str) -> Option<VgOnDevice> {
        self.segments
            .iter()
            .find(|s| s.pv_name == pv && !s.vg_name.is_empty())
            .map(|s| VgOnDevice { vg_name: s.vg_name.clone(), free_extents: Some(s.vg_free_count) })
    }

    /// The LVs with a segment on a PV, one entry per segment as in
    /// ceph-volume's `get_device_lvs`.
    pub fn lvs_on<'a>(&'a self, pv: &'a str) -> impl Iterator<Item = &'a PvSegment> + 'a {
        self.segments.iter().filter(move |s| s.pv_name == pv && !s.lv_name.is_empty())
    }
}

/// `ceph.*` tags of an LV (`api/lvm.py parse_tags`); other tags are ignored.
pub fn parse_tags(lv_tags: &str) -> Map<String, Value> {
    let mut tags = Map::new();
    for t in lv_tags.split(',').filter(|t| t.starts_with("ceph.")) {
        let (k, v) = t.split_once('=').unwrap_or((t, ""));
        tags.insert(k.to_string(), Value::String(v.to_string()));
    }
    tags
}

/// True when the LV belongs to an OSD (a non-empty `ceph.osd_id` tag).
pub fn is_osd_lv(seg: &PvSegment) -> bool {
    parse_tags(&seg.lv_tags).get("ceph.osd_id").and_then(Value::as_str).is_some_and(|id| !id.is_empty())
}

/// One `lvs` entry of the inventory report (`Volume.report`).
pub fn lv_report(seg: &PvSegment) -> Value {
    let tags = parse_tags(&seg.lv_tags);
    let tag = |k: &str| tags.get(k).cloned().unwrap_or_else(|| Value::String(String::new()));
    if !tags.contains_key("ceph.osd_id") {
        return json!({"name": seg.lv_name, "comment": "not used by ceph"});
    }
    let lv_type = tags.get("ceph.type").and_then(Value::as_str).unwrap_or("").to_string();
    let mut report = Map::new();
    report.insert("name".into(), Value::String(seg.lv_name.clone()));
    report.insert("osd_id".into(), tag("ceph.osd_id"));
    report.insert(
        "cluster_name".into(),
        tags.get("ceph.cluster_name").cloned().unwrap_or_else(|| Value::String("ceph".into())),
    );
    report.insert("type".into(), Value::String(lv_type.clone()));
    report.insert("osd_fsid".into(), tag("ceph.osd_fsid"));
    report.insert("cluster_fsid".into(), tag("ceph.cluster_fsid"));
    report.insert("osdspec_affinity".into(), tag("ceph.osdspec_affinity"));
    report.insert(format!("{lv_type}_uuid"), tag(&format!("ceph.{lv_type}_uuid")));
    Value::Object(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PVS: &str = r#"{"report": [{"pv": [
        {"pv_name": "/dev/sdc", "vg_name": "ceph-aa", "vg_free_count": "0", "lv_name": "osd-block-1",
         "lv_path": "/dev/ceph-aa/osd-block-1", "lv_tags": "ceph.osd_id=3,ceph.type=block,ceph.osd_fsid=f1,ceph.cluster_fsid=c1,ceph.block_uuid=u1,ceph.osdspec_affinity=hdd,other=x", "lv_uuid": "u1"},
        {"pv_name": "/dev/sdd", "vg_name": "data", "vg_free_count": "500", "lv_name": "", "lv_path": "", "lv_tags": "", "lv_uuid": ""},
        {"pv_name": "/dev/sdd", "vg_name": "data", "vg_free_count": "500", "lv_name": "home", "lv_path": "/dev/data/home", "lv_tags": "", "lv_uuid": "u2"},
        {"pv_name": "/dev/sde", "vg_name": "", "vg_free_count": "", "lv_name": "", "lv_path": "", "lv_tags": "", "lv_uuid": ""}
    ]}]}"#;

    #[test]
    fn reads_vgs_and_lvs() {
        let f = LvmFacts::parse_pvs_json(PVS.as_bytes()).unwrap();
        assert_eq!(f.vg_of("/dev/sdc"), Some(VgOnDevice { vg_name: "ceph-aa".into(), free_extents: Some(0) }));
        assert_eq!(f.vg_of("/dev/sdd").unwrap().free_extents, Some(500));
        // A PV without a VG does not count (ceph-volume's choice).
        assert_eq!(f.vg_of("/dev/sde"), None);
        let lvs: Vec<_> = f.lvs_on("/dev/sdd").collect();
        assert_eq!(lvs.len(), 1);
        assert_eq!(lv_report(lvs[0]), json!({"name": "home", "comment": "not used by ceph"}));
        let osd = f.lvs_on("/dev/sdc").next().unwrap();
        assert!(is_osd_lv(osd));
        assert_eq!(
            lv_report(osd),
            json!({"name": "osd-block-1", "osd_id": "3", "cluster_name": "ceph", "type": "block",
                   "osd_fsid": "f1", "cluster_fsid": "c1", "osdspec_affinity": "hdd", "block_uuid": "u1"})
        );
    }

    #[test]
    fn refuses_other_json() {
        assert!(matches!(LvmFacts::parse_pvs_json(b"{}"), Err(LvmError::Shape)));
    }
}
