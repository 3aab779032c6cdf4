//! The release of each host's ceph-volume against the cluster's
//! (`domain::release_mismatch` decides): the flag on a host's row, the
//! `/healthz` warning listing every flagged host (kept from the last look), the events when a host's
//! release changes and when a host becomes flagged or is no longer. The cluster's releases are the last
//! `ceph versions` read (`Cluster::releases_seen`), never read here: a
//! host listing or a liveness check must not wait for the monitors.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Inventory;
use crate::daemon::DaemonError;
use crate::domain::event::{EventKind, Level};
use crate::domain::release_mismatch::{release_mismatch, ReleaseMismatch};
use crate::store::{ManagedHost, NewEvent};
use crate::wire::api::error::HealthWarning;

/// The `/healthz` warning's code, in the style of Ceph's health checks.
pub const RELEASE_MISMATCH: &str = "OSDKEEPER_CEPH_VOLUME_RELEASE";

impl Inventory {
    /// The majors the cluster's daemons run, as last read; empty before the
    /// first read or after a failed one (nothing is flagged then).
    fn cluster_majors(&self) -> Vec<u32> {
        match self.cluster.releases_seen() {
            Some(Ok(releases)) => releases.iter().map(|(r, _)| r.release.major()).collect(),
            _ => Vec::new(),
        }
    }

    /// Why a host whose agent reported `release` is flagged, if it is.
    pub(super) fn release_flag(&self, release: Option<&str>) -> Option<ReleaseMismatch> {
        release_mismatch(release, &self.cluster_majors())
    }

    /// The warning `/healthz` lists: the flagged hosts, one line each, as
    /// of the last look (`note_release_flags`, after each poll round): read
    /// from memory, never the store, so that a liveness check costs the same
    /// at any fleet size. None when no host is flagged, or while the
    /// cluster's releases are not known.
    pub fn release_warning(&self) -> Option<HealthWarning> {
        if self.cluster_majors().is_empty() {
            return None;
        }
        self.polls.flagged.lock().expect("flagged lock").warning.clone()
    }

    /// A removed host is no longer flagged (its poll round will not come).
    pub(super) fn forget_release_flag(&self, name: &str) {
        let mut flagged = self.polls.flagged.lock().expect("flagged lock");
        if let Some(hosts) = flagged.hosts.as_mut() {
            hosts.remove(name);
            flagged.warning = warning_of(flagged.hosts.as_ref());
        }
    }

    /// The event that tells that a host's ceph-volume is of another release
    /// than before (a package upgrade); whether that flags it is told by
    /// `note_release_flags`.
    pub(super) fn release_change(
        &self,
        host: &ManagedHost,
        before: Option<Option<&str>>,
        now: Option<&str>,
    ) -> Option<NewEvent> {
        let before = before.filter(|b| *b != now)?;
        let message = format!(
            "ceph-volume on {} is now Ceph {} (was {})",
            host.name,
            now.unwrap_or("of an unknown release"),
            before.unwrap_or("unknown")
        );
        Some(self.events.host_event(EventKind::HostCephRelease, &host.name, message))
    }

    /// Tells the event log of each host that became flagged (a warning) or
    /// is no longer (info) since the last look, whether its packages or the
    /// cluster changed (an upgrade ending flags the hosts left behind). The
    /// first look after the daemon starts only remembers: the flagged hosts
    /// are in `/healthz` already. Nothing is looked at while the cluster's
    /// releases are not known.
    pub async fn note_release_flags(&self) -> Result<(), DaemonError> {
        let majors = self.cluster_majors();
        if majors.is_empty() {
            return Ok(());
        }
        let hosts = self.store.hosts_with_heads().await?;
        let now: BTreeMap<String, ReleaseMismatch> = hosts
            .iter()
            .filter_map(|(h, head)| {
                Some((h.name.clone(), release_mismatch(head.as_ref()?.ceph_release.as_deref(), &majors)?))
            })
            .collect();
        let before = {
            let mut flagged = self.polls.flagged.lock().expect("flagged lock");
            flagged.warning = warning_of(Some(&now));
            flagged.hosts.replace(now.clone())
        };
        let Some(before) = before else { return Ok(()) };
        for (name, m) in now.iter().filter(|(name, _)| !before.contains_key(*name)) {
            let message = format!("Host {name} is flagged: {}", m.message());
            self.events.record(Level::Warning, EventKind::HostCephRelease, Some(name), None, message).await;
        }
        let kept = |name: &String| hosts.iter().any(|(h, _)| h.name == *name);
        for name in before.keys().filter(|name| !now.contains_key(*name) && kept(name)) {
            let message = format!("Host {name} is no longer flagged: its ceph-volume is of a release the cluster runs");
            self.events.record(Level::Info, EventKind::HostCephRelease, Some(name), None, message).await;
        }
        Ok(())
    }
}

/// The hosts flagged at the last look (`note_release_flags`; None before
/// it) and the `/healthz` warning that lists them.
#[derive(Default)]
pub(super) struct FlaggedHosts {
    hosts: Option<BTreeMap<String, ReleaseMismatch>>,
    warning: Option<HealthWarning>,
}

pub(super) type Flagged = Mutex<FlaggedHosts>;

/// The warning listing `flagged`, one line per host; None when none is.
fn warning_of(flagged: Option<&BTreeMap<String, ReleaseMismatch>>) -> Option<HealthWarning> {
    let detail: Vec<String> = flagged?.iter().map(|(name, m)| format!("host {name}: {}", m.message())).collect();
    if detail.is_empty() {
        return None;
    }
    let n = detail.len();
    Some(HealthWarning {
        code: RELEASE_MISMATCH.into(),
        severity: "HEALTH_WARN".into(),
        message: format!(
            "{n} host{} with ceph-volume of a major release the cluster does not run",
            if n == 1 { "" } else { "s" }
        ),
        detail,
    })
}
