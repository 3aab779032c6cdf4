//! Every host's devices as its agent last reported them, with the
//! inventory's age, the holds and each disk's probes; optionally polled first.

use super::Inventory;
use crate::clock::now_ms;
use crate::daemon::bench::probe_statuses;
use crate::daemon::deploy::deploy_failures;
use crate::daemon::DaemonError;
use crate::wire::api::hosts::{Host, HostQuery};

use crate::domain::probe::{aliases, DiskKey};
use crate::wire::api::devices::{DeviceProbe, DeviceQuery, Hold, HostDevices, InventoryInfo};
use crate::wire::api::Page;
use crate::wire::device_listing::device_rows;

impl Inventory {
    /// Hosts, filtered and paged.
    pub async fn hosts(&self, q: &HostQuery) -> Result<Page<Host>, DaemonError> {
        let mut hosts = self.store.hosts_with_heads().await?;
        if let Some(down) = q.unreachable {
            hosts.retain(|(h, _)| h.unreachable_since.is_some() == down);
        }
        let rows = hosts.into_iter().map(|(h, head)| {
            let ceph_release = head.and_then(|i| i.ceph_release);
            let release_mismatch = self.release_flag(ceph_release.as_deref()).map(|m| m.message());
            Host { ceph_release, release_mismatch, ..Host::from(h) }
        });
        Ok(Page::of(rows.collect(), q.offset, q.limit))
    }

    pub async fn devices(&self, q: &DeviceQuery) -> Result<Page<HostDevices>, DaemonError> {
        let mut hosts = self.store.hosts().await?;
        if let Some(only) = &q.host {
            hosts.retain(|h| h.name == *only);
            if hosts.is_empty() {
                return Err(DaemonError::NotFound(format!("unknown host {only}")));
            }
        }
        if let Some(text) = &q.q {
            hosts.retain(|h| h.name.contains(text.as_str()));
        }
        let Page { items: mut hosts, total } = Page::of(hosts, q.offset, q.limit);
        let mut failures = Vec::new();
        if q.refresh {
            let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
            failures = self.refresh(&names, self.refresh_timeout()).await?;
            let fresh = self.store.hosts().await?;
            hosts = fresh.into_iter().filter(|h| names.contains(&h.name)).collect();
        }
        let holds = self.store.holds().await?;
        let deploy_failures = deploy_failures(&self.store).await?;
        let probes = probe_statuses(&self.store).await?;
        let now = now_ms();
        let mut out = Vec::with_capacity(hosts.len());
        for h in hosts {
            let inv = self.store.inventory(&h.name).await?;
            let mut devices = match &inv {
                Some(i) => device_rows(&i.devices)
                    .map_err(|e| DaemonError::Internal(format!("stored inventory of {}: {e}", h.name)))?,
                None => Vec::new(),
            };
            for d in &mut devices {
                d.held = holds.iter().find(|x| x.covers(&h.name, &d.path, &d.device_id)).map(|x| x.reason.clone());
                d.deploy_failure = deploy_failures.get(&(h.name.clone(), d.path.clone())).cloned();
                let key = DiskKey::of(&h.name, &d.path, &d.device_id);
                d.probe = aliases::find(&probes, &key).map(|p| DeviceProbe {
                    probe_id: p.done.as_ref().map(|x| x.probe_id),
                    mode: p.done.as_ref().map(|x| x.mode),
                    figures: p.done.as_ref().map(|x| x.figures.into()),
                    finished_at: p.done.as_ref().map(|x| x.finished_at),
                    outlier: p.done.as_ref().and_then(|x| x.outlier.clone()),
                    pending: p.pending,
                    failure: p.failure.clone(),
                    by_slot: key.by_slot(),
                });
            }
            devices.sort_by(|a, b| a.path.cmp(&b.path));
            let release_mismatch =
                self.release_flag(inv.as_ref().and_then(|i| i.ceph_release.as_deref())).map(|m| m.message());
            out.push(HostDevices {
                release_mismatch,
                refresh_error: failures.iter().find(|(n, _)| *n == h.name).map(|(_, e)| e.clone()),
                host: h.name,
                addr: h.addr,
                unreachable_since: h.unreachable_since,
                last_error: h.last_error,
                inventory: inv.map(|i| InventoryInfo {
                    taken_at: i.taken_at,
                    age_s: (now - i.taken_at) as f64 / 1000.0,
                    source: i.source,
                    can_create_osds: i.can_create_osds,
                    note: i.note,
                    ceph_release: i.ceph_release,
                }),
                devices,
            });
        }
        Ok(Page { items: out, total })
    }

    pub async fn held_devices(&self) -> Result<Vec<Hold>, DaemonError> {
        Ok(self.store.holds().await?.into_iter().map(Hold::from).collect())
    }
}
