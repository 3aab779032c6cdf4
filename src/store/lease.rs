//! The leader's lease on a database kept in RADOS: when the latest commit
//! that went through began. A commit through the VFS shows that the lock
//! was held when it began (`domain::lock_fencing`), so the lease lasts the
//! bound derived there from that moment. The commits that prove it: the
//! watchdog's touch and every action's intent (`Store::touch`,
//! `Store::log_action`). The operation kernel asks it right before each
//! effect (`Store::fence_if_lease_lapsed`), the watchdog every second
//! (`app/leader.rs`); past the bound, the fence ends the process.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What ends the process: another daemon may lead now.
pub type SharedFence = Arc<dyn Fn(&str) + Send + Sync>;

pub struct Lease {
    bound: Duration,
    /// When the latest commit that went through began.
    proved: Mutex<Instant>,
    fence: SharedFence,
}

impl Lease {
    /// Taken with the lock, which the opening connection got at `taken`.
    pub(super) fn new(bound: Duration, fence: SharedFence, taken: Instant) -> Lease {
        Lease { bound, proved: Mutex::new(taken), fence }
    }

    /// A commit that began at `began` went through.
    pub(super) fn proved(&self, began: Instant) {
        let mut proved = self.proved.lock().unwrap_or_else(|p| p.into_inner());
        *proved = (*proved).max(began);
    }

    /// How long since the latest proof began.
    pub fn age(&self) -> Duration {
        self.age_at(Instant::now())
    }

    fn age_at(&self, now: Instant) -> Duration {
        now.saturating_duration_since(*self.proved.lock().unwrap_or_else(|p| p.into_inner()))
    }

    pub fn bound(&self) -> Duration {
        self.bound
    }

    /// Ends the process when the lease has lapsed, before `what` is done;
    /// should the fence return (a test's), why, so that `what` is not done.
    pub(super) fn fence_if_lapsed(&self, what: &str) -> Result<(), String> {
        self.fence_if_lapsed_at(what, Instant::now())
    }

    fn fence_if_lapsed_at(&self, what: &str, now: Instant) -> Result<(), String> {
        let age = self.age_at(now);
        if age <= self.bound {
            return Ok(());
        }
        let why = format!(
            "no commit went through for {:.1} s before {what}, past the lease of {} s",
            age.as_secs_f64(),
            self.bound.as_secs_f64()
        );
        (self.fence)(&why);
        Err(why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_lasts_its_bound_from_the_latest_proof_and_then_fences() {
        let fenced: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = fenced.clone();
        let fence: SharedFence = Arc::new(move |why: &str| seen.lock().unwrap().push(why.into()));
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let lease = Lease::new(Duration::from_secs(6), fence, at(1_000));
        assert_eq!(lease.fence_if_lapsed_at("the zap", at(7_000)), Ok(()));
        assert!(fenced.lock().unwrap().is_empty(), "held for its bound from the open");
        lease.proved(at(500));
        let refused = lease.fence_if_lapsed_at("the zap", at(7_001)).unwrap_err();
        let said = fenced.lock().unwrap().clone();
        assert_eq!(said, [refused]);
        assert_eq!(
            said,
            ["no commit went through for 6.0 s before the zap, past the lease of 6 s"],
            "an older proof renews nothing"
        );
        lease.proved(at(5_000));
        assert_eq!(lease.fence_if_lapsed_at("the purge", at(10_900)), Ok(()));
        assert_eq!(fenced.lock().unwrap().len(), 1, "a newer proof renews it");
        assert_eq!(lease.age_at(at(10_900)), Duration::from_millis(5_900));
        assert!(lease.fence_if_lapsed_at("the purge", at(11_500)).is_err());
        assert_eq!(fenced.lock().unwrap().len(), 2);
    }
}
