//! Where the agent reads the host's live state: `/proc` (processes, open
//! files, mounts), `/sys/class/block` (who holds a device) and the OSD data
//! dirs. Tests point these at directories they build, so the scans are
//! checked without depending on what happens to run on the test machine.

use std::path::PathBuf;

use crate::agent_server::osd::argv::conf_of;
use crate::agent_server::osd::proc_scan::ProcessInfo;

/// ceph-volume's own, fixed in its code (`/var/lib/ceph/osd/CLUSTER-ID`).
pub const DEFAULT_OSD_DATA: &str = "/var/lib/ceph/osd";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoots {
    /// `/proc`.
    pub proc: PathBuf,
    /// `/sys/class/block`: every block device, partitions included.
    pub sys_class_block: PathBuf,
    /// Only ceph-osd processes running with this ceph.conf are this host's
    /// OSDs (`--osd-cluster-conf`); by default every ceph-osd is, which is
    /// the safe side: a zap then refuses for any daemon of that id.
    pub cluster_conf: Option<PathBuf>,
    /// Where ceph-volume makes OSD data dirs (`/var/lib/ceph/osd`).
    pub osd_data: PathBuf,
}

impl Default for HostRoots {
    fn default() -> Self {
        HostRoots {
            proc: PathBuf::from("/proc"),
            sys_class_block: PathBuf::from("/sys/class/block"),
            cluster_conf: None,
            osd_data: PathBuf::from(DEFAULT_OSD_DATA),
        }
    }
}

impl HostRoots {
    /// Whether a process belongs to the cluster this agent serves.
    pub fn of_our_cluster(&self, p: &ProcessInfo) -> bool {
        self.cluster_conf.as_ref().is_none_or(|ours| conf_of(&p.argv) == *ours)
    }
}
