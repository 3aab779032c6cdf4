//! The daemon's picture of the cluster for planning: hosts in the order they
//! were added, each with its latest inventory (parsed once per change and
//! cached), held devices and each disk's probes marked, and each spec's OSD count per host taken
//! from the OSD volumes the inventories show.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::daemon::DaemonError;
use crate::domain::inventory::{ClusterView, Device, HostInventory};
use crate::domain::probe::{aliases, DiskKey, ProbeStatus};
use crate::store::{HeldDevice, ManagedHost};
use crate::store::{InventoryHead, StoredInventory};
use crate::wire::ceph_volume::parse_device_list;

/// Parsed inventories by host, keyed by fingerprint.
/// (fingerprint, parsed devices)
type Cached = (String, Arc<Vec<Device>>);

#[derive(Default)]
pub struct InventoryCache {
    parsed: Mutex<HashMap<String, Cached>>,
}

impl InventoryCache {
    /// The parsed devices of a stored inventory (parsing at most once per change).
    pub fn devices(&self, inv: &StoredInventory) -> Result<Arc<Vec<Device>>, String> {
        if let Some((fp, devices)) = self.parsed.lock().expect("cache lock").get(&inv.host) {
            if *fp == inv.fingerprint {
                return Ok(devices.clone());
            }
        }
        let devices = Arc::new(
            parse_device_list(inv.devices.as_bytes()).map_err(|e| format!("stored inventory of {}: {e}", inv.host))?,
        );
        self.parsed.lock().expect("cache lock").insert(inv.host.clone(), (inv.fingerprint.clone(), devices.clone()));
        Ok(devices)
    }

    /// Keeps a parse made elsewhere (the poller parses what it stores).
    pub fn insert(&self, host: &str, fingerprint: &str, devices: Arc<Vec<Device>>) {
        self.parsed.lock().expect("cache lock").insert(host.to_string(), (fingerprint.to_string(), devices));
    }

    /// The parsed devices of `host`'s inventory if the cache holds the one
    /// with this fingerprint (no parsing, no stored text needed).
    pub fn cached(&self, host: &str, fingerprint: &str) -> Option<Arc<Vec<Device>>> {
        match self.parsed.lock().expect("cache lock").get(host) {
            Some((fp, devices)) if fp == fingerprint => Some(devices.clone()),
            _ => None,
        }
    }

    pub fn forget(&self, host: &str) {
        self.parsed.lock().expect("cache lock").remove(host);
    }
}

/// What the daemon knows about a host besides its devices.
#[derive(Debug, Clone)]
pub struct HostState {
    pub host: ManagedHost,
    pub inventory: Option<InventoryHead>,
}

/// A planning view plus the per-host facts a dry-run reports.
pub struct Snapshot {
    pub view: ClusterView,
    pub hosts: Vec<HostState>,
}

impl Snapshot {
    /// Hosts known to the daemon that have no inventory yet (left out of planning).
    pub fn without_inventory(&self) -> Vec<&str> {
        self.hosts.iter().filter(|h| h.inventory.is_none()).map(|h| h.host.name.as_str()).collect()
    }
}

/// A device's place in its host's list, its hold's reason and its probe.
type Mark = (usize, Option<Arc<str>>, Option<Arc<ProbeStatus>>);

/// A stored inventory's head and its parsed devices.
pub type Parsed = (InventoryHead, Arc<Vec<Device>>);

/// Builds the planning view from every host, in the order they were
/// added, with its inventory. Hosts without one are left out (cephadm
/// refuses to plan them: "No inventory found for host").
pub fn build(
    hosts: Vec<(ManagedHost, Option<Parsed>)>,
    holds: &[HeldDevice],
    probes: &HashMap<String, Arc<ProbeStatus>>,
) -> Snapshot {
    let mut holds_by_host: HashMap<&str, Vec<&HeldDevice>> = HashMap::new();
    for h in holds {
        holds_by_host.entry(h.host.as_str()).or_default().push(h);
    }
    let mut view = ClusterView::default();
    let mut states = Vec::with_capacity(hosts.len());
    for (host, parsed) in hosts {
        let mut inventory = None;
        if let Some((head, parsed)) = parsed {
            inventory = Some(head);
            let held = holds_by_host.get(host.name.as_str()).map(Vec::as_slice).unwrap_or_default();
            // The cached parse is shared; only a host with a held or probed
            // disk gets its own copy to mark them in.
            let marks: Vec<Mark> = parsed
                .iter()
                .enumerate()
                .filter_map(|(i, d)| {
                    let hold = held.iter().find(|h| h.covers(&host.name, &d.path, &d.device_id));
                    let probe = match probes.is_empty() {
                        true => None,
                        false => aliases::find(probes, &DiskKey::of(&host.name, &d.path, &d.device_id)).cloned(),
                    };
                    (hold.is_some() || probe.is_some()).then(|| (i, hold.map(|h| Arc::from(h.reason.as_str())), probe))
                })
                .collect();
            let mut devices = parsed;
            if !marks.is_empty() {
                let own = Arc::make_mut(&mut devices);
                for (i, hold, probe) in marks {
                    own[i].held = hold;
                    own[i].probe = probe;
                }
            }
            let hi = HostInventory { name: host.name.clone(), labels: host.labels.clone(), devices };
            for (affinity, n) in hi.osds_by_affinity() {
                view.existing_daemons.entry(affinity).or_default().insert(host.name.clone(), n);
            }
            view.hosts.push(hi);
        }
        states.push(HostState { host, inventory });
    }
    Snapshot { view, hosts: states }
}

impl super::Inventory {
    /// The parsed devices of a stored inventory (parsed at most once per change).
    pub fn parsed(&self, inv: &StoredInventory) -> Result<Arc<Vec<Device>>, String> {
        self.cache.devices(inv)
    }

    /// Every host with its inventory's head and parsed devices: from the
    /// cache, and only those changed since they were parsed (or never
    /// parsed since the start) read from the store.
    pub async fn parsed_inventories(&self) -> Result<Vec<(ManagedHost, Option<Parsed>)>, DaemonError> {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::inventory::DeviceReport;

    fn head(host: &str) -> InventoryHead {
        InventoryHead {
            host: host.into(),
            taken_at: 1,
            received_at: 1,
            source: "test".into(),
            can_create_osds: true,
            note: None,
            fingerprint: "f".into(),
            ceph_release: None,
        }
    }

    #[test]
    fn a_host_shares_the_cached_parse_unless_one_of_its_disks_is_held() {
        let disk = |path: &str| {
            Device::from(DeviceReport { path: Arc::from(path), device_id: "id".into(), ..DeviceReport::default() })
        };
        let parsed = Arc::new(vec![disk("/dev/sda"), disk("/dev/sdb")]);
        let hosts = ["a", "b"].map(|n| (ManagedHost::unpolled(n, "x:1"), Some((head(n), parsed.clone())))).to_vec();
        let hold = HeldDevice {
            host: "b".into(),
            path: "/dev/sdb".into(),
            reason: "zapped".into(),
            since: 0,
            device_id: None,
            waits_for_slot: None,
        };
        let snap = build(hosts, &[hold], &HashMap::new());
        let (a, b) = (&snap.view.hosts[0], &snap.view.hosts[1]);
        assert!(Arc::ptr_eq(&a.devices, &parsed), "host a has no hold: no copy");
        assert!(a.devices.iter().all(|d| d.held.is_none()));
        assert!(!Arc::ptr_eq(&b.devices, &parsed));
        assert_eq!(b.devices.iter().map(|d| d.held.as_deref()).collect::<Vec<_>>(), [None, Some("zapped")]);
        // The cache's parse is left unmarked for the next view.
        assert!(parsed.iter().all(|d| d.held.is_none()));
    }
}
