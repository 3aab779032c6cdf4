//! The long-running daemon: its state (private), the operations the API
//! asks for (`hosts`, `apply`, `devices`, `removal/`), the answers the
//! API and dashboard show (`queries/`, the most polled of them from the
//! read model, `read_model/`), and the background workers (`poller`,
//! `reconciler`, `removal::worker`, `deploy::worker`, the read model's)
//! on one loop (`worker`).
//! Decisions live in `domain`; this module observes, persists and acts.
//! It knows nothing of HTTP: `app` wires it to `api`.

pub mod apply;
pub mod audit;
mod bench;
mod deploy;
mod devices;
mod error;
pub mod hosts;
pub mod live;
mod operations;
mod planning;
pub mod poller;
pub mod queries;
pub mod read_model;
pub mod reconciler;
pub mod removal;
mod tokens;
pub mod view;
mod worker;

pub use bench::OsdBenchRequest;
pub use error::{invalid_specs_message, DaemonError};
pub use worker::{paced, Pace, Worker};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::clock::now_ms;
use crate::config::Config;
use crate::domain::event::{EventKind, Level};
use crate::store::{NewEvent, Store};
use crate::wire::api::hosts::Host;
use crate::wire::api::workers::WorkerStatus;

/// Everything the daemon's tasks share.
pub struct Daemon {
    store: Store,
    agents: Arc<dyn HostAgents>,
    ceph: Arc<dyn CephCluster>,
    config: Config,
    cache: view::InventoryCache,
    poller: Worker,
    /// Woken after an apply, a release or a changed inventory.
    reconciler: Worker,
    /// Woken by a new removal or a stop request.
    remover: Worker,
    /// Woken by a new deployment.
    deployer: Worker,
    /// Runs queued benchmarks; woken by a new one.
    bencher: Worker,
    /// The stored API tokens, read once and after each change.
    tokens: tokens::TokenCache,
    /// Live updates for dashboards.
    live: live::LiveSender,
    /// Hosts polled since the last `Hosts` message (sent in batches).
    polled: live::PolledHosts,
    /// Cancelled when the daemon shuts down: ends the open live streams,
    /// which would otherwise keep the HTTP server from finishing.
    shutting_down: CancellationToken,
    /// Failed polls per host since start (for /metrics).
    poll_errors: Mutex<HashMap<String, u64>>,
    /// Serializes polls of one host (a refresh and the poller must not race).
    poll_locks: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// A recent read of the cluster, shared by the read model and the dry-run.
    cluster: queries::ClusterCache,
    /// The answers polled most, kept current by the workers (`read_model/`).
    model: read_model::ReadModel,
    /// Refreshes the read model after writes and reads the cluster for it.
    model_worker: Worker,
    /// Parsing and planning, off the async runtime.
    planning: planning::Planning,
}

/// How often at least the poller looks for hosts whose poll is due (each
/// host has its own interval and backoff; the poller looks sooner when the
/// next one is due sooner).
const POLL_TICK: Duration = Duration::from_secs(1);

/// How often the benchmark worker looks for queued work it was not woken
/// for (every request wakes it).
const BENCH_INTERVAL: Duration = Duration::from_secs(30);

impl Daemon {
    pub fn new(store: Store, agents: Arc<dyn HostAgents>, ceph: Arc<dyn CephCluster>, config: Config) -> Arc<Daemon> {
        Arc::new(Daemon {
            poller: Worker::new("poller", POLL_TICK, config.max_backoff),
            reconciler: Worker::new("reconciler", config.reconcile_interval, config.max_backoff),
            remover: Worker::new("removals", config.removal_interval, config.max_backoff),
            deployer: Worker::new("deployments", config.removal_interval, config.max_backoff),
            bencher: Worker::new("benchmarks", BENCH_INTERVAL, config.max_backoff),
            model_worker: Worker::new("read-model", queries::CLUSTER_TTL, config.max_backoff),
            store,
            agents,
            ceph,
            config,
            cache: view::InventoryCache::default(),
            tokens: Default::default(),
            live: live::channel(),
            polled: live::PolledHosts::default(),
            shutting_down: CancellationToken::new(),
            poll_errors: Default::default(),
            poll_locks: Default::default(),
            cluster: Default::default(),
            model: Default::default(),
            planning: Default::default(),
        })
    }

    /// Holds every parse and plan from now on until the hold is released,
    /// for tests that look at the daemon while a plan is under way.
    #[cfg(test)]
    pub fn hold_planning(&self) -> planning::tests::Hold {
        self.planning.hold()
    }

    /// Starts the background workers; they stop when `cancel` fires.
    pub fn spawn_workers(self: &Arc<Self>, cancel: &CancellationToken) -> Vec<tokio::task::JoinHandle<()>> {
        let mut tasks = Vec::new();
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.poller.run(c, || d.poll_due()).await }));
        if self.config.reconcile {
            let d = self.clone();
            let c = cancel.clone();
            tasks.push(tokio::spawn(async move { d.reconciler.run(c, || paced(d.reconcile_once())).await }));
        }
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.remover.run(c, || d.removal_round()).await }));
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.deployer.run(c, || d.deployment_round()).await }));
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.bencher.run(c, || paced(d.bench_round())).await }));
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.model_worker.run(c, || d.read_model_round()).await }));
        let d = self.clone();
        let c = cancel.clone();
        tasks.push(tokio::spawn(async move { d.wake_read_model_on_writes(c).await }));
        tasks.push(tokio::spawn(live::announce_polled_hosts(self.clone(), cancel.clone())));
        tasks
    }

    /// How each background worker fares.
    pub fn workers(&self) -> Vec<WorkerStatus> {
        [&self.poller, &self.reconciler, &self.remover, &self.deployer, &self.bencher, &self.model_worker]
            .iter()
            .map(|w| w.status())
            .collect()
    }

    /// Ends the open live streams (the HTTP server waits for them).
    pub fn close_streams(&self) {
        self.shutting_down.cancel();
    }

    /// A receiver of live updates, and the token that ends it at shutdown.
    pub fn subscribe(&self) -> (tokio::sync::broadcast::Receiver<live::Live>, CancellationToken) {
        (self.live.subscribe(), self.shutting_down.clone())
    }

    /// How long `--refresh` waits for the agents.
    fn refresh_timeout(&self) -> Duration {
        self.config.poll_timeout + Duration::from_secs(5)
    }

    /// Records an event and logs it; a failure to record is logged, not fatal.
    pub async fn event(
        &self,
        level: Level,
        kind: EventKind,
        host: Option<&str>,
        subject: Option<&str>,
        message: String,
    ) {
        let actor = audit::actor();
        let by = actor.as_deref();
        match level {
            Level::Info => tracing::info!(kind = kind.as_str(), host, actor = by, "{message}"),
            Level::Warning => tracing::warn!(kind = kind.as_str(), host, actor = by, "{message}"),
            Level::Error => tracing::error!(kind = kind.as_str(), host, actor = by, "{message}"),
        }
        let e = NewEvent {
            level,
            kind,
            host: host.map(str::to_string),
            subject: subject.map(str::to_string),
            message,
            actor,
        };
        match self.store.add_event(e, now_ms()).await {
            Ok(event) => self.notify(live::Live::Event { event }),
            Err(err) => tracing::error!("cannot record an event: {err}"),
        }
    }

    /// Tells the open live streams. Nobody listening is normal (no
    /// dashboard open), so a send to no one is not an error.
    pub fn notify(&self, message: live::Live) {
        let _no_listener_is_fine = self.live.send(message);
    }

    async fn poll_lock(&self, host: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.poll_locks.lock().await.entry(host.to_string()).or_default().clone()
    }

    /// Every host with its inventory's head and parsed devices: from the
    /// cache, and only those changed since they were parsed (or never
    /// parsed since the start) read from the store.
    async fn parsed_inventories(&self) -> Result<Vec<(Host, Option<view::Parsed>)>, DaemonError> {
        let hosts = self.store.hosts_with_heads().await?;
        let mut out = Vec::with_capacity(hosts.len());
        for (host, head) in hosts {
            let Some(head) = head else {
                out.push((host, None));
                continue;
            };
            if let Some(devices) = self.cache.cached(&head.host, &head.fingerprint) {
                out.push((host, Some((head, devices))));
                continue;
            }
            // Removed meanwhile: without an inventory, as a moment later.
            let parsed = match self.store.inventory(&head.host).await? {
                Some(inv) => Some(((&inv).into(), self.cache.devices(&inv).map_err(DaemonError::Internal)?)),
                None => None,
            };
            out.push((host, parsed));
        }
        Ok(out)
    }

    /// The current planning view, with the ids of destroyed OSDs that the
    /// next OSDs on their hosts claim (cephadm's OsdIdClaims).
    pub async fn snapshot(&self) -> Result<view::Snapshot, DaemonError> {
        let hosts = self.parsed_inventories().await?;
        let holds = self.store.holds().await?;
        let probes = self.probe_statuses().await?;
        let mut snapshot = view::build(hosts, &holds, &probes);
        match self.cluster_recently().await {
            Ok(cluster) => snapshot.view.osd_id_claims = crate::domain::cluster::destroyed_by_host(&cluster),
            // Planned without claims; a replaced OSD's id would not come back.
            Err(e) => tracing::warn!("planning without the cluster's destroyed OSD ids: {e}"),
        }
        Ok(snapshot)
    }
}

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod tests;
