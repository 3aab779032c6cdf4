//! What changed in the store since it was opened: one counter per kind of
//! record, bumped after each write of that kind has committed. The daemon's
//! read model compares them with the counters it last built from, so it
//! rebuilds only what changed and knows it is current without a query.
//!
//! A counter is bumped after the commit, and read before the rebuild's
//! queries: a rebuild that missed a write therefore always sees a counter
//! newer than the one it recorded, and the next refresh builds again.
//!
//! One write is not counted: an inventory seen again unchanged, which
//! writes only its time, thousands of times a minute at fleet scale.
//! Instead the time each host's inventory was last written with is kept
//! here, for `/metrics`' inventory ages.
//!
//! Writes another process made on the same database are not counted as
//! they happen: the backend is asked whether there were any (`look_outside`)
//! at most once a second, by whoever waits for writes (`written`: the read
//! model's worker), never by a request. When there were, every counter
//! moves (which records changed is not known) and the inventory times are
//! forgotten (the store has newer ones than this process wrote).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::backend::Backend;

/// A kind of record the read model is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// Hosts added, removed, relabelled, or becoming (un)reachable.
    Hosts,
    /// A host's stored inventory changed (its fingerprint).
    Inventories,
    Holds,
    Specs,
    /// Any change to a removal or its progress samples.
    Removals,
    /// A removal finished (it leaves the active ones for the history).
    FinishedRemovals,
    OsdBenches,
    Deployments,
    ClusterBenches,
    DiskProbes,
    Swaps,
}

const TOPICS: usize = 11;

/// How often the backend is asked about other processes' writes, at most.
pub const LOOK_OUTSIDE_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub struct Changes {
    counts: [AtomicU64; TOPICS],
    wake: Notify,
    /// Host -> the time its inventory was last written with (ms), since
    /// the store was opened.
    inventory_times: Mutex<HashMap<String, i64>>,
    outside: Option<Outside>,
}

/// The backend to ask about other processes' writes, and its last answer.
struct Outside {
    backend: Arc<dyn Backend>,
    seen: tokio::sync::Mutex<Looked>,
}

#[derive(Default)]
struct Looked {
    token: Option<u64>,
    at: Option<Instant>,
    failing: bool,
}

impl std::fmt::Debug for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outside").finish_non_exhaustive()
    }
}

impl Changes {
    /// Counters that also see other processes' writes through `backend`.
    pub(super) fn watching(backend: Arc<dyn Backend>) -> Changes {
        Changes { outside: Some(Outside { backend, seen: Default::default() }), ..Default::default() }
    }

    /// How many writes of this kind have committed.
    pub fn count(&self, topic: Topic) -> u64 {
        self.counts[topic as usize].load(Ordering::Acquire)
    }

    /// Every counted write so far, of any kind: grows with each.
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Acquire)).sum()
    }

    pub(super) fn bump(&self, topic: Topic) {
        self.counts[topic as usize].fetch_add(1, Ordering::AcqRel);
        self.wake.notify_one();
    }

    /// The time each host's inventory was last written with (ms), for the
    /// hosts whose inventory was written since the store was opened.
    pub fn inventory_times(&self) -> MutexGuard<'_, HashMap<String, i64>> {
        self.inventory_times.lock().expect("inventory times lock")
    }

    /// After the write committed.
    pub(super) fn inventory_written(&self, host: &str, at: i64) {
        let mut times = self.inventory_times();
        match times.get_mut(host) {
            Some(t) => *t = at,
            None => {
                times.insert(host.to_string(), at);
            }
        }
    }

    /// The host and its inventory were removed.
    pub(super) fn inventory_removed(&self, host: &str) {
        self.inventory_times().remove(host);
    }

    /// Returns after the next write of any kind (at once if one came since
    /// the last call returned); another process's within about a second.
    pub async fn written(&self) {
        let Some(outside) = &self.outside else { return self.wake.notified().await };
        loop {
            let since = outside.seen.lock().await.at.map(|at| at.elapsed());
            let wait = since.map_or(Duration::ZERO, |s| LOOK_OUTSIDE_EVERY.saturating_sub(s));
            if wait.is_zero() {
                if self.look_outside().await {
                    return;
                }
                continue;
            }
            tokio::select! {
                _ = self.wake.notified() => return,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Asks the backend now whether another process wrote since it was
    /// last asked; if so, counts a change of every kind (without waking
    /// `written`, which asked) and says so. A failure to ask is logged
    /// once until asking works again, and counts as no write.
    pub async fn look_outside(&self) -> bool {
        let Some(outside) = &self.outside else { return false };
        let mut seen = outside.seen.lock().await;
        seen.at = Some(Instant::now());
        match outside.backend.outside_writes().await {
            Ok(token) => {
                if seen.failing {
                    tracing::info!("the store tells other processes' writes again");
                    seen.failing = false;
                }
                let moved = seen.token.is_some_and(|t| t != token);
                seen.token = Some(token);
                if moved {
                    self.inventory_times().clear();
                    for count in &self.counts {
                        count.fetch_add(1, Ordering::AcqRel);
                    }
                }
                moved
            }
            Err(e) => {
                if !seen.failing {
                    tracing::warn!("cannot tell whether another process wrote to the store: {e}");
                    seen.failing = true;
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bump_counts_its_topic_only_and_wakes_a_waiter() {
        let c = Changes::default();
        c.bump(Topic::Holds);
        c.bump(Topic::Holds);
        assert_eq!((c.count(Topic::Holds), c.count(Topic::Hosts)), (2, 0));
        // The permit left by the bumps: returns at once.
        tokio::time::timeout(std::time::Duration::from_secs(5), c.written()).await.unwrap();
    }
}
