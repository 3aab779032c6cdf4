//! `GET /api/v1/summary`: the counts a dashboard's header shows, in one
//! cheap call at thousands of hosts. Devices are counted from the parsed
//! inventories the daemon caches (by fingerprint); an inventory is read and
//! parsed only when it changed since it was last parsed. The OSD counts come
//! from one read of the cluster (four `ceph` commands on a real one), shared
//! by every request for `CLUSTER_TTL`: dashboards ask for the summary after
//! every host poll, and the monitors should not answer each of them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::{Extension, Json};
use serde::Serialize;

use super::error::ApiError;
use crate::ceph::ClusterState;
use crate::daemon::{Daemon, DaemonError};
use crate::store::Hold;

/// How long one read of the cluster answers every summary.
pub const CLUSTER_TTL: Duration = Duration::from_secs(5);

/// (OSDs, up, in) of the last read of the cluster, or why it failed.
type OsdCounts = Result<(usize, usize, usize), String>;

/// The last read of the cluster's OSD counts, shared by all summary requests.
#[derive(Default)]
pub struct ClusterCounts {
    last: tokio::sync::Mutex<Option<(Instant, OsdCounts)>>,
}

impl ClusterCounts {
    /// The counts, read again when older than `CLUSTER_TTL`. Requests that
    /// arrive during a read wait for it instead of starting their own.
    async fn get(&self, d: &Daemon) -> OsdCounts {
        let mut last = self.last.lock().await;
        if let Some((at, counts)) = last.as_ref() {
            if at.elapsed() < CLUSTER_TTL {
                return counts.clone();
            }
        }
        let counts = d.ceph.state().await.map(|s| osd_counts(&s)).map_err(|e| format!("cannot read the cluster: {e}"));
        *last = Some((Instant::now(), counts.clone()));
        counts
    }
}

/// Destroyed OSDs (ids kept for a replacement disk) are not counted.
fn osd_counts(state: &ClusterState) -> (usize, usize, usize) {
    let (mut n, mut up, mut is_in) = (0, 0, 0);
    for o in state.osds.iter().filter(|o| !o.destroyed) {
        n += 1;
        up += usize::from(o.up);
        is_in += usize::from(o.is_in);
    }
    (n, up, is_in)
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Summary {
    pub hosts: usize,
    /// The hosts whose agent does not answer, in the order they were added.
    pub unreachable_hosts: Vec<String>,
    /// How many hosts have no inventory yet (their agent never answered); left out of planning.
    pub hosts_without_inventory: usize,
    /// Devices in the stored inventories.
    pub devices: usize,
    /// Devices ceph-volume reports available that osdkeeper does not hold: what a spec could use.
    pub available_devices: usize,
    /// Devices held back from every spec until released (`/api/v1/devices/held`).
    pub held_devices: usize,
    /// OSDs in the cluster, destroyed ones left out; null when the cluster
    /// cannot be read. The three OSD counts may be up to 5 s old.
    pub osds: Option<usize>,
    pub osds_up: Option<usize>,
    pub osds_in: Option<usize>,
    /// Why the OSD counts are null.
    pub cluster_error: Option<String>,
    /// Removals not finished yet.
    pub active_removals: usize,
    /// Stored specs.
    pub specs: usize,
}

#[utoipa::path(get, path = "/api/v1/summary", tag = "summary", responses((status = 200, body = Summary)))]
pub async fn summary(
    State(d): State<Arc<Daemon>>,
    Extension(cluster): Extension<Arc<ClusterCounts>>,
) -> Result<Json<Summary>, ApiError> {
    let (counts, summary) = tokio::join!(cluster.get(&d), store_counts(&d));
    let mut s = summary?;
    match counts {
        Ok((n, up, is_in)) => (s.osds, s.osds_up, s.osds_in) = (Some(n), Some(up), Some(is_in)),
        Err(e) => s.cluster_error = Some(e),
    }
    Ok(Json(s))
}

/// Everything but the OSD counts.
async fn store_counts(d: &Daemon) -> Result<Summary, ApiError> {
    // Independent reads: side by side, each on its own pooled connection.
    let (hosts, fingerprints, holds, active, specs) = tokio::try_join!(
        d.store.hosts(),
        d.store.inventory_fingerprints(),
        d.store.holds(),
        d.store.active_removals(),
        d.store.specs(),
    )?;
    let fingerprints: HashMap<String, String> = fingerprints.into_iter().collect();
    let mut holds_by_host: HashMap<&str, Vec<&Hold>> = HashMap::new();
    for h in &holds {
        holds_by_host.entry(h.host.as_str()).or_default().push(h);
    }
    let mut s = Summary {
        hosts: hosts.len(),
        unreachable_hosts: hosts.iter().filter(|h| h.unreachable_since.is_some()).map(|h| h.name.clone()).collect(),
        hosts_without_inventory: 0,
        devices: 0,
        available_devices: 0,
        held_devices: holds.len(),
        osds: None,
        osds_up: None,
        osds_in: None,
        cluster_error: None,
        active_removals: active.len(),
        specs: specs.len(),
    };
    for host in &hosts {
        let Some(fp) = fingerprints.get(&host.name) else {
            s.hosts_without_inventory += 1;
            continue;
        };
        let devices = match d.cache.cached(&host.name, fp) {
            Some(devices) => devices,
            // Changed since it was last parsed (or never parsed): read it once.
            None => match d.store.inventory(&host.name).await? {
                Some(inv) => d.cache.devices(&inv).map_err(DaemonError::Internal)?,
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
