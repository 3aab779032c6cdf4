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

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;

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
}

const TOPICS: usize = 10;

#[derive(Debug, Default)]
pub struct Changes {
    counts: [AtomicU64; TOPICS],
    wake: Notify,
    /// Host -> the time its inventory was last written with (ms), since
    /// the store was opened.
    inventory_times: Mutex<HashMap<String, i64>>,
}

impl Changes {
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
    /// the last call returned).
    pub async fn written(&self) {
        self.wake.notified().await;
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
