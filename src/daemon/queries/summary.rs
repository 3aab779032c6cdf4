//! The counts a dashboard's header shows, in one cheap call at thousands
//! of hosts. Devices are counted from the parsed inventories the daemon
//! caches (by fingerprint); an inventory is read and parsed only when it
//! changed since it was last parsed. The OSD counts come from one read of
//! the cluster (four `ceph` commands on a real one), shared by every
//! request for `CLUSTER_TTL`: dashboards ask for the summary after every
//! host poll, and the monitors should not answer each of them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError};
use crate::wire::api::devices::Hold;
use crate::wire::api::error::CephHealth;
use crate::wire::api::summary::Summary;

/// How long one read of the cluster answers every summary.
pub const CLUSTER_TTL: Duration = Duration::from_secs(5);

/// The last read of the cluster, or why it failed.
type Read = Result<Arc<ClusterState>, String>;

/// The last read of the cluster, shared by the summary and the dry-run's
/// OSD id claims.
#[derive(Default)]
pub struct ClusterCache {
    last: tokio::sync::Mutex<Option<(Instant, Read)>>,
    /// The outcome of the last read, for `/healthz`, which must answer at
    /// once and so never waits for a read under way.
    outcome: std::sync::Mutex<Option<CephHealth>>,
    /// The last `ceph status`, for the health strip (`cluster_status.rs`).
    pub(super) status: tokio::sync::Mutex<super::cluster_status::StatusRead>,
}

impl Daemon {
    pub async fn summary(&self) -> Result<Summary, DaemonError> {
        let (counts, summary) = tokio::join!(self.osd_counts(), self.store_counts());
        let mut s = summary?;
        match counts {
            Ok((n, up, is_in)) => (s.osds, s.osds_up, s.osds_in) = (Some(n), Some(up), Some(is_in)),
            Err(e) => s.cluster_error = Some(e),
        }
        Ok(s)
    }

    /// The cluster, read again when older than `CLUSTER_TTL`. Requests that
    /// arrive during a read wait for it instead of starting their own.
    pub(crate) async fn cluster_recently(&self) -> Read {
        let mut last = self.cluster.last.lock().await;
        if let Some((at, read)) = last.as_ref() {
            if at.elapsed() < CLUSTER_TTL {
                return read.clone();
            }
        }
        let read = self.ceph.state().await.map(Arc::new).map_err(|e| format!("cannot read the cluster: {e}"));
        *last = Some((Instant::now(), read.clone()));
        let outcome = CephHealth { connected: read.is_ok(), checked_at: Some(now_ms()), error: read.clone().err() };
        *self.cluster.outcome.lock().expect("ceph health lock") = Some(outcome);
        read
    }

    /// Whether the cluster answered the last time it was asked (not asked
    /// again here: liveness checks must not reach the monitors).
    pub fn ceph_health(&self) -> CephHealth {
        self.cluster.outcome.lock().expect("ceph health lock").clone().unwrap_or(CephHealth {
            connected: false,
            checked_at: None,
            error: Some("not checked yet".into()),
        })
    }

    /// At start: reads the cluster once and says whether that worked. The
    /// daemon serves either way (hosts, inventories and dry-runs need no
    /// cluster); without one, OSD lists, removals and deployments fail
    /// until it answers, and `/healthz` and the summary say why.
    pub async fn check_ceph(&self) {
        match self.cluster_recently().await {
            Ok(state) => {
                let (n, up, _) = state.osd_counts();
                tracing::info!(osds = n, up, "connected to the Ceph cluster");
            }
            Err(e) => tracing::warn!(
                "{e}; OSD lists, removals and deployments will fail until the cluster answers \
                 (--ceph-conf, CEPH_CONF, or ceph.conf in the config file)"
            ),
        }
    }

    async fn osd_counts(&self) -> Result<(usize, usize, usize), String> {
        self.cluster_recently().await.map(|s| s.osd_counts())
    }

    /// Everything but the OSD counts.
    async fn store_counts(&self) -> Result<Summary, DaemonError> {
        // Independent reads: side by side, each on its own pooled connection.
        let (hosts, fingerprints, holds, active, specs) = tokio::try_join!(
            self.store.hosts(),
            self.store.inventory_fingerprints(),
            self.store.holds(),
            self.store.active_removals(),
            self.store.specs(),
        )?;
        let fingerprints: HashMap<String, String> = fingerprints.into_iter().collect();
        let mut holds_by_host: HashMap<&str, Vec<&Hold>> = HashMap::new();
        for h in &holds {
            holds_by_host.entry(h.host.as_str()).or_default().push(h);
        }
        let mut s = Summary {
            hosts: hosts.len(),
            unreachable_hosts: hosts.iter().filter(|h| h.unreachable_since.is_some()).map(|h| h.name.clone()).collect(),
            held_devices: holds.len(),
            active_removals: active.len(),
            specs: specs.len(),
            ..Summary::default()
        };
        for host in &hosts {
            let Some(fp) = fingerprints.get(&host.name) else {
                s.hosts_without_inventory += 1;
                continue;
            };
            let devices = match self.cache.cached(&host.name, fp) {
                Some(devices) => devices,
                // Changed since it was last parsed (or never parsed): read it once.
                None => match self.store.inventory(&host.name).await? {
                    Some(inv) => self.cache.devices(&inv).map_err(DaemonError::Internal)?,
                    None => {
                        s.hosts_without_inventory += 1;
                        continue;
                    }
                },
            };
            let held = holds_by_host.get(host.name.as_str()).map(Vec::as_slice).unwrap_or_default();
            s.devices += devices.len();
            s.available_devices += devices
                .iter()
                .filter(|dev| dev.available && !held.iter().any(|h| h.covers(&host.name, &dev.path, &dev.device_id)))
                .count();
        }
        Ok(s)
    }
}
