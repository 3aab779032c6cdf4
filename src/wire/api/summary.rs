//! `/api/v1/summary`: the counts a dashboard's header shows.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Summary {
    pub hosts: usize,
    /// The hosts whose agent does not answer, in the order they were added.
    pub unreachable_hosts: Vec<String>,
    /// How many hosts have no inventory yet (their agent never answered); left out of planning.
    pub hosts_without_inventory: usize,
    /// Devices in the stored inventories.
    pub devices: usize,
    /// Devices ceph-volume reports available that osdkeeper does not hold: what a spec could use.
    pub available_devices: usize,
    /// Devices held back from every spec until released (`/api/v1/devices/held`).
    pub held_devices: usize,
    /// OSDs in the cluster, destroyed ones left out; null when the cluster
    /// cannot be read. The three OSD counts may be up to 5 s old.
    pub osds: Option<usize>,
    pub osds_up: Option<usize>,
    pub osds_in: Option<usize>,
    /// Why the OSD counts are null.
    pub cluster_error: Option<String>,
    /// Removals not finished yet.
    pub active_removals: usize,
    /// Stored specs.
    pub specs: usize,
}
