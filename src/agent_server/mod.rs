//! `osdkeeper agent`: the small HTTP server that runs on each storage host.
//! It reports the host's disks in ceph-volume's inventory format, runs the
//! ceph-volume commands that create OSDs, stops OSD daemons wipes
//! freed disks and probes blank ones with fio, for the daemon.
//!
//! * `config` — settings and their checks (token, loopback-only without one).
//! * `state` — `AgentState`, shared by the handlers; `http` — `build_router`,
//!   handlers; `error` — `ApiError`, the JSON error answer with its code;
//!   `auth` — the bearer-token check.
//! * `inventory` — where devices come from (file, ceph-volume, kernel), one
//!   scan at a time; `kernel_inventory` — the kernel's view in ceph-volume's
//!   format; `batch_filter` — the devices cephadm's `--filter-for-batch`
//!   keeps; `mounts` — the mount table; `ceph_volume` — running
//!   ceph-volume; `release` — the release of its Ceph (`ceph --version`
//!   beside it), for the reader and the daemon; `ceph_volume_args` — which
//!   commands and devices a request may name; `process` — running a tool
//!   with a timeout.
//! * `listing_cache` — the last OSD listing, until a command here changes
//!   the disks or it is 5 minutes old.
//! * OSD daemons: `proc_scan` — processes and their open files from
//!   `/proc`; `osd_argv` — which OSD a ceph-osd command line serves;
//!   `osd_status` — whether an OSD's daemon runs here; `osd_stop` —
//!   stopping it (systemd unit or command) and waiting for it to exit.
//! * Zaps: `zap` — checks and order of a zap; `exclusive` — the exclusive
//!   handle and the zeroing through it; `holders` — who holds a busy
//!   device; `osd_label` — the OSD a BlueStore label names.
//! * Probes: `probe` — fio on a blank device, held exclusively while it
//!   runs, its ends zeroed after; `blank` — when a device counts as blank.
//! * `host_roots` — where `/proc` and `/sys/class/block` are read.
//! * `boot_activation` — for the first minutes after a boot, the LVs of
//!   OSDs meant to start that LVM left inactive; `boot_lvs` — which of
//!   them a look activates (`lvs` and the enabled units read, no I/O).

pub mod auth;
pub mod batch_filter;
pub mod blank;
pub mod boot_activation;
pub mod boot_lvs;
pub mod ceph_volume;
pub mod ceph_volume_args;
pub mod claim;
pub mod config;
pub mod data_dirs;
pub mod error;
pub mod exclusive;
pub mod holders;
pub mod host_roots;
pub mod http;
pub mod inventory;
pub mod kernel_inventory;
pub mod listing_cache;
pub mod mounts;
pub mod osd_argv;
pub mod osd_devices;
pub mod osd_label;
pub mod osd_list;
pub mod osd_start;
pub mod osd_status;
pub mod osd_stop;
pub mod probe;
pub mod proc_scan;
pub mod process;
pub mod release;
pub mod replace_header;
pub mod state;
pub mod zap;
pub mod zap_identity;
pub mod zap_osd;

use std::future::Future;

pub use config::{AgentConfig, RawSettings};
pub use http::build_router;
pub use state::AgentState;

/// Serves within `limits` until `shutdown` completes, then lets requests in flight finish
/// and waits for a running command (ceph-volume, zap, OSD stop), unless `force` completes
/// first (a second signal). A forced exit leaves such a command running.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AgentState,
    tls: Option<std::sync::Arc<rustls::ServerConfig>>,
    limits: crate::http_server::ServerLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    force: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let busy = state.busy.clone();
    let server = crate::http_server::serve(listener, build_router(state), tls, limits, shutdown, |s| s);
    tokio::pin!(force);
    tokio::select! {
        served = server => served?,
        _ = &mut force => {
            tracing::warn!("second signal: exiting without waiting for requests in flight");
            return Ok(());
        }
    }
    let waiting = async {
        if busy.try_lock().is_err() {
            tracing::info!("waiting for the running disk command to finish before exiting");
        }
        // Holding the lock for a moment is the point: it waits for the command.
        drop(busy.lock().await);
    };
    tokio::select! {
        _ = waiting => {}
        _ = force => tracing::warn!("second signal: exiting while a disk command still runs"),
    }
    Ok(())
}

/// Completes on SIGTERM or SIGINT; the second future on the next one.
pub fn shutdown_signals() -> std::io::Result<(impl Future<Output = ()> + Send + 'static, impl Future<Output = ()>)> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let (second_tx, second_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let name = tokio::select! { _ = term.recv() => "SIGTERM", _ = int.recv() => "SIGINT" };
        tracing::info!("{name}: shutting down");
        // A receiver that is gone has stopped waiting: nothing to tell.
        first_tx.send(()).ok();
        tokio::select! { _ = term.recv() => {}, _ = int.recv() => {} }
        second_tx.send(()).ok();
    });
    let first = async move {
        // A dropped sender (the signal task ended) also means: stop.
        first_rx.await.ok();
    };
    let second = async move {
        // A dropped sender (no second signal) must not count as one.
        if second_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    Ok((first, second))
}
