//! The summary from memory: the counts of hosts, devices, holds and specs,
//! rebuilt when one of those changed in the store; the active removals
//! from the removals part; the OSD counts from the latest read of the
//! cluster (none, and why, when that read failed). Devices are counted
//! from the parsed inventories the daemon caches by fingerprint; an
//! inventory is read and parsed only when it changed since.

use std::collections::HashMap;

use super::hosts::{rows, HostRow};
use super::ReadModel;
use crate::daemon::cluster::Seen;
use crate::daemon::DaemonError;
use crate::store::HeldDevice;
use crate::wire::api::summary::Summary;

/// The summary with the counts from elsewhere put in.
pub fn compose(hosts: &Summary, active_removals: usize, cluster: &Seen) -> Summary {
    let mut s = Summary { active_removals, ..hosts.clone() };
    match (&cluster.latest_error, &cluster.good) {
        (None, Some((state, _))) => {
            let (n, up, is_in) = state.osd_counts();
            (s.osds, s.osds_up, s.osds_in) = (Some(n), Some(up), Some(is_in));
        }
        (Some((error, _)), _) => s.cluster_error = Some(error.clone()),
        (None, None) => s.cluster_error = Some("the cluster was not read yet".into()),
    }
    s
}

impl ReadModel {
    /// Everything but the OSD counts and the removals, and each host's row,
    /// from one read of the hosts with their inventories' heads.
    pub(super) async fn host_counts(&self) -> Result<(Summary, Vec<HostRow>), DaemonError> {
        // Independent reads: side by side, each on its own pooled connection.
        let (hosts, holds, specs) =
            tokio::try_join!(self.store.hosts_with_heads(), self.store.holds(), self.store.specs())?;
        let mut holds_by_host: HashMap<&str, Vec<&HeldDevice>> = HashMap::new();
        for h in &holds {
            holds_by_host.entry(h.host.as_str()).or_default().push(h);
        }
        let mut s = Summary {
            hosts: hosts.len(),
            unreachable_hosts: hosts
                .iter()
                .filter(|(h, _)| h.unreachable_since.is_some())
                .map(|(h, _)| h.name.clone())
                .collect(),
            held_devices: holds.len(),
            specs: specs.len(),
            ..Summary::default()
        };
        for (host, head) in &hosts {
            let Some(head) = head else {
                s.hosts_without_inventory += 1;
                continue;
            };
            let devices = match self.cache.cached(&host.name, &head.fingerprint) {
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
        Ok((s, rows(&hosts)))
    }
}
