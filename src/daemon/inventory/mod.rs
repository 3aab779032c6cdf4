//! Hosts and their devices: adding, removing and labelling hosts
//! (`hosts.rs`; from an applied file's host specs, `host_specs.rs`), keeping every host's inventory fresh (`poller.rs`), the
//! parsed inventories planning reads (`view.rs`, the cache), wiping a
//! device and the holds that keep freed devices from specs (`devices.rs`),
//! the device listing (`listing.rs`), each host's ceph-volume release
//! against the cluster's (`releases.rs`), and the slots `device replace`
//! holds until a new disk is in them (`slots.rs`), marked meanwhile with
//! ceph-volume's "being replaced" header (`replace_header.rs`).

mod devices;
mod host_specs;
mod hosts;
mod listing;
mod poller;
mod releases;
mod replace_header;
mod slots;
pub mod view;

pub use hosts::{check_addr, check_host_name, check_label};
pub use view::InventoryCache;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::cluster::Cluster;
use super::events::Events;
use super::live::{Live, PolledHosts};
use super::read_model::ReadModel;
use super::Worker;
use crate::agent_client::HostAgents;
use crate::ceph::CephCluster;
use crate::config::Config;
use crate::store::Store;

pub struct Inventory {
    store: Store,
    agents: Arc<dyn HostAgents>,
    ceph: Arc<dyn CephCluster>,
    /// The releases the cluster runs, for the hosts' release check (`releases.rs`).
    cluster: Arc<Cluster>,
    config: Arc<Config>,
    events: Arc<Events>,
    read_model: Arc<ReadModel>,
    cache: Arc<InventoryCache>,
    workers: Wakes,
    polls: Polls,
}

/// The workers this service wakes.
struct Wakes {
    /// Looks for hosts whose poll is due; woken by a new host.
    poller: Arc<Worker>,
    /// Woken by a changed inventory, a label, a released device.
    reconciler: Arc<Worker>,
}

/// What the polls of hosts share.
#[derive(Default)]
struct Polls {
    /// Failed polls per host since start (for /metrics).
    errors: Mutex<HashMap<String, u64>>,
    /// Serializes polls of one host (a refresh and the poller must not race).
    locks: tokio::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Hosts polled since the last `Hosts` message (sent in batches).
    polled: PolledHosts,
    /// The hosts whose release was flagged at the last round (`releases.rs`).
    flagged: releases::Flagged,
    /// The being-replaced headers that changed inventories find due
    /// (`replace_header.rs`).
    headers: Arc<replace_header::Headers>,
}

/// How often the names of polled hosts go out together.
const HOSTS_TICK: Duration = Duration::from_millis(250);

impl Inventory {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        agents: Arc<dyn HostAgents>,
        ceph: Arc<dyn CephCluster>,
        cluster: Arc<Cluster>,
        config: Arc<Config>,
        events: Arc<Events>,
        read_model: Arc<ReadModel>,
        cache: Arc<InventoryCache>,
        (poller, reconciler): (Arc<Worker>, Arc<Worker>),
    ) -> Inventory {
        Inventory {
            store,
            agents,
            ceph,
            cluster,
            config,
            events,
            read_model,
            cache,
            workers: Wakes { poller, reconciler },
            polls: Polls::default(),
        }
    }

    /// How long `--refresh` waits for the agents.
    pub fn refresh_timeout(&self) -> Duration {
        self.config.poll_timeout + Duration::from_secs(5)
    }

    async fn poll_lock(&self, host: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.polls.locks.lock().await.entry(host.to_string()).or_default().clone()
    }

    /// Failed polls per host since start.
    pub fn poll_errors(&self) -> HashMap<String, u64> {
        self.polls.errors.lock().expect("counter lock").clone()
    }

    #[cfg(test)]
    pub fn cache(&self) -> &InventoryCache {
        &self.cache
    }

    #[cfg(test)]
    pub fn take_polled(&self) -> Vec<String> {
        self.polls.polled.take()
    }

    /// Sends the polled hosts every tick until cancelled, then once more so
    /// that nothing noted is dropped. The read model is refreshed first: a
    /// dashboard refetching on the message sees what it announces.
    pub async fn announce_polled_hosts(&self, cancel: CancellationToken) {
        loop {
            let stop = tokio::select! {
                _ = cancel.cancelled() => true,
                _ = tokio::time::sleep(HOSTS_TICK) => false,
            };
            let hosts = self.polls.polled.take();
            if !hosts.is_empty() {
                self.read_model.notify_current(Live::Hosts { hosts }).await;
            }
            if stop {
                return;
            }
        }
    }
}
