//! External data formats: the JSON of ceph-volume, inventory files, the
//! agent's and the daemon's HTTP APIs, and each host's agent token as the
//! daemon and the agent's host share it. Only this module knows the shape
//! of ceph-volume's JSON.
//!
//! * ceph-volume: `ceph_volume` (the one reader of a device report, into
//!   `DeviceReport`, from bytes or from JSON values; `ceph_volume_scan`
//!   its fast path), `ceph_volume_list` (`raw list`, `lvm list`),
//!   `device_listing` (what `device ls` shows of a report).
//! * Inventory files for `preview`: `inventory_file`, `inventory_hosts`,
//!   `json_stream`.
//! * The agent: `agent` (its HTTP API: routes, bodies, the inventory's
//!   ETag, the error answer's `AgentErrorCode`), `agent_token` (each
//!   host's token, derived from the daemon's agent key), `fio` (the
//!   probe's fio command line and its report).
//! * The daemon's API: `api/`, one file per noun, shared by the daemon, its
//!   handlers and the CLI; `api/names.rs` and `api/mirror.rs` give the
//!   core's plain values their JSON. `preview_json` writes a plan as the
//!   dry-run's document.
//! * `browser_guard`: what both servers refuse of a web page's requests;
//!   `leader`: the record a leader writes beside a database in RADOS.

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
