//! Which Ceph releases the cluster's daemons run (`ceph versions`): read
//! when the daemon starts and then at most once per `RELEASES_TTL` when
//! the health strip asks or an inventory round ends (a release changes
//! only with an upgrade, and every `ceph` call is a CLI start). `/healthz` answers from the last
//! read without asking. During an upgrade the cluster runs two or more
//! releases; each is listed with how many daemons run it.

use std::time::Duration;

use tokio::time::Instant;

use super::Cluster;
use crate::ceph::CephRelease;
use crate::domain::ceph_release::Release;
use crate::wire::api::error::RunningRelease;

/// How long one `ceph versions` answers.
pub const RELEASES_TTL: Duration = Duration::from_secs(300);

/// The releases and their daemon counts, oldest first, or why they could not be read.
pub type ReleasesRead = Result<Vec<(CephRelease, u64)>, String>;

/// The last read and when it was made.
#[derive(Default)]
pub struct Releases {
    /// Held while reading, so that requests arriving meanwhile wait for it.
    reading: tokio::sync::Mutex<Option<Instant>>,
    last: std::sync::Mutex<Option<ReleasesRead>>,
}

impl Cluster {
    /// The releases, read again when older than `RELEASES_TTL`.
    pub async fn releases(&self) -> ReleasesRead {
        let mut at = self.releases.reading.lock().await;
        if at.is_some_and(|t| t.elapsed() < RELEASES_TTL) {
            if let Some(read) = self.releases_seen() {
                return read;
            }
        }
        let read = self.ceph.versions().await.map_err(|e| format!("cannot read the cluster's versions: {e}"));
        if let Err(e) = &read {
            tracing::warn!("{e}");
        }
        *at = Some(Instant::now());
        *self.releases.last.lock().expect("releases lock") = Some(read.clone());
        read
    }

    /// The release whose cephadm the planner follows: the oldest the
    /// cluster runs (`ceph versions`, all daemons). During an upgrade some
    /// hosts still run the old ceph-volume, which refuses the newer
    /// release's flags (`--objectstore`, `--with-tpm`), so the plan keeps
    /// the old semantics until the last daemon is upgraded. 16.2, as
    /// before releases were known, until the first read succeeds.
    pub fn planning_release(&self) -> Release {
        match self.releases_seen() {
            Some(Ok(releases)) => oldest(&releases).unwrap_or(Release::Pacific),
            _ => Release::Pacific,
        }
    }

    /// The last read, without asking the cluster; None before the first.
    pub fn releases_seen(&self) -> Option<ReleasesRead> {
        self.releases.last.lock().expect("releases lock").clone()
    }
}

/// The oldest release among those read.
pub fn oldest(releases: &[(CephRelease, u64)]) -> Option<Release> {
    releases.iter().map(|(r, _)| r.release).min()
}

/// The releases as the API lists them.
pub fn running(releases: &[(CephRelease, u64)]) -> Vec<RunningRelease> {
    releases
        .iter()
        .map(|(r, daemons)| RunningRelease {
            version: r.version.clone(),
            release: r.release.name().to_string(),
            major: r.release.major(),
            daemons: *daemons,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::sim::field_report_cluster;

    /// Mid-upgrade the plan keeps the semantics every host's ceph-volume
    /// still takes: the oldest release's; nothing read, 16.2's.
    #[test]
    fn the_planner_follows_the_oldest_release_running() {
        let r = |v: &str, n| (CephRelease::parse(v).unwrap(), n);
        assert_eq!(oldest(&[r("18.2.7", 3), r("20.2.4", 9)]), Some(Release::Reef));
        assert_eq!(oldest(&[r("20.2.4", 9)]), Some(Release::Tentacle));
        assert_eq!(oldest(&[]), None);
        let cluster = Cluster::new(Arc::new(field_report_cluster(100.0, 1.0, 1.0)));
        assert_eq!(cluster.planning_release(), Release::Pacific, "before the first read");
    }

    #[tokio::test]
    async fn healthz_lists_the_releases_once_read_and_a_read_answers_for_a_while() {
        let sim = field_report_cluster(100.0, 1.0, 1.0);
        let cluster = Cluster::new(Arc::new(sim));
        assert!(cluster.health().releases.is_empty(), "nothing asked yet: nothing listed, nothing invented");
        cluster.check().await;
        let listed = cluster.health().releases;
        assert_eq!(listed.len(), 1, "{listed:?}");
        let r = &listed[0];
        assert_eq!((r.version.as_str(), r.release.as_str(), r.major), ("16.2.15", "pacific", 16));
        assert!(r.daemons > 2, "OSDs, a mon and a mgr: {listed:?}");
        let first = cluster.releases.reading.lock().await.unwrap();
        cluster.status().await;
        assert_eq!(cluster.releases.reading.lock().await.unwrap(), first, "not asked again within RELEASES_TTL");
    }
}
