//! The Ceph cluster adapter: what the removal worker reads from and does to
//! the cluster. Implemented by `CephCli` (the `ceph` command with
//! `--format json` and timeouts; the cluster is found from `CEPH_CONF` or
//! `--ceph-conf`) and by the simulator.

pub mod cli;
pub mod wire;

use futures::future::BoxFuture;

#[derive(Debug, Clone, thiserror::Error)]
pub enum CephError {
    #[error("`ceph {command}` failed (exit {code}): {message}")]
    Command { command: String, code: i32, message: String },
    #[error("`ceph {command}` did not finish within {seconds} s")]
    Timeout { command: String, seconds: u64 },
    #[error("cannot run the ceph CLI ({bin}): {message}")]
    Spawn { bin: String, message: String },
    #[error("`ceph {command}` printed something unreadable: {message}")]
    Decode { command: String, message: String },
}

/// One OSD as the cluster sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdState {
    pub id: u32,
    pub up: bool,
    pub is_in: bool,
    pub destroyed: bool,
    /// CRUSH weight (`osd tree`).
    pub crush_weight: Option<f64>,
    /// From `osd df`; None when not listed.
    pub pgs: Option<i64>,
    pub kb_used: Option<u64>,
    /// The CRUSH host bucket it sits under.
    pub crush_host: Option<String>,
}

/// Everything the removal worker reads each round, in a few commands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    pub osds: Vec<OsdState>,
    /// PG state name -> count (`pg stat`).
    pub pg_states: Vec<(String, i64)>,
}

impl ClusterState {
    pub fn osd(&self, id: u32) -> Option<&OsdState> {
        self.osds.iter().find(|o| o.id == id)
    }

    /// Placement groups whose state makes starting a new drain unwise:
    /// degraded, undersized or backfill-full (`backfill_toofull`).
    pub fn unhealthy_pgs(&self) -> Vec<(String, i64)> {
        self.pg_states
            .iter()
            .filter(|(name, n)| {
                *n > 0 && name.split('+').any(|s| matches!(s, "degraded" | "undersized" | "backfill_toofull"))
            })
            .cloned()
            .collect()
    }
}

/// Where an OSD's data lives, from `ceph osd metadata`.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdDevices {
    pub hostname: String,
    /// Device nodes, e.g. /dev/sdb, /dev/loop4 (block, then db and wal if separate).
    pub dev_nodes: Vec<String>,
    /// Kernel name -> serial/WWN id, where udev provided them.
    pub device_ids: Vec<(String, String)>,
}

/// A yes/no answer with the cluster's own words.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub ok: bool,
    pub message: String,
}

pub trait CephCluster: Send + Sync {
    fn state(&self) -> BoxFuture<'_, Result<ClusterState, CephError>>;
    fn osd_devices(&self, id: u32) -> BoxFuture<'_, Result<OsdDevices, CephError>>;
    /// Devices of every OSD in one call (`ceph osd metadata`).
    fn all_osd_devices(&self) -> BoxFuture<'_, Result<Vec<(u32, OsdDevices)>, CephError>>;
    fn ok_to_stop(&self, ids: &[u32]) -> BoxFuture<'_, Result<Answer, CephError>>;
    fn safe_to_destroy(&self, ids: &[u32]) -> BoxFuture<'_, Result<Answer, CephError>>;
    fn reweight(&self, id: u32, weight: f64) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_out(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_in(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_down(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    /// Keeps the id (replace). Never skips the monitors' own safety check.
    fn destroy(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn purge(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
}
