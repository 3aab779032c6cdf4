//! The release of the Ceph whose ceph-volume makes this host's inventory,
//! asked again now and then (the packages may be upgraded under a running
//! agent), told to the reader of ceph-volume's reports and to the daemon.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::agent_server::ceph_volume::CephVolume;
use crate::wire::ceph_volume::CephRelease;

/// How long an answer (or its absence) is kept: `ceph --version` starts a
/// Python interpreter, too slow to run with every inventory.
const KEPT: Duration = Duration::from_secs(600);

/// The last answer of `ceph --version` beside ceph-volume, and when it came.
#[derive(Default)]
pub struct KnownRelease {
    last: Mutex<Option<(Instant, Option<CephRelease>)>>,
}

impl KnownRelease {
    /// The release, asked again when the last answer is older than `KEPT`;
    /// `None` when the `ceph` beside ceph-volume cannot tell (said in the
    /// log when that starts, and when it changes).
    pub async fn get(&self, ceph_volume: &CephVolume) -> Option<CephRelease> {
        let kept = self.lock().as_ref().filter(|(at, _)| at.elapsed() < KEPT).map(|(_, r)| r.clone());
        if let Some(release) = kept {
            return release;
        }
        let asked = ceph_volume.release().await;
        let mut last = self.lock();
        let before = last.as_ref().map(|(_, r)| r.clone());
        let now = match asked {
            Ok(r) => Some(r),
            Err(e) => {
                if before.as_ref().is_none_or(Option::is_some) {
                    tracing::warn!("the release of ceph-volume's Ceph is not known: {e}; reports are read without it");
                }
                None
            }
        };
        if let Some(r) = now.as_ref().filter(|r| before.as_ref().is_none_or(|b| b.as_ref() != Some(*r))) {
            tracing::info!(release = %r, "ceph-volume's Ceph release");
        }
        *last = Some((Instant::now(), now.clone()));
        now
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Instant, Option<CephRelease>)>> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}
