//! The JSON Ceph 16.2 prints for the commands the removal needs (the shapes
//! were read from testbed/ceph-sandbox/examples). Only the fields used.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::domain::ceph_release::{CephRelease, ReleaseError};

/// `ceph versions`: how many daemons run each version line, per daemon
/// type and `overall`.
#[derive(Debug, Deserialize)]
pub struct Versions {
    #[serde(default)]
    pub overall: BTreeMap<String, u64>,
}

impl Versions {
    /// The releases the cluster's daemons run, oldest first, with how many
    /// daemons run each (a cluster being upgraded runs two or more).
    pub fn releases(&self) -> Result<Vec<(CephRelease, u64)>, ReleaseError> {
        let mut out =
            self.overall.iter().map(|(line, n)| Ok((CephRelease::parse(line)?, *n))).collect::<Result<Vec<_>, _>>()?;
        out.sort_by(|a, b| a.0.release.cmp(&b.0.release).then_with(|| a.0.version.cmp(&b.0.version)));
        Ok(out)
    }
}

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
    /// The OSD's fsid (what its LVs are tagged with, `ceph.osd_fsid`).
    #[serde(default)]
    pub uuid: Option<String>,
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

pub use super::health_json::Health;

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
    /// The release the map requires of its readers (osdmaptool among them).
    #[serde(default)]
    pub require_osd_release: String,
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
    /// 1 replicated, 3 erasure-coded (its profile names its k).
    #[serde(rename = "type", default)]
    pub kind: u8,
    #[serde(default)]
    pub erasure_code_profile: String,
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

/// `ceph pg dump pgs` and `ceph pg ls-by-osd N`: each PG's state, mapping
/// and stats. `ls-by-osd` leaves `pg_stats` out when the OSD has none.
#[derive(Debug, Deserialize)]
pub struct PgDump {
    #[serde(default)]
    pub pg_stats: Vec<PgStatEntry>,
}

#[derive(Debug, Deserialize)]
pub struct PgStatEntry {
    pub pgid: String,
    #[serde(default)]
    pub state: String,
    /// CRUSH's mapping now, and the OSDs serving it (which keep a drained
    /// OSD until its data has moved). CRUSH_ITEM_NONE for a missing EC shard.
    #[serde(default)]
    pub up: Vec<u64>,
    #[serde(default)]
    pub acting: Vec<u64>,
    pub stat_sum: PgStatSum,
}

#[derive(Debug, Deserialize)]
pub struct PgStatSum {
    #[serde(default)]
    pub num_bytes: i64,
    #[serde(default)]
    pub num_objects: i64,
    /// Object copies not where CRUSH wants them yet (what backfill moves).
    #[serde(default)]
    pub num_objects_misplaced: i64,
}

impl PgStatEntry {
    /// As the removal's progress reads it.
    pub fn on_osd(self) -> crate::domain::removal::PgOnOsd {
        let osds = |v: Vec<u64>| {
            v.into_iter().filter(|o| *o != CRUSH_ITEM_NONE).filter_map(|o| u32::try_from(o).ok()).collect()
        };
        crate::domain::removal::PgOnOsd {
            pgid: self.pgid,
            state: self.state,
            up: osds(self.up),
            acting: osds(self.acting),
            bytes: self.stat_sum.num_bytes.max(0) as u64,
            objects: self.stat_sum.num_objects.max(0) as u64,
            misplaced: self.stat_sum.num_objects_misplaced.max(0) as u64,
        }
    }
}

/// One option of `ceph config show-with-defaults osd.N`.
#[derive(Debug, Deserialize)]
pub struct ConfigShown {
    pub name: String,
    #[serde(default)]
    pub value: String,
    #[serde(default)]
    pub source: String,
}

/// One entry of `ceph config dump`.
#[derive(Debug, Deserialize)]
pub struct ConfigDumped {
    pub section: String,
    pub name: String,
    #[serde(default)]
    pub value: String,
    /// `host:NAME` or `class:CLASS` when the option is set for those only.
    #[serde(default)]
    pub mask: String,
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

/// CRUSH's "no OSD" in an up set (EC pools keep the position).
const CRUSH_ITEM_NONE: u64 = 2147483647;

/// One line of `osdmaptool --test-map-pgs-dump-all`.
#[derive(Debug, Clone, PartialEq)]
pub struct MappedPg {
    pub pgid: String,
    /// CRUSH's own placement (down OSDs included, upmaps not applied).
    pub raw: Vec<u32>,
    /// With upmaps applied and down OSDs left out.
    pub up: Vec<u32>,
}

/// `osdmaptool FILE --test-map-pgs-dump-all`, from lines like
/// `2.1f raw ([3,5], p3) up ([3,5], p3) acting ([3,5], p3)`.
pub fn parse_pgs_dump_all(text: &str) -> Result<Vec<MappedPg>, String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        let Some((pgid, rest)) = line.split_once(' ') else { continue };
        if !pgid.contains('.') || !rest.starts_with("raw (") {
            continue;
        }
        let set = |label: &str| -> Result<Vec<u32>, String> {
            let list = rest
                .split_once(label)
                .and_then(|(_, r)| r.split_once(']'))
                .map(|(list, _)| list)
                .ok_or_else(|| format!("no {} set in {line:?}", label.trim().trim_end_matches(" ([")))?;
            let mut osds = Vec::new();
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let n: u64 = item.parse().map_err(|_| format!("bad OSD {item:?} in {line:?}"))?;
                if n != CRUSH_ITEM_NONE {
                    osds.push(u32::try_from(n).map_err(|_| format!("bad OSD {item:?} in {line:?}"))?);
                }
            }
            Ok(osds)
        };
        out.push(MappedPg { pgid: pgid.to_string(), raw: set("raw ([")?, up: set(" up ([")? });
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
        let up: Vec<(&str, &[u32])> = pgs.iter().map(|p| (p.pgid.as_str(), p.up.as_slice())).collect();
        assert_eq!(up, [("2.0", &[3, 5][..]), ("3.1", &[4][..]), ("2.2", &[][..])]);
        let down = parse_pgs_dump_all("2.3 raw ([4,0], p4) up ([0], p0) acting ([0], p0)").unwrap();
        assert_eq!((down[0].raw.clone(), down[0].up.clone()), (vec![4, 0], vec![0]), "osd.4 down");
        assert!(parse_pgs_dump_all("osdmaptool: osdmap file 'om'\n").is_err());
        assert!(parse_pgs_dump_all("2.0 raw ([x], p3) up ([x], p3)").is_err());
    }

    #[test]
    fn a_pg_still_on_a_drained_osd_is_read_with_its_misplaced_copies() {
        // `pg ls-by-osd 3` on the sandbox while osd.3 drained, fields trimmed:
        // one copy of 2.c moving (32 of 61 objects misplaced), both of 2.28.
        let dump: PgDump = serde_json::from_str(
            r#"{"pg_ready":true,"pg_stats":[{"pgid":"2.c","state":"active+remapped+backfilling",
                "stat_sum":{"num_bytes":3899392,"num_objects":61,"num_object_copies":122,"num_objects_misplaced":32,
                "num_objects_degraded":0},"up":[1,2],"acting":[1,3],"up_primary":1,"acting_primary":1},
                {"pgid":"2.28","state":"active+remapped+backfill_wait",
                "stat_sum":{"num_bytes":4554752,"num_objects":77,"num_object_copies":154,"num_objects_misplaced":154,
                "num_objects_degraded":0},"up":[2,1],"acting":[3,5],"up_primary":2,"acting_primary":3}]}"#,
        )
        .unwrap();
        let pgs: Vec<_> = dump.pg_stats.into_iter().map(PgStatEntry::on_osd).collect();
        let pg = &pgs[0];
        assert_eq!(
            (&pg.up, &pg.acting, pg.bytes, pg.objects, pg.misplaced),
            (&vec![1, 2], &vec![1, 3], 3899392, 61, 32)
        );
        assert_eq!(pg.state, "active+remapped+backfilling");
        let left = crate::domain::removal::bytes_to_move(3, &pgs);
        assert_eq!(left, (3899392.0 * 32.0 / 61.0_f64).round() as u64 + 4554752);
        // What 16.2 prints for an OSD that holds no PG.
        let none: PgDump = serde_json::from_str(r#"{"pg_ready":true}"#).unwrap();
        assert!(none.pg_stats.is_empty());
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

#[cfg(test)]
mod versions_tests {
    use super::*;
    use crate::domain::ceph_release::Release;

    #[test]
    fn the_releases_a_cluster_runs() {
        // As the sandbox recorded `ceph versions -f json` (pacific, tentacle).
        let pacific = r#"{"mon":{"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)":1},"mgr":{"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)":1},"osd":{"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)":6},"mds":{},"overall":{"ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)":8}}"#;
        let v: Versions = serde_json::from_str(pacific).unwrap();
        let r = v.releases().unwrap();
        assert_eq!((r.len(), r[0].0.release, r[0].0.version.as_str(), r[0].1), (1, Release::Pacific, "16.2.15", 8));
        let upgrading = r#"{"overall":{"ceph version 20.2.4 (7f793731f1b39eb4f465e960113d2363c311b964) tentacle (stable - RelWithDebInfo)":2,
            "ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)":6}}"#;
        let r = serde_json::from_str::<Versions>(upgrading).unwrap().releases().unwrap();
        let shown: Vec<String> = r.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        assert_eq!(shown, ["18.2.7 (reef) x6", "20.2.4 (tentacle) x2"], "oldest first");
        let odd =
            r#"{"overall":{"ceph version 15.2.17 (8a82819d84cf884bd39c17e3236e0632ac146dc4) octopus (stable)":3}}"#;
        assert!(serde_json::from_str::<Versions>(odd).unwrap().releases().is_err());
    }
}
