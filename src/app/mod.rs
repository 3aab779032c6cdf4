//! The composition root: opens the store, builds the adapters (agents over
//! HTTP, the `ceph` CLI) or the simulator, the daemon and its workers, and
//! the HTTP API, and shuts them down in order on SIGTERM or Ctrl-C. The
//! only place that knows every layer; the layers do not know each other
//! upward.
//!
//! A database in a file is locked and opened before the daemon listens;
//! one kept in RADOS after, once it leads (`leader.rs`: a standby until
//! the lock comes, its fencing derived first, the watchdog, and `lost`,
//! which aborts the process; docs/design/high-availability.md). `backup.rs`
//! is where `osdkeeper backup` and `restore` reach the store; `demo.rs`
//! the simulated cluster `osdkeeper demo` serves.

pub mod backup;
mod demo;
mod leader;

use std::sync::{Arc, OnceLock};

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::agent_client::{AgentCredentials, Fallback, HostAgents, HttpAgents};
use crate::api::standby::Gate;
use crate::api::ApiSettings;
use crate::ceph::cli::CephCli;
use crate::ceph::session::Session;
use crate::ceph::CephCluster;
use crate::config::Config;
use crate::daemon::Daemon;
use crate::domain::event::{EventKind, Level};
use crate::store::backup::DbLock;
use crate::store::location::DbLocation;
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
    #[error("{0}")]
    Rados(String),
}

/// `osdkeeper serve`: runs the daemon until a shutdown signal arrives.
pub async fn serve(config: Config) -> Result<(), ServeError> {
    let agents = HttpAgents::new(
        agent_credentials(&config),
        config.poll_timeout,
        config.command_timeout,
        config.agent_ca.as_deref(),
    )
    .map_err(ServeError::Tls)?;
    let agents: Arc<dyn HostAgents> = Arc::new(agents);
    let ceph: Arc<dyn CephCluster> = Arc::new(ceph_cli(&config, config.ceph_session.clone().map(Session::new)));
    serve_with(config, agents, ceph, shutdown_signal()).await
}

/// The agents' secrets as the config names them; what is left of the old
/// shared token is said at start.
fn agent_credentials(config: &Config) -> AgentCredentials {
    match (&config.agent_key, &config.agent_fallback) {
        (None, Some(_)) => tracing::warn!(
            "every agent takes the same token (agent_token_file): root on any storage host can command all of \
             them; give the daemon an agent key (agents.key_file) and each host its own token \
             (docs/operations.md, \"Agent tokens\")"
        ),
        (Some(_), Some(Fallback::SharedToken(_))) => tracing::warn!(
            "the shared agent token is still sent to agents that refuse their own; each such host is named \
             in a warning: once none is, remove agent_token_file"
        ),
        _ => {}
    }
    AgentCredentials::new(config.agent_key.clone(), config.agent_fallback.clone())
}

/// The `ceph` and `rados` command lines as the config names them.
fn ceph_cli(config: &Config, session: Option<Session>) -> CephCli {
    CephCli {
        bin: config.ceph_bin.clone(),
        rados_bin: config.rados_bin.clone(),
        conf: config.ceph_conf.clone(),
        timeout: config.ceph_timeout,
        bench_slack: config.bench_slack,
        name: config.ceph_name.clone(),
        keyring: config.ceph_keyring.clone(),
        osdmaptool: config.osdmaptool.clone(),
        session,
    }
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
    let stop = CancellationToken::new();
    let stopping = stop.clone();
    tokio::spawn(async move {
        shutdown.await;
        stopping.cancel();
    });
    // A file is locked and opened before anything listens: a second
    // daemon on it is refused. A database in RADOS is opened after: the
    // daemon serves as a standby while another one holds it.
    let (_lock, opened, fencing) = match &config.db {
        DbLocation::File(path) => {
            // Held until the daemon ends: a restore (or a second daemon) on
            // this database is refused meanwhile. The kernel drops it if we
            // are killed.
            let lock = DbLock::take(path)?;
            let store = Store::open(path)
                .await
                .map_err(|source| ServeError::Store { path: path.display().to_string(), source })?;
            (Some(lock), Some(store), None)
        }
        DbLocation::Rados(rados) => {
            leader::check_pool(rados, config.create_pool, &ceph_cli(&config, None)).await?;
            Store::load_rados_vfs().await.map_err(|e| ServeError::Rados(format!("cannot open {rados}: {e}")))?;
            let fencing = leader::fencing(rados, &config.ceph_python, config.ceph_timeout).await?;
            (None, None, Some(fencing))
        }
    };
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen { addr: config.listen.to_string(), source })?;
    let local = listener.local_addr().map_err(ServeError::Http)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let db = config.db.to_string();
    let gate = Gate::new(db.clone());
    let leading: Arc<OnceLock<Arc<Daemon>>> = Arc::new(OnceLock::new());
    let url = format!("{scheme}://{}", advertised(local));
    let limits = config.http;
    let lead = Lead { agents, ceph, config, gate: gate.clone(), leading: leading.clone() };
    // A daemon on a file leads before it listens: its first request finds the API.
    let (lead, led) = match opened {
        Some(store) => (None, Some(lead.start(store, None))),
        None => (Some(lead), None),
    };
    let served = tokio::spawn(serve_http(listener, gate.router(), tls, limits, stop.clone(), leading));
    // Tests and scripts read the bound address (port 0) from this line.
    println!("listening on {local}");
    eprintln!("osdkeeper: dashboard at {scheme}://{local}/");
    let (store, workers, cancel) = match (led, lead) {
        (Some(led), _) => led,
        (None, Some(lead)) => {
            let DbLocation::Rados(rados) = lead.config.db.clone() else { unreachable!("a file is opened above") };
            let cli = ceph_cli(&lead.config, None);
            let Some(fencing) = fencing else { unreachable!("read with the pool") };
            match leader::take_over(&rados, &cli, fencing, &gate, &url, &stop).await? {
                // Told to stop as the lock came: it is given back unused.
                Some((store, _)) if stop.is_cancelled() => return finish(served, Vec::new(), Some(store), &stop).await,
                Some((store, said)) => lead.start(store, Some(said)),
                None => return finish(served, Vec::new(), None, &stop).await,
            }
        }
        (None, None) => unreachable!("either led or about to lead"),
    };
    tracing::info!(%local, db, "osdkeeper daemon listening");
    finish(served, workers, Some(store), &cancel).await
}

/// What a daemon needs to start leading once it has its store.
struct Lead {
    agents: Arc<dyn HostAgents>,
    ceph: Arc<dyn CephCluster>,
    config: Config,
    gate: Arc<Gate>,
    leading: Arc<OnceLock<Arc<Daemon>>>,
}

impl Lead {
    /// Builds the daemon, starts its workers and opens the API onto it;
    /// `leads`: the event that says it took the lead (a database in RADOS).
    fn start(
        self,
        store: Store,
        leads: Option<String>,
    ) -> (Store, Vec<tokio::task::JoinHandle<()>>, CancellationToken) {
        let settings = ApiSettings {
            token: self.config.token.clone(),
            max_body_bytes: self.config.max_body_bytes,
            store: store.clone(),
        };
        let daemon = Daemon::new(store.clone(), self.agents, self.ceph, self.config);
        if self.leading.set(daemon.clone()).is_err() {
            tracing::error!(
                "a daemon was started twice in one process; the first one's streams are closed at shutdown"
            );
        }
        let cancel = CancellationToken::new();
        let workers = daemon.spawn_workers(&cancel);
        // Reported, not required: the daemon serves without a cluster.
        let checking = daemon.clone();
        tokio::spawn(async move { checking.cluster.check().await });
        if let Some(message) = leads {
            let telling = daemon.clone();
            tokio::spawn(async move {
                telling.events.record(Level::Info, EventKind::DaemonLeading, None, None, message).await
            });
        }
        self.gate.open(crate::api::router(daemon, settings));
        (store, workers, cancel)
    }
}

/// Waits for the HTTP server to end (it ends on the shutdown signal), then
/// stops the workers and closes the store.
async fn finish(
    served: tokio::task::JoinHandle<std::io::Result<()>>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    store: Option<Store>,
    cancel: &CancellationToken,
) -> Result<(), ServeError> {
    let served = match served.await {
        Ok(r) => r,
        Err(e) => Err(std::io::Error::other(format!("the HTTP server task ended abnormally: {e}"))),
    };
    tracing::info!("shutting down");
    cancel.cancel();
    for task in workers {
        if let Err(e) = task.await {
            tracing::error!("a background worker ended abnormally: {e}");
        }
    }
    if let Some(store) = store {
        store.close().await;
    }
    served.map_err(ServeError::Http)
}

/// Serves `app` until `stop`; the event streams of the daemon, once it
/// leads, are closed first so that the graceful shutdown does not wait on them.
async fn serve_http(
    listener: TcpListener,
    app: axum::Router,
    tls: Option<Arc<rustls::ServerConfig>>,
    limits: crate::http_server::ServerLimits,
    stop: CancellationToken,
    leading: Arc<OnceLock<Arc<Daemon>>>,
) -> std::io::Result<()> {
    let shutdown = async move {
        stop.cancelled().await;
        if let Some(daemon) = leading.get() {
            daemon.events.close_streams();
        }
    };
    // hyper's own 400/414/431 answers are bodiless; every connection is
    // wrapped to give them a JSON body (the decrypted side under TLS).
    crate::http_server::serve(listener, app, tls, limits, shutdown, crate::api::raw_errors::JsonErrors::new).await
}

/// The address others reach this daemon at: the bound one, or the
/// machine's name when bound to every address.
fn advertised(local: std::net::SocketAddr) -> String {
    if local.ip().is_unspecified() {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        format!("{}:{}", host.trim(), local.port())
    } else {
        local.to_string()
    }
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
