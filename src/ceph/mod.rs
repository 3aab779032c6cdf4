//! The Ceph cluster adapter: what the daemon reads from and does to the
//! cluster (`CephCluster`; benchmarks apart, `bench.rs`'s `CephBench`).
//! Implemented by `CephCli` (the `ceph` command with `--format json` and
//! timeouts, as the cephx user `ceph.name` when set, whose caps
//! `deploy/ceph-auth.sh` grants; the cluster is found from `CEPH_CONF` or
//! `--ceph-conf`) and by the simulator.
//!
//! * Reads: `session.rs` serves the frequent ones through a long-lived
//!   helper on Ceph's Python binding, `reads.rs` lists them (actions always
//!   run the CLI); `wire.rs` and `status.rs` read the cluster's JSON.
//! * By feature: `placement.rs` (the removal preview's input, with
//!   osdmaptool), `drain.rs` (drain progress, pacing, the `--fast`
//!   settings), `swap.rs` (a swap's PG maps, `pg-upmap-items`, the final
//!   CRUSH weights), `copies.rs` (every PG's copies, for the last-copy
//!   gate), `cli_bench.rs` with `health_json.rs` and `rados_wire.rs`
//!   (benchmarks).
//! * A database kept in RADOS: `xattrs.rs` (the leader record beside it),
//!   `rados_lock.rs` (who holds its lock), `vfs_settings.rs` (the lock
//!   settings Ceph's SQLite VFS will run with).

pub mod bench;
pub mod cli;
mod cli_bench;
mod copies;
mod drain;
mod health_json;
mod placement;
pub mod rados_lock;
mod rados_wire;
mod reads;
pub mod session;
#[cfg(test)]
mod session_tests;
mod status;
mod swap;
pub mod vfs_settings;
pub mod wire;
pub mod xattrs;

use futures::future::BoxFuture;

/// A command as the operator would type it: the ceph CLI's are kept
/// without their program, `rados`'s with it.
fn shown(command: &str) -> String {
    if command.starts_with("rados ") {
        command.to_string()
    } else {
        format!("ceph {command}")
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum CephError {
    #[error("`{}` failed (exit {code}): {message}", shown(command))]
    Command { command: String, code: i32, message: String },
    #[error("`{}` did not finish within {seconds} s", shown(command))]
    Timeout { command: String, seconds: u64 },
    #[error("cannot run the ceph CLI ({bin}): {message}")]
    Spawn { bin: String, message: String },
    #[error("`{}` printed something unreadable: {message}", shown(command))]
    Decode { command: String, message: String },
    /// Another of Ceph's tools (osdmaptool), or the temporary files it works on.
    #[error("{command} failed: {message}")]
    Tool { command: String, message: String },
    /// This adapter cannot do it (the simulator runs no benchmarks).
    #[error("this cluster adapter cannot run `{what}`")]
    Unsupported { what: String },
}

pub use crate::domain::ceph_release::CephRelease;
pub use crate::domain::cluster::{ClusterState, OsdDevices, OsdState, Verdict};
pub use crate::domain::cluster_health::ClusterHealth;
pub use crate::domain::copies::Copies;
pub use crate::domain::drain_preview::PreviewInput;
pub use crate::domain::removal::boost::{DbEntry, RecoveryNow};
pub use crate::domain::removal::{PacingFacts, PgOnOsd};
pub use crate::domain::swap::cost::SwapPlacements;
pub use crate::domain::swap::SwapInput;

pub use bench::CephBench;

/// The cluster: what removals and deployments read and do, and (`CephBench`) benchmarks.
pub trait CephCluster: CephBench + Send + Sync {
    fn state(&self) -> BoxFuture<'_, Result<ClusterState, CephError>>;
    /// Health, its checks, PG states and rates (`ceph status`).
    fn status(&self) -> BoxFuture<'_, Result<ClusterHealth, CephError>>;
    /// The releases the cluster's daemons run, oldest first, with how many
    /// run each (`ceph versions`; two or more while it is upgraded).
    fn versions(&self) -> BoxFuture<'_, Result<Vec<(CephRelease, u64)>, CephError>>;
    fn osd_devices(&self, id: u32) -> BoxFuture<'_, Result<OsdDevices, CephError>>;
    /// Devices of every OSD in one call (`ceph osd metadata`).
    fn all_osd_devices(&self) -> BoxFuture<'_, Result<Vec<(u32, OsdDevices)>, CephError>>;
    fn ok_to_stop(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>>;
    fn safe_to_destroy(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>>;
    fn reweight(&self, id: u32, weight: f64) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_out(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_in(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn mark_down(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    /// Keeps the id (replace). Never skips the monitors' own safety check.
    fn destroy(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    fn purge(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    /// `ceph osd crush rm-device-class osd.N`: its next boot sets the class
    /// of its own device (or the one ceph-volume was given).
    fn rm_device_class(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    /// What the removal preview needs for draining `ids` together; changes nothing.
    fn preview_input(&self, ids: &[u32]) -> BoxFuture<'_, Result<PreviewInput, CephError>>;
    /// The PGs that still list the OSD in their acting set (`pg ls-by-osd`).
    fn pgs_on_osd(&self, id: u32) -> BoxFuture<'_, Result<Vec<PgOnOsd>, CephError>>;
    /// What the pacing of a new drain weighs; `probe` is an OSD that is up.
    fn pacing_facts(&self, probe: u32) -> BoxFuture<'_, Result<PacingFacts, CephError>>;
    /// The recovery settings osd.`probe` runs with, and the config database.
    fn recovery_config(&self, probe: u32) -> BoxFuture<'_, Result<RecoveryNow, CephError>>;
    /// The monitors' config database (`config dump`).
    fn config_dump(&self) -> BoxFuture<'_, Result<Vec<DbEntry>, CephError>>;
    /// `ceph config set SECTION NAME VALUE`.
    fn config_set(&self, section: &str, name: &str, value: &str) -> BoxFuture<'_, Result<(), CephError>>;
    /// `ceph config rm SECTION NAME`.
    fn config_rm(&self, section: &str, name: &str) -> BoxFuture<'_, Result<(), CephError>>;
    /// What a swap reads each round: every PG now and in the final map
    /// (these CRUSH weights on a copy of the osdmap, osdmaptool's answer),
    /// the balancer, the OSDs with `noout`, and `osd_max_backfills` as
    /// osd.`probe` runs with it. Changes nothing.
    fn swap_input(&self, weights: &[(u32, f64)], probe: u32) -> BoxFuture<'_, Result<SwapInput, CephError>>;
    /// The swap preview's three maps: every PG now, with `olds` at CRUSH
    /// weight 0, and with new OSDs of these weights added under `host`
    /// too (they do not exist yet). Changes nothing.
    fn swap_placements(
        &self,
        olds: &[u32],
        host: &str,
        new_weights: &[f64],
    ) -> BoxFuture<'_, Result<SwapPlacements, CephError>>;
    /// `ceph osd pg-upmap-items PGID FROM TO ...`; no pairs: `ceph osd
    /// rm-pg-upmap-items PGID`.
    fn pg_upmap_items(&self, pgid: &str, pairs: &[(u32, u32)]) -> BoxFuture<'_, Result<(), CephError>>;
    /// These CRUSH weights in one change of the CRUSH map.
    fn set_crush_weights(&self, weights: &[(u32, f64)]) -> BoxFuture<'_, Result<(), CephError>>;
    /// `ceph balancer on|off`.
    fn set_balancer(&self, on: bool) -> BoxFuture<'_, Result<(), CephError>>;
    /// `ceph osd add-noout osd.N` or `rm-noout`.
    fn set_noout(&self, id: u32, on: bool) -> BoxFuture<'_, Result<(), CephError>>;
    /// `ceph osd destroy N --yes-i-really-mean-it`: only for an in-place
    /// removal the operator chose (`device replace --in-place`, the
    /// in-place swap), after osdkeeper's own check (docs/design/swap.md);
    /// Ceph's safe-to-destroy says no while the OSD still has PGs mapped.
    fn destroy_unchecked(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>>;
    /// Every PG's acting set, each pool's size, min_size, pg_num and the
    /// copies a PG needs to be read, the OSDs down: read fresh right before
    /// an in-place stop, destroy or zap (`domain::copies`). Changes nothing.
    fn copies(&self) -> BoxFuture<'_, Result<Copies, CephError>>;
}
