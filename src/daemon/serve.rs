//! `osdkeeper serve`: opens the database, starts the poller and the
//! reconciler, serves the API, and shuts everything down in order on
//! SIGTERM or Ctrl-C.

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{poller, reconciler, removals, Daemon};
use crate::agent_client::{HostAgents, HttpAgents};
use crate::ceph::cli::CephCli;
use crate::ceph::CephCluster;
use crate::config::Config;
use crate::store::Store;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot open the database {path}: {source}")]
    Store { path: String, source: crate::store::StoreError },
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: String, source: std::io::Error },
    #[error("the HTTP server failed: {0}")]
    Http(std::io::Error),
    #[error("{0}")]
    Demo(String),
}

/// Runs the daemon until a shutdown signal arrives.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let agents: Arc<dyn HostAgents> =
        Arc::new(HttpAgents::new(config.agent_token.clone(), config.poll_timeout, config.command_timeout));
    let ceph: Arc<dyn CephCluster> = Arc::new(CephCli {
        bin: config.ceph_bin.clone(),
        conf: config.ceph_conf.clone(),
        timeout: config.ceph_timeout,
    });
    serve_with(config, agents, ceph, shutdown_signal()).await
}

/// The same with injectable agents and shutdown (tests, demo).
pub async fn serve_with(
    config: Config,
    agents: Arc<dyn HostAgents>,
    ceph: Arc<dyn CephCluster>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let store = Store::open(&config.db)
        .await
        .map_err(|source| ServeError::Store { path: config.db.display().to_string(), source })?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen { addr: config.listen.to_string(), source })?;
    let local = listener.local_addr().map_err(ServeError::Http)?;
    let daemon = Daemon::new(store.clone(), agents, ceph, config);
    let cancel = CancellationToken::new();
    let poller = tokio::spawn(poller::run(daemon.clone(), cancel.clone()));
    let reconciler = if daemon.config.reconcile {
        Some(tokio::spawn(reconciler::run(daemon.clone(), cancel.clone())))
    } else {
        None
    };
    let remover = tokio::spawn(removals::run(daemon.clone(), cancel.clone()));
    let announcer = tokio::spawn(super::live::announce_polled_hosts(daemon.clone(), cancel.clone()));
    tracing::info!(%local, db = %daemon.config.db.display(), "osdkeeper daemon listening");
    // Tests and scripts read the bound address (port 0) from this line.
    println!("listening on {local}");
    eprintln!("osdkeeper: dashboard at http://{local}/");
    let app = crate::api::router(daemon.clone());
    let streams = daemon.shutting_down.clone();
    let shutdown = async move {
        shutdown.await;
        streams.cancel();
    };
    let served = axum::serve(listener, app).with_graceful_shutdown(shutdown).await;
    tracing::info!("shutting down");
    cancel.cancel();
    let _ = poller.await;
    if let Some(r) = reconciler {
        let _ = r.await;
    }
    let _ = remover.await;
    let _ = announcer.await;
    store.close().await;
    served.map_err(ServeError::Http)
}

pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
