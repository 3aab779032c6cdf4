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
