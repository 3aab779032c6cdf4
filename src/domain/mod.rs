//! The pure core. Nothing here does I/O, reads the clock or spawns tasks:
//! every function is a value-in, value-out computation, so the CLI preview,
//! the daemon's dry-run and the reconciler all share one implementation.
//! It imports nothing else of the crate, and its types derive no serde:
//! how a value is JSON is decided at the edge (`wire::api`, the store's
//! codecs). Each file's `//!` says its rule; by topic:
//!
//! * Specs in: `yaml11` (the one YAML reader, YAML 1.1 as PyYAML reads it)
//!   with its budgets (`yaml_limits`) into Python's data model (`value`);
//!   `spec/` (cephadm's `DriveGroupSpec` and `HostSpec`, validated as the
//!   cephadm of one release; `osdkeeper:`, our one key, in
//!   `spec/extension.rs`); `fnmatch` (host patterns); `ceph_release`.
//! * Disks: `inventory` (`DeviceReport`, one disk as ceph-volume reports
//!   it; `Device`, a report and what osdkeeper marks on it),
//!   `inventory_diff`, `device_id` (a disk's id as each release writes
//!   it), `release_mismatch`.
//! * Planning: `selection` (cephadm's `DriveSelection` walk, with a reason
//!   per device passed over), `command` (the ceph-volume argv),
//!   `osd_layout/` (the OSDs those commands make; `args.rs`, the one
//!   grammar of the command), `plan` (every spec over every host),
//!   `reconcile` (when a plan runs again).
//! * State machines, `advance(state, observation) -> step`: `operation`
//!   (what every kind shares), `deploy/`, `removal/`, `swap/`,
//!   `bench/cluster/`, `probe/run.rs`.
//! * Around removals and swaps: `drain_preview/` (what a removal will
//!   move, from CRUSH's own answer), `progress/` (the drain's ETA and
//!   stall), `copies` (the last-copy gate), `identity` (the OSD, disk and
//!   contents right before a destructive act), `device_replace`,
//!   `cluster` and `cluster_health` (the cluster as values).
//! * Measuring: `bench/` (per-OSD and `rados bench` runs, outliers),
//!   `probe/` (fio on a blank disk, the spec's probe gate).
//! * The rest: `auth` (roles and `RULES`, the role each route needs),
//!   `event` (the closed list of event kinds), `lock_fencing` (when a
//!   leader on a `ceph:` database fences itself), `backoff`, `poll_jitter`.

pub mod auth;
pub mod backoff;
pub mod bench;
pub mod ceph_release;
pub mod cluster;
pub mod cluster_health;
pub mod command;
pub mod copies;
pub mod deploy;
pub mod device_id;
pub mod device_replace;
pub mod drain_preview;
pub mod event;
pub mod fnmatch;
pub mod identity;
pub mod inventory;
pub mod inventory_diff;
pub mod lock_fencing;
pub mod operation;
pub mod osd_layout;
pub mod plan;
pub mod poll_jitter;
pub mod probe;
pub mod progress;
pub mod reconcile;
pub mod release_mismatch;
pub mod removal;
pub mod selection;
pub mod spec;
pub mod swap;
pub mod value;
pub mod yaml11;
pub mod yaml_limits;

#[cfg(test)]
mod by_release_tests;
