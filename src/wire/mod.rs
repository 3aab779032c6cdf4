//! External data formats: the JSON of ceph-volume, inventory files, the
//! agent's and the daemon's HTTP APIs, and each host's agent token as the
//! daemon and the agent's host share it. Only this module knows the shape
//! of ceph-volume's JSON.

pub mod agent;
pub mod agent_token;
pub mod api;
pub mod browser_guard;
pub mod ceph_volume;
pub mod ceph_volume_list;
mod ceph_volume_scan;
pub mod device_listing;
pub mod fio;
pub mod inventory_file;
mod inventory_hosts;
pub mod json_stream;
pub mod leader;
pub mod preview_json;
