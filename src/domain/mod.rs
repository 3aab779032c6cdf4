//! The pure core. Nothing here does I/O, reads the clock or spawns tasks:
//! every function is a value-in, value-out computation, so the CLI preview,
//! the daemon's dry-run and the reconciler all share one implementation.

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
