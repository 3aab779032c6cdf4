//! The long-running daemon: shared state, the background loops (inventory
//! poller, reconciler) and the operations the HTTP API exposes. Handlers in
//! `api/` stay thin and call into here.

pub mod apply;
pub mod demo;
pub mod hosts;
pub mod live;
pub mod poller;
pub mod reconciler;
pub mod removals;
pub mod serve;
pub mod view;

use std::sync::Arc;

use tokio::sync::Notify;

use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::clock::now_ms;
use crate::config::Config;
use crate::store::{Level, NewEvent, Store};

/// Everything the daemon's tasks share.
pub struct Daemon {
    pub store: Store,
    pub agents: Arc<dyn HostAgents>,
    pub ceph: Arc<dyn CephCluster>,
    pub config: Config,
    pub cache: view::InventoryCache,
    /// Wakes the reconciler early (after an apply or a changed inventory).
    pub reconcile_now: Notify,
    /// Wakes the removal worker (a new removal, a stop request).
    pub removals_now: Notify,
    /// Live updates for dashboards.
    pub live: live::LiveSender,
    /// Hosts polled since the last `Hosts` message (sent in batches).
    pub polled: live::PolledHosts,
    /// Cancelled when the daemon shuts down: ends the open live streams,
    /// which would otherwise keep the HTTP server from finishing.
    pub shutting_down: tokio_util::sync::CancellationToken,
    /// Failed polls per host since start (for /metrics).
    pub poll_errors: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    /// Serializes polls of one host (a refresh and the poller must not race).
    poll_locks: tokio::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Daemon {
    pub fn new(store: Store, agents: Arc<dyn HostAgents>, ceph: Arc<dyn CephCluster>, config: Config) -> Arc<Daemon> {
        Arc::new(Daemon {
            store,
            agents,
            ceph,
            config,
            cache: view::InventoryCache::default(),
            reconcile_now: Notify::new(),
            removals_now: Notify::new(),
            live: live::channel(),
            polled: live::PolledHosts::default(),
            shutting_down: tokio_util::sync::CancellationToken::new(),
            poll_errors: Default::default(),
            poll_locks: Default::default(),
        })
    }

    /// Records an event and logs it; a failure to record is logged, not fatal.
    pub async fn event(
        &self,
        level: Level,
        kind: &'static str,
        host: Option<&str>,
        subject: Option<&str>,
        message: String,
    ) {
        match level {
            Level::Info => tracing::info!(kind, host, "{message}"),
            Level::Warning => tracing::warn!(kind, host, "{message}"),
            Level::Error => tracing::error!(kind, host, "{message}"),
        }
        let e = NewEvent { level, kind, host: host.map(str::to_string), subject: subject.map(str::to_string), message };
        match self.store.add_event(e, now_ms()).await {
            Ok(event) => {
                let _ = self.live.send(live::Live::Event { event });
            }
            Err(err) => tracing::error!("cannot record an event: {err}"),
        }
    }

    async fn poll_lock(&self, host: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.poll_locks.lock().await.entry(host.to_string()).or_default().clone()
    }

    /// The current planning view.
    pub async fn snapshot(&self) -> Result<view::Snapshot, DaemonError> {
        let hosts = self.store.hosts().await?;
        let inventories = self.store.inventories().await?;
        let holds = self.store.holds().await?;
        view::build(&self.cache, hosts, inventories, &holds).map_err(DaemonError::Internal)
    }
}

/// Errors of daemon operations, mapped to HTTP statuses by `api::error`.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Unprocessable(String),
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    Store(crate::store::StoreError),
}

impl From<crate::store::StoreError> for DaemonError {
    fn from(e: crate::store::StoreError) -> Self {
        use crate::store::StoreError as S;
        match e {
            S::NotFound(m) => DaemonError::NotFound(m),
            S::Conflict(m) => DaemonError::Conflict(m),
            other => DaemonError::Store(other),
        }
    }
}

#[cfg(test)]
mod tests;
