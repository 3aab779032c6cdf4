//! The last OSD listing (`ceph-volume raw list` + `lvm list`), kept until
//! this agent changes the disks or it grows old. A listing starts two
//! Python interpreters: on an emulated host that was half a minute, and a
//! deployment asked for one before and after each activation and start
//! (BENCHMARKS.md, real hosts). What changes the listing here goes through
//! this agent's one-command-at-a-time lock: each such command marks the
//! listing stale when it ends, so a listing taken while it ran is never
//! served afterwards. Changes made beside the agent (an operator's own
//! ceph-volume run) show once the listing is older than the caller's limit.
//! A destructive command lists afresh, whatever is kept.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::wire::agent::HostOsds;

/// How old a kept listing may be when a caller takes it: longer than an
/// activation takes on a slow host (2.5 minutes emulated), so that the
/// look after it needs no new listing.
pub const KEPT_FOR: Duration = Duration::from_secs(300);

#[derive(Default)]
pub struct ListingCache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Bumped each time a command that may change the listing ends.
    generation: u64,
    /// A listing of this generation: `changed` drops it.
    kept: Option<Kept>,
}

struct Kept {
    devices: BTreeSet<String>,
    taken: Instant,
    listing: HostOsds,
}

/// Where a listing started: stored only if nothing changed the disks meanwhile.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    generation: u64,
    taken: Instant,
}

impl ListingCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kept listing of exactly `devices`, if no command changed the
    /// disks since it was taken and it is younger than `max_age` at `now`.
    pub fn get(&self, devices: &BTreeSet<String>, max_age: Duration, now: Instant) -> Option<HostOsds> {
        let inner = self.lock();
        let kept = inner.kept.as_ref()?;
        let fresh = &kept.devices == devices && now.saturating_duration_since(kept.taken) < max_age;
        fresh.then(|| kept.listing.clone())
    }

    /// Taken before a listing starts.
    pub fn ticket(&self, now: Instant) -> Ticket {
        Ticket { generation: self.lock().generation, taken: now }
    }

    /// Keeps a listing begun at `ticket`, unless the disks changed since.
    pub fn put(&self, ticket: Ticket, devices: BTreeSet<String>, listing: HostOsds) {
        let mut inner = self.lock();
        if ticket.generation == inner.generation {
            inner.kept = Some(Kept { devices, taken: ticket.taken, listing });
        }
    }

    /// A command that may have changed what ceph-volume lists has ended.
    pub fn changed(&self) {
        let mut inner = self.lock();
        inner.generation += 1;
        inner.kept = None;
    }
}

/// Marks the listing stale when dropped: held by a task that runs a
/// command changing the disks, so that even a task that fails or panics
/// leaves no stale listing behind.
pub struct Stale(pub std::sync::Arc<ListingCache>);

impl Drop for Stale {
    fn drop(&mut self) {
        self.0.changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::agent::{ListedOsd, OsdKind};

    fn listing(id: u32) -> HostOsds {
        HostOsds {
            osds: vec![ListedOsd {
                osd_id: id,
                osd_fsid: format!("uuid-{id}"),
                cluster_fsid: "fsid".into(),
                kind: OsdKind::Lvm,
                device: "/dev/sdb".into(),
                db_device: None,
                wal_device: None,
                osdspec_affinity: None,
            }],
            notes: vec![],
        }
    }

    fn devs(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_listing_is_served_again_until_it_is_too_old() {
        let cache = ListingCache::default();
        let t0 = Instant::now();
        let d = devs(&["/dev/sdb", "/dev/sdc"]);
        assert!(cache.get(&d, KEPT_FOR, t0).is_none(), "nothing kept yet");
        cache.put(cache.ticket(t0), d.clone(), listing(3));
        assert_eq!(cache.get(&d, KEPT_FOR, t0 + KEPT_FOR - Duration::from_secs(1)).unwrap().osds[0].osd_id, 3);
        assert!(cache.get(&d, KEPT_FOR, t0 + KEPT_FOR).is_none(), "too old at its limit");
        assert!(cache.get(&d, Duration::ZERO, t0).is_none(), "a caller that wants it fresh never gets it kept");
    }

    #[test]
    fn a_listing_of_other_devices_is_not_served() {
        let cache = ListingCache::default();
        let t0 = Instant::now();
        cache.put(cache.ticket(t0), devs(&["/dev/sdb"]), listing(3));
        assert!(cache.get(&devs(&["/dev/sdb", "/dev/sdd"]), KEPT_FOR, t0).is_none());
    }

    #[test]
    fn a_command_that_ends_drops_the_kept_listing() {
        let cache = std::sync::Arc::new(ListingCache::default());
        let t0 = Instant::now();
        let d = devs(&["/dev/sdb"]);
        cache.put(cache.ticket(t0), d.clone(), listing(3));
        drop(Stale(cache.clone()));
        assert!(cache.get(&d, KEPT_FOR, t0).is_none());
    }

    #[test]
    fn a_listing_begun_before_a_command_ended_is_not_kept() {
        let cache = std::sync::Arc::new(ListingCache::default());
        let t0 = Instant::now();
        let d = devs(&["/dev/sdb"]);
        let ticket = cache.ticket(t0);
        // ceph-volume zapped the disk while the listing ran: it may show the OSD still.
        cache.changed();
        cache.put(ticket, d.clone(), listing(3));
        assert!(cache.get(&d, KEPT_FOR, t0).is_none());
        cache.put(cache.ticket(t0), d.clone(), listing(4));
        assert_eq!(cache.get(&d, KEPT_FOR, t0).unwrap().osds[0].osd_id, 4);
    }
}
