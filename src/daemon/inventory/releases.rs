//! The release of each host's ceph-volume against the cluster's
//! (`domain::release_mismatch` decides): the flag on a host's row, the
//! `/healthz` warning listing every flagged host, and the event when a
//! host's release changes. The cluster's releases are the last
//! `ceph versions` read (`Cluster::releases_seen`), never read here: a
//! host listing or a liveness check must not wait for the monitors.

use super::Inventory;
use crate::domain::event::{EventKind, Level};
use crate::domain::release_mismatch::{release_mismatch, ReleaseMismatch};
use crate::store::ManagedHost;
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

    /// The warning `/healthz` lists: the flagged hosts, one line each.
    /// None when no host is flagged, or when the hosts cannot be read (said
    /// in the log: a liveness answer does not fail for it).
    pub async fn release_warning(&self) -> Option<HealthWarning> {
        let majors = self.cluster_majors();
        if majors.is_empty() {
            return None;
        }
        let hosts = match self.store.hosts_with_heads().await {
            Ok(hosts) => hosts,
            Err(e) => {
                tracing::warn!("cannot read the hosts for the release check: {e}");
                return None;
            }
        };
        let detail: Vec<String> = hosts
            .iter()
            .filter_map(|(h, head)| {
                let m = release_mismatch(head.as_ref()?.ceph_release.as_deref(), &majors)?;
                Some(format!("host {}: {}", h.name, m.message()))
            })
            .collect();
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

    /// Tells the event log that a host's ceph-volume is of another release
    /// than before (a package upgrade), or, with its first inventory, of a
    /// major the cluster does not run; a warning when it is flagged now.
    pub(super) async fn note_release_change(
        &self,
        host: &ManagedHost,
        before: Option<Option<&str>>,
        now: Option<&str>,
    ) {
        let flag = self.release_flag(now);
        let message = match (before, &flag) {
            (Some(before), _) if before != now => format!(
                "ceph-volume on {} is now Ceph {} (was {})",
                host.name,
                now.unwrap_or("of an unknown release"),
                before.unwrap_or("unknown")
            ),
            (None, Some(_)) => format!("ceph-volume on {} is Ceph {}", host.name, now.unwrap_or_default()),
            _ => return,
        };
        let (level, message) = match flag {
            Some(m) => (Level::Warning, format!("{message}; the cluster runs {}", m.cluster_runs())),
            None => (Level::Info, message),
        };
        self.events.record(level, EventKind::HostCephRelease, Some(&host.name), None, message).await;
    }
}
