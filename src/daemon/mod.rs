//! The long-running daemon, as services that each own their part and take
//! what they depend on when they are built (`Daemon::new`, the daemon's
//! wiring): the event log and live streams (`events`), the cluster as last
//! read (`cluster`), hosts and inventories (`inventory`), the read model
//! (`read_model`), specs, planning and the reconciler (`specs`), removals
//! (`removal`), deployments (`deploy`), swaps (`swap`), benchmarks and disk
//! probes (`bench`), API tokens (`tokens`); the durable ones run on the
//! operation kernel (`operations`), every background worker on one loop
//! (`worker`). Decisions live in `domain`; this module observes, persists
//! and acts. It knows nothing of HTTP: `app` wires it to `api`. Beside the
//! services: `audit` (who asked), `live` (the dashboards' stream messages),
//! `metrics` (what `/metrics` shows), `error` (`DaemonError`, by meaning).
//!
//! Services depend on each other one way, in the order `Daemon::new`
//! builds them: `events`, `cluster` ← `read_model` ← `inventory` ←
//! `specs`, `removals`, `benchmarks`; `removals` ← `swaps` ← `deployments`
//! (which make a swap's new OSDs and hold the `Swaps` service, reached as
//! `Daemon::swaps`). They wake each other's workers (`Arc<Worker>`) and
//! never reach into each other's fields.
//!
//! `Daemon` is a façade: the services, the workers, and what answers need
//! more than one service for (the workers' status, `/metrics`).

pub mod audit;
pub mod bench;
pub mod cluster;
pub mod deploy;
mod error;
pub mod events;
pub mod inventory;
pub mod live;
mod metrics;
mod operations;
pub mod read_model;
pub mod removal;
pub mod specs;
pub mod swap;
pub mod tokens;
mod worker;

pub use bench::OsdBenchRequest;
pub use error::{invalid_specs_message, DaemonError};
pub use metrics::{HostMetrics, MetricsView};
pub use worker::{paced, Pace, Worker};

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::clock::now_ms;
use crate::config::Config;
use crate::store::Store;
use crate::wire::api::workers::WorkerStatus;

/// The services, and the workers they run on.
pub struct Daemon {
    pub events: Arc<events::Events>,
    pub cluster: Arc<cluster::Cluster>,
    pub inventory: Arc<inventory::Inventory>,
    pub read_model: Arc<read_model::ReadModel>,
    pub specs: Arc<specs::Specs>,
    pub removals: Arc<removal::Removals>,
    pub deployments: Arc<deploy::Deployments>,
    pub benchmarks: Arc<bench::Benchmarks>,
    pub tokens: Arc<tokens::Tokens>,
    workers: Workers,
    #[cfg(test)]
    store: Store,
    #[cfg(test)]
    ceph: Arc<dyn CephCluster>,
    #[cfg(test)]
    config: Arc<Config>,
}

/// Every background worker: each service wakes the ones it feeds.
struct Workers {
    poller: Arc<Worker>,
    reconciler: Arc<Worker>,
    remover: Arc<Worker>,
    deployer: Arc<Worker>,
    swapper: Arc<Worker>,
    bencher: Arc<Worker>,
    model: Arc<Worker>,
    /// The reconciler runs only when the configuration says so.
    reconcile: bool,
}

/// How often at least the poller looks for hosts whose poll is due (each
/// host has its own interval and backoff; the poller looks sooner when the
/// next one is due sooner).
const POLL_TICK: Duration = Duration::from_secs(1);

/// How often the benchmark worker looks for queued work it was not woken
/// for (every request wakes it).
const BENCH_INTERVAL: Duration = Duration::from_secs(30);

impl Daemon {
    /// Builds every service on the store and the two adapters.
    pub fn new(store: Store, agents: Arc<dyn HostAgents>, ceph: Arc<dyn CephCluster>, config: Config) -> Arc<Daemon> {
        let config = Arc::new(config);
        let w = |name, interval| Arc::new(Worker::new(name, interval, config.max_backoff));
        let workers = Workers {
            poller: w("poller", POLL_TICK),
            reconciler: w("reconciler", config.reconcile_interval),
            remover: w("removals", config.removal_interval),
            deployer: w("deployments", config.removal_interval),
            swapper: w("swaps", config.removal_interval),
            bencher: w("benchmarks", BENCH_INTERVAL),
            model: w("read-model", cluster::CLUSTER_TTL),
            reconcile: config.reconcile,
        };
        let pace = operations::Backoff { interval: config.removal_interval, max: config.max_backoff };
        #[cfg(test)]
        let ceph_for_tests = ceph.clone();
        let cache = Arc::new(inventory::InventoryCache::default());
        let events = Arc::new(events::Events::new(store.clone()));
        let cluster = Arc::new(cluster::Cluster::new(ceph.clone()));
        let read_model = Arc::new(read_model::ReadModel::new(
            store.clone(),
            ceph.clone(),
            cluster.clone(),
            cache.clone(),
            events.clone(),
            config.stall_after,
            workers.model.clone(),
        ));
        let inventory = Arc::new(inventory::Inventory::new(
            store.clone(),
            agents.clone(),
            ceph.clone(),
            cluster.clone(),
            config.clone(),
            events.clone(),
            read_model.clone(),
            cache,
            (workers.poller.clone(), workers.reconciler.clone()),
        ));
        let specs = Arc::new(specs::Specs::new(
            store.clone(),
            events.clone(),
            cluster.clone(),
            inventory.clone(),
            read_model.clone(),
            workers.reconciler.clone(),
            workers.deployer.clone(),
            inventory.refresh_timeout(),
        ));
        let removals = Arc::new(removal::Removals::new(
            store.clone(),
            ceph.clone(),
            agents.clone(),
            events.clone(),
            cluster.clone(),
            inventory.clone(),
            read_model.clone(),
            workers.remover.clone(),
            config.max_draining,
            pace,
        ));
        let swaps = Arc::new(swap::Swaps::new(
            store.clone(),
            ceph.clone(),
            cluster.clone(),
            events.clone(),
            inventory.clone(),
            removals.clone(),
            workers.swapper.clone(),
            workers.deployer.clone(),
            pace,
        ));
        let deployments = Arc::new(deploy::Deployments::new(
            store.clone(),
            ceph.clone(),
            agents.clone(),
            events.clone(),
            inventory.clone(),
            read_model.clone(),
            workers.reconciler.clone(),
            pace,
            swaps,
        ));
        let benchmarks = Arc::new(bench::Benchmarks::new(
            store.clone(),
            ceph,
            agents,
            events.clone(),
            inventory.clone(),
            workers.bencher.clone(),
            workers.reconciler.clone(),
            pace,
        ));
        let tokens = Arc::new(tokens::Tokens::new(store.clone(), events.clone(), config.token.is_some()));
        Arc::new(Daemon {
            events,
            cluster,
            inventory,
            read_model,
            specs,
            removals,
            deployments,
            benchmarks,
            tokens,
            workers,
            #[cfg(test)]
            store,
            #[cfg(test)]
            ceph: ceph_for_tests,
            #[cfg(test)]
            config: config.clone(),
        })
    }

    /// Starts the background workers; they stop when `cancel` fires.
    pub fn spawn_workers(self: &Arc<Self>, cancel: &CancellationToken) -> Vec<tokio::task::JoinHandle<()>> {
        let w = &self.workers;
        let mut tasks = Vec::new();
        let (s, c) = (self.inventory.clone(), cancel.clone());
        let poller = w.poller.clone();
        tasks.push(tokio::spawn(async move { poller.run(c, || s.poll_due()).await }));
        if w.reconcile {
            let (s, c, worker) = (self.specs.clone(), cancel.clone(), w.reconciler.clone());
            tasks.push(tokio::spawn(async move { worker.run(c, || paced(s.reconcile_once())).await }));
        }
        let (s, c, worker) = (self.removals.clone(), cancel.clone(), w.remover.clone());
        tasks.push(tokio::spawn(async move { worker.run(c, || s.round()).await }));
        let (s, c, worker) = (self.deployments.clone(), cancel.clone(), w.deployer.clone());
        tasks.push(tokio::spawn(async move { worker.run(c, || s.round()).await }));
        let (s, c, worker) = (self.swaps().clone(), cancel.clone(), w.swapper.clone());
        tasks.push(tokio::spawn(async move { worker.run(c, || s.round()).await }));
        let (s, c, worker) = (self.benchmarks.clone(), cancel.clone(), w.bencher.clone());
        tasks.push(tokio::spawn(async move { worker.run(c, || paced(s.round())).await }));
        let (s, c, worker) = (self.read_model.clone(), cancel.clone(), w.model.clone());
        tasks.push(tokio::spawn(async move { worker.run(c, || s.round()).await }));
        let (s, c) = (self.read_model.clone(), cancel.clone());
        tasks.push(tokio::spawn(async move { s.wake_on_writes(c).await }));
        let (s, c) = (self.inventory.clone(), cancel.clone());
        tasks.push(tokio::spawn(async move { s.announce_polled_hosts(c).await }));
        tasks
    }

    /// What `/metrics` shows, all from memory.
    pub async fn metrics_view(&self) -> Result<MetricsView, DaemonError> {
        let removals = self.read_model.removals_view().await?.snapshot.value.active().to_vec();
        let hosts = self.read_model.host_metrics(now_ms(), &self.inventory.poll_errors()).await?;
        Ok(MetricsView { removals, hosts, workers: self.workers() })
    }

    /// `/healthz`: whether the cluster answered (never asked here) and the
    /// daemon's own warnings (the hosts' ceph-volume releases), all from
    /// memory the workers keep: neither the store nor the cluster is read.
    pub fn health(&self) -> crate::wire::api::error::Health {
        crate::wire::api::error::Health {
            status: "ok".into(),
            ceph: self.cluster.health(),
            warnings: self.inventory.release_warning().into_iter().collect(),
        }
    }

    /// The health strip's answer: the cluster's status and releases, and
    /// the daemon's own warnings beside its checks.
    pub async fn cluster_status(&self) -> crate::wire::api::cluster::ClusterStatus {
        let mut status = self.cluster.status().await;
        status.warnings = self.inventory.release_warning().into_iter().collect();
        status
    }

    /// How each background worker fares.
    pub fn workers(&self) -> Vec<WorkerStatus> {
        let w = &self.workers;
        [&w.poller, &w.reconciler, &w.remover, &w.deployer, &w.swapper, &w.bencher, &w.model]
            .iter()
            .map(|w| w.status())
            .collect()
    }

    /// Swaps (their service hangs off the deployments', which make their
    /// new OSDs: `Daemon` keeps to ten services).
    pub fn swaps(&self) -> &Arc<swap::Swaps> {
        self.deployments.swaps()
    }
}

#[cfg(test)]
impl Daemon {
    fn ceph(&self) -> &dyn CephCluster {
        &*self.ceph
    }

    fn config(&self) -> &Config {
        &self.config
    }
}

#[cfg(test)]
mod tests;
