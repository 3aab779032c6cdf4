//! The JSON Ceph 16.2 prints for the commands the removal needs (the shapes
//! were read from ../shared/ceph-sandbox/examples). Only the fields used.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct OsdDump {
    /// The cluster's fsid (what ceph-volume writes into every OSD it makes).
    #[serde(default)]
    pub fsid: String,
    pub osds: Vec<OsdDumpEntry>,
}

#[derive(Debug, Deserialize)]
pub struct OsdDumpEntry {
    pub osd: u32,
    pub up: u8,
    #[serde(rename = "in")]
    pub is_in: u8,
    #[serde(default)]
    pub state: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct OsdDf {
    pub nodes: Vec<OsdDfNode>,
}

#[derive(Debug, Deserialize)]
pub struct OsdDfNode {
    pub id: i64,
    #[serde(default)]
    pub crush_weight: f64,
    #[serde(default)]
    pub pgs: i64,
    #[serde(default)]
    pub kb_used: u64,
    #[serde(default)]
    pub status: String,
}

#[derive(Debug, Deserialize)]
pub struct OsdTree {
    pub nodes: Vec<TreeNode>,
}

#[derive(Debug, Deserialize)]
pub struct TreeNode {
    pub id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub children: Vec<i64>,
    #[serde(default)]
    pub crush_weight: Option<f64>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub device_class: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct OsdMetadata {
    /// Present in the list form (`ceph osd metadata` without an id).
    #[serde(default)]
    pub id: Option<u32>,
    #[serde(default)]
    pub hostname: String,
    /// Kernel names, comma-separated: "sdb" or "loop1".
    #[serde(default)]
    pub devices: String,
    #[serde(default)]
    pub bluestore_bdev_dev_node: Option<String>,
    #[serde(default)]
    pub bluefs_db_dev_node: Option<String>,
    #[serde(default)]
    pub bluefs_wal_dev_node: Option<String>,
    /// "sdb=SERIAL,..." (empty without udev).
    #[serde(default)]
    pub device_ids: String,
    #[serde(default)]
    pub device_paths: String,
    /// Bytes, as a decimal string ("10737418240").
    #[serde(default)]
    pub bluestore_bdev_size: Option<String>,
    /// hdd, ssd or nvme: what the OSD detected.
    #[serde(default)]
    pub bluestore_bdev_type: Option<String>,
}

/// `ceph tell osd.N bench --format json`.
#[derive(Debug, Deserialize)]
pub struct OsdBenchOutput {
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub elapsed_sec: f64,
}

#[derive(Debug, Deserialize)]
pub struct PgStat {
    pub pg_summary: PgSummary,
}

#[derive(Debug, Deserialize)]
pub struct PgSummary {
    pub num_pg_by_state: Vec<PgStateCount>,
    #[serde(default)]
    pub num_pgs: i64,
}

#[derive(Debug, Deserialize)]
pub struct PgStateCount {
    pub name: String,
    pub num: i64,
}

/// `ceph health --format json`.
#[derive(Debug, Deserialize)]
pub struct Health {
    pub status: String,
}

/// One pool of `ceph osd pool ls detail --format json`.
#[derive(Debug, Deserialize)]
pub struct PoolDetail {
    pub pool_name: String,
    pub size: u32,
    pub pg_num: u32,
}

/// `ceph df --format json`: objects per pool.
#[derive(Debug, Deserialize)]
pub struct Df {
    #[serde(default)]
    pub pools: Vec<DfPool>,
}

#[derive(Debug, Deserialize)]
pub struct DfPool {
    pub name: String,
    pub stats: DfPoolStats,
}

#[derive(Debug, Deserialize)]
pub struct DfPoolStats {
    #[serde(default)]
    pub objects: u64,
}

/// `ceph osd dump`'s pools and ratios, for the removal preview.
#[derive(Debug, Deserialize)]
pub struct OsdDumpPools {
    pub full_ratio: f64,
    pub backfillfull_ratio: f64,
    pub nearfull_ratio: f64,
    pub pools: Vec<PoolEntry>,
}

#[derive(Debug, Deserialize)]
pub struct PoolEntry {
    pub pool: i64,
    pub pool_name: String,
    pub size: u32,
    pub min_size: u32,
    pub crush_rule: i64,
}

/// One rule of `ceph osd crush rule dump`.
#[derive(Debug, Deserialize)]
pub struct CrushRule {
    pub rule_id: i64,
    pub steps: Vec<CrushStep>,
}

#[derive(Debug, Deserialize)]
pub struct CrushStep {
    pub op: String,
    #[serde(default)]
    pub item_name: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

impl CrushRule {
    /// (root, device class, failure domain) from `take ROOT[~CLASS]` and the
    /// first `choose*`/`chooseleaf*` step (`osd` when the rule has none).
    pub fn placement(&self) -> (Option<String>, Option<String>, String) {
        let take = self.steps.iter().find(|s| s.op == "take").and_then(|s| s.item_name.clone());
        let (root, class) = match take {
            Some(t) => match t.split_once('~') {
                Some((r, c)) => (Some(r.to_string()), Some(c.to_string())),
                None => (Some(t), None),
            },
            None => (None, None),
        };
        let domain = self
            .steps
            .iter()
            .find(|s| s.op.starts_with("choose"))
            .and_then(|s| s.kind.clone())
            .unwrap_or_else(|| "osd".into());
        (root, class, domain)
    }
}

/// `ceph pg dump pgs`: each PG's bytes.
#[derive(Debug, Deserialize)]
pub struct PgDump {
    pub pg_stats: Vec<PgStatEntry>,
}

#[derive(Debug, Deserialize)]
pub struct PgStatEntry {
    pub pgid: String,
    pub stat_sum: PgStatSum,
}

#[derive(Debug, Deserialize)]
pub struct PgStatSum {
    #[serde(default)]
    pub num_bytes: i64,
}

/// `ceph osd df`'s sizes.
#[derive(Debug, Deserialize)]
pub struct OsdDfSizes {
    pub nodes: Vec<OsdDfSize>,
}

#[derive(Debug, Deserialize)]
pub struct OsdDfSize {
    pub id: i64,
    #[serde(default)]
    pub kb: u64,
    #[serde(default)]
    pub kb_used: u64,
}

/// `ceph status --format json`: health, PG states and rates. The rates and
/// object counts are present only while there is something to report.
#[derive(Debug, Deserialize)]
pub struct Status {
    #[serde(default)]
    pub health: StatusHealth,
    pub pgmap: StatusPgmap,
}

#[derive(Debug, Default, Deserialize)]
pub struct StatusHealth {
    #[serde(default)]
    pub status: String,
    /// Code -> check; a BTreeMap keeps `ceph status`'s order (by code).
    #[serde(default)]
    pub checks: std::collections::BTreeMap<String, StatusCheck>,
}

#[derive(Debug, Deserialize)]
pub struct StatusCheck {
    pub severity: String,
    pub summary: StatusCheckSummary,
    #[serde(default)]
    pub muted: bool,
}

#[derive(Debug, Deserialize)]
pub struct StatusCheckSummary {
    pub message: String,
    #[serde(default)]
    pub count: i64,
}

#[derive(Debug, Deserialize)]
pub struct StatusPgmap {
    #[serde(default)]
    pub pgs_by_state: Vec<StatusPgState>,
    #[serde(default)]
    pub num_pgs: i64,
    pub degraded_objects: Option<u64>,
    pub degraded_total: Option<u64>,
    pub misplaced_objects: Option<u64>,
    pub misplaced_total: Option<u64>,
    pub unfound_objects: Option<u64>,
    pub unfound_total: Option<u64>,
    pub recovering_bytes_per_sec: Option<f64>,
    pub recovering_objects_per_sec: Option<f64>,
    pub read_bytes_sec: Option<f64>,
    pub write_bytes_sec: Option<f64>,
    pub read_op_per_sec: Option<f64>,
    pub write_op_per_sec: Option<f64>,
}

#[derive(Debug, Deserialize)]
pub struct StatusPgState {
    pub state_name: String,
    pub count: i64,
}

/// CRUSH's "no OSD" in an up set (EC pools keep the position).
const CRUSH_ITEM_NONE: u64 = 2147483647;

/// `osdmaptool FILE --test-map-pgs-dump-all`: PG id -> up set, from lines
/// like `2.1f raw ([3,5], p3) up ([3,5], p3) acting ([3,5], p3)`.
pub fn parse_pgs_dump_all(text: &str) -> Result<Vec<(String, Vec<u32>)>, String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some((pgid, rest)) = line.split_once(' ') else { continue };
        if !pgid.contains('.') || !rest.starts_with("raw (") {
            continue;
        }
        let up = rest
            .split_once(" up ([")
            .and_then(|(_, r)| r.split_once(']'))
            .map(|(list, _)| list)
            .ok_or_else(|| format!("no up set in {line:?}"))?;
        let mut osds = Vec::new();
        for item in up.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let n: u64 = item.parse().map_err(|_| format!("bad OSD {item:?} in {line:?}"))?;
            if n != CRUSH_ITEM_NONE {
                osds.push(u32::try_from(n).map_err(|_| format!("bad OSD {item:?} in {line:?}"))?);
            }
        }
        out.push((pgid.to_string(), osds));
    }
    if out.is_empty() {
        return Err("no placement groups in the output".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osdmaptool_up_sets_are_read_with_none_left_out() {
        let text = "osdmaptool: osdmap file 'om'\npool 2 pg_num 64\n\
                    2.0 raw ([3,5], p3) up ([3,5], p3) acting ([3,1], p3)\n\
                    3.1 raw ([2147483647,4], p4) up ([2147483647,4], p4) acting ([2147483647,4], p4)\n\
                    2.2 raw ([], p-1) up ([], p-1) acting ([], p-1)\n";
        let pgs = parse_pgs_dump_all(text).unwrap();
        assert_eq!(pgs, [("2.0".to_string(), vec![3, 5]), ("3.1".into(), vec![4]), ("2.2".into(), vec![])]);
        assert!(parse_pgs_dump_all("osdmaptool: osdmap file 'om'\n").is_err());
        assert!(parse_pgs_dump_all("2.0 raw ([x], p3) up ([x], p3)").is_err());
    }

    #[test]
    fn a_rule_names_its_root_class_and_failure_domain() {
        let rule: CrushRule = serde_json::from_str(
            r#"{"rule_id":1,"steps":[{"op":"take","item":-1,"item_name":"default~ssd"},
                {"op":"chooseleaf_firstn","num":0,"type":"host"},{"op":"emit"}]}"#,
        )
        .unwrap();
        assert_eq!(rule.placement(), (Some("default".into()), Some("ssd".into()), "host".into()));
    }
}
