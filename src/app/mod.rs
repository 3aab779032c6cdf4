//! The composition root: opens the store, builds the adapters (agents over
//! HTTP, the `ceph` CLI) or the simulator, the daemon and its workers, and
//! the HTTP API, and shuts them down in order on SIGTERM or Ctrl-C. The
//! only place that knows every layer; the layers do not know each other
//! upward.

pub mod backup;
mod demo;

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::agent_client::{HostAgents, HttpAgents};
use crate::api::ApiSettings;
use crate::ceph::cli::CephCli;
use crate::ceph::session::Session;
use crate::ceph::CephCluster;
use crate::config::Config;
use crate::daemon::Daemon;
use crate::store::backup::DbLock;
use crate::store::Store;

pub use demo::demo;

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
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    #[error("cannot lock the database: {0}")]
    Lock(#[from] crate::store::backup::BackupError),
}

/// `osdkeeper serve`: runs the daemon until a shutdown signal arrives.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let agents = HttpAgents::new(
        config.agent_token.clone(),
        config.poll_timeout,
        config.command_timeout,
        config.agent_ca.as_deref(),
    )
    .map_err(ServeError::Tls)?;
    let agents: Arc<dyn HostAgents> = Arc::new(agents);
    let ceph: Arc<dyn CephCluster> = Arc::new(CephCli {
        bin: config.ceph_bin.clone(),
        rados_bin: config.rados_bin.clone(),
        conf: config.ceph_conf.clone(),
        timeout: config.ceph_timeout,
        name: config.ceph_name.clone(),
        keyring: config.ceph_keyring.clone(),
        osdmaptool: config.osdmaptool.clone(),
        session: config.ceph_session.clone().map(Session::new),
    });
    serve_with(config, agents, ceph, shutdown_signal()).await
}

/// The same with injectable agents, Ceph and shutdown (tests, demo).
pub async fn serve_with(
    config: Config,
    agents: Arc<dyn HostAgents>,
    ceph: Arc<dyn CephCluster>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    // Certificates are checked before anything listens.
    let tls = config.tls.as_ref().map(crate::tls::server_config).transpose()?;
    // Held until the daemon ends: a restore (or a second daemon) on this
    // database is refused meanwhile. The kernel drops it if we are killed.
    let _lock = DbLock::take(&config.db)?;
    let store = Store::open(&config.db)
        .await
        .map_err(|source| ServeError::Store { path: config.db.display().to_string(), source })?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen { addr: config.listen.to_string(), source })?;
    let local = listener.local_addr().map_err(ServeError::Http)?;
    let settings = ApiSettings { token: config.token.clone(), max_body_bytes: config.max_body_bytes };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let db = config.db.display().to_string();
    let daemon = Daemon::new(store.clone(), agents, ceph, config);
    let cancel = CancellationToken::new();
    let workers = daemon.spawn_workers(&cancel);
    // Reported, not required: the daemon serves without a cluster.
    let checking = daemon.clone();
    tokio::spawn(async move { checking.cluster.check().await });
    tracing::info!(%local, db, "osdkeeper daemon listening");
    // Tests and scripts read the bound address (port 0) from this line.
    println!("listening on {local}");
    eprintln!("osdkeeper: dashboard at {scheme}://{local}/");
    let app = crate::api::router(daemon.clone(), settings);
    let streams = daemon.clone();
    let shutdown = async move {
        shutdown.await;
        streams.events.close_streams();
    };
    // hyper's own 400/414/431 answers are bodiless; every connection is
    // wrapped to give them a JSON body (the decrypted side under TLS).
    let served = match tls {
        None => {
            let listener = crate::api::raw_errors::JsonErrorListener(listener);
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        }
        Some(tls) => crate::tls::serve_tls(listener, app, tls, shutdown, crate::api::raw_errors::JsonErrors::new).await,
    };
    tracing::info!("shutting down");
    cancel.cancel();
    for task in workers {
        if let Err(e) = task.await {
            tracing::error!("a background worker ended abnormally: {e}");
        }
    }
    store.close().await;
    served.map_err(ServeError::Http)
}

/// SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for Ctrl-C: {e}");
            std::future::pending::<()>().await
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!("cannot listen for SIGTERM: {e}");
                std::future::pending::<()>().await
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
