//! `osdkeeper agent`: the small HTTP server that runs on each storage host.
//! It reports the host's disks in ceph-volume's inventory format, runs the
//! ceph-volume commands that create OSDs, stops OSD daemons, wipes freed
//! disks and probes blank ones with fio, for the daemon. By concern:
//!
//! * `edge` — the HTTP edge: routes and handlers, the token check, the
//!   JSON error answer.
//! * `disks` — acting on one disk: the exclusive claim, zaps, fio probes,
//!   the being-replaced header, what holds a busy disk, BlueStore labels.
//! * `osd` — OSD daemons on the host: which process serves which OSD,
//!   stopping and starting them, their devices, the OSD listing, the LVs
//!   activated after a boot.
//! * `ceph_volume` — running ceph-volume, which commands a request may
//!   name, the release of the host's Ceph.
//! * `inventory` — where the device list comes from (file, ceph-volume or
//!   the kernel's view), cephadm's batch filter, the mount table.
//! * `config` — settings and their checks; `state` — `AgentState`, shared
//!   by the handlers; `host_lock` — one disk or daemon command at a time;
//!   `process` — running a tool with a timeout; `host_roots` — where
//!   `/proc` and `/sys/class/block` are read.
//!
//! Files of one folder import each other only without a cycle (tidy).

pub mod ceph_volume;
pub mod config;
pub mod disks;
pub mod edge;
pub mod host_lock;
pub mod host_roots;
pub mod inventory;
pub mod osd;
pub mod process;
pub mod state;

use std::future::Future;

pub use config::{AgentConfig, RawSettings};
pub use edge::http::build_router;
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
