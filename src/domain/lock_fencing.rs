//! How a leader on a database kept in RADOS fences itself, from the lock
//! settings Ceph's SQLite VFS runs with (`cephsqlite_lock_renewal_timeout`,
//! `cephsqlite_lock_renewal_interval`, `cephsqlite_blocklist_dead_locker`,
//! read as the daemon's own Ceph client sees them: `ceph/vfs_settings.rs`).
//!
//! The VFS renews its exclusive lock every interval; the lock passes
//! `timeout` after the last renewal the OSD applied, and the daemon that
//! takes it over blocklists the old holder before its first statement
//! returns. A commit that went through shows that the lock was held when
//! it began, give or take the renewal before it. The rule
//! (`docs/design/high-availability.md`, "Fencing"):
//!
//! * `frozen_after` = timeout − 2 × interval − `MARGIN`: a commit that
//!   began at `t` followed a renewal no earlier than `t` − 2 × interval
//!   (one interval between renewals, one more for a renewal late or in
//!   flight), so the lock is this daemon's until at least `t` + timeout −
//!   2 × interval. The margin covers the watchdog's one-second look and a
//!   slow OSD's answer. Past `frozen_after` without a commit that went
//!   through, or without running at all, the leader ends (`app/leader.rs`),
//!   and no effect of the operation kernel goes out (`store::lease`);
//! * `prove_every`: a quarter of `frozen_after`, at most `MAX_PROOF_GAP`:
//!   four proofs fit in the bound, so one slow commit does not end a
//!   healthy leader;
//! * refused: a dead locker that is not blocklisted (its writes would go on
//!   after another daemon took over: nothing fences the database then), and
//!   a bound shorter than `MIN_FROZEN_AFTER` (a loaded but healthy leader
//!   would end itself).
//!
//! 16.2 refuses every value of the timeout and the interval but Ceph's
//! defaults (30 s, 2 s: a bound of 22 s); 18.2 and 20.2 take others.

use std::time::Duration;

pub const TIMEOUT_OPTION: &str = "cephsqlite_lock_renewal_timeout";
pub const INTERVAL_OPTION: &str = "cephsqlite_lock_renewal_interval";
pub const BLOCKLIST_OPTION: &str = "cephsqlite_blocklist_dead_locker";

/// The watchdog's one-second look and a slow OSD's answer.
pub const MARGIN: Duration = Duration::from_secs(4);
/// Below this a healthy leader under load would end itself.
pub const MIN_FROZEN_AFTER: Duration = Duration::from_secs(4);
/// A proof at least this often.
pub const MAX_PROOF_GAP: Duration = Duration::from_secs(2);

/// The VFS's lock settings, as its client sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VfsLockSettings {
    pub timeout: Duration,
    pub renewal_interval: Duration,
    pub blocklist_dead_locker: bool,
}

/// What the leader does with them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fencing {
    /// Past this without a commit that went through (or without running),
    /// another daemon may lead: the leader ends, and no effect goes out.
    pub frozen_after: Duration,
    /// How often the leader proves that a commit goes through.
    pub prove_every: Duration,
    /// What it was derived from.
    pub settings: VfsLockSettings,
}

impl VfsLockSettings {
    /// The three values as Ceph prints them (`conf_get`: milliseconds, and
    /// `true`/`false`); the error names the option and the value.
    pub fn read(timeout: &str, interval: &str, blocklist: &str) -> Result<VfsLockSettings, String> {
        Ok(VfsLockSettings {
            timeout: millis(TIMEOUT_OPTION, timeout)?,
            renewal_interval: millis(INTERVAL_OPTION, interval)?,
            blocklist_dead_locker: match blocklist.trim() {
                "true" => true,
                "false" => false,
                other => return Err(format!("{BLOCKLIST_OPTION} is {other:?}, expected true or false")),
            },
        })
    }
}

fn millis(option: &str, text: &str) -> Result<Duration, String> {
    text.trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| format!("{option} is {text:?}, expected milliseconds (a whole number)"))
}

/// The fencing these settings allow, or why they allow none.
pub fn fencing(settings: VfsLockSettings) -> Result<Fencing, String> {
    if !settings.blocklist_dead_locker {
        return Err(format!(
            "{BLOCKLIST_OPTION} is false: a daemon that takes the database over would not blocklist the one \
             that held it, whose writes would then go on (nothing fences it); remove the setting (Ceph's \
             default is true)"
        ));
    }
    let held = settings.timeout.saturating_sub(2 * settings.renewal_interval);
    let frozen_after = held.saturating_sub(MARGIN);
    if frozen_after < MIN_FROZEN_AFTER {
        return Err(format!(
            "{TIMEOUT_OPTION} {} ms with {INTERVAL_OPTION} {} ms leaves the leader {} ms to notice that it \
             stopped (the timeout less two renewals and {} s of margin), under the {} s a loaded leader needs; \
             make the timeout at least 2 × the interval + {} s",
            settings.timeout.as_millis(),
            settings.renewal_interval.as_millis(),
            frozen_after.as_millis(),
            MARGIN.as_secs(),
            MIN_FROZEN_AFTER.as_secs(),
            (MARGIN + MIN_FROZEN_AFTER).as_secs(),
        ));
    }
    Ok(Fencing { frozen_after, prove_every: (frozen_after / 4).min(MAX_PROOF_GAP), settings })
}

impl Fencing {
    /// The leader's own words for the log and the event that it leads.
    pub fn said(&self) -> String {
        format!(
            "fences itself {} s after its last commit that went through ({TIMEOUT_OPTION} {} ms, \
             {INTERVAL_OPTION} {} ms)",
            secs(self.frozen_after),
            self.settings.timeout.as_millis(),
            self.settings.renewal_interval.as_millis()
        )
    }
}

/// Whole seconds when whole, else to the tenth.
fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        d.as_secs().to_string()
    } else {
        format!("{:.1}", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(timeout_ms: u64, interval_ms: u64) -> VfsLockSettings {
        VfsLockSettings {
            timeout: Duration::from_millis(timeout_ms),
            renewal_interval: Duration::from_millis(interval_ms),
            blocklist_dead_locker: true,
        }
    }

    #[test]
    fn the_bound_is_the_timeout_less_two_renewals_and_the_margin() {
        // Ceph's defaults, the only values 16.2 takes: the bound it had as a constant.
        let f = fencing(settings(30_000, 2_000)).unwrap();
        assert_eq!((f.frozen_after, f.prove_every), (Duration::from_secs(22), Duration::from_secs(2)));
        assert_eq!(
            f.said(),
            "fences itself 22 s after its last commit that went through (cephsqlite_lock_renewal_timeout \
             30000 ms, cephsqlite_lock_renewal_interval 2000 ms)"
        );
        // The sandbox test's 18.2/20.2 settings.
        let f = fencing(settings(12_000, 1_000)).unwrap();
        assert_eq!((f.frozen_after, f.prove_every), (Duration::from_secs(6), Duration::from_millis(1_500)));
        assert!(f.said().starts_with("fences itself 6 s after"), "{}", f.said());
        // A longer timeout gives a longer bound; proofs stay every 2 s.
        let f = fencing(settings(120_000, 5_000)).unwrap();
        assert_eq!((f.frozen_after, f.prove_every), (Duration::from_secs(106), Duration::from_secs(2)));
        // The shortest allowed: 2 × interval + 8 s.
        let f = fencing(settings(12_000, 2_000)).unwrap();
        assert_eq!((f.frozen_after, f.prove_every), (Duration::from_secs(4), Duration::from_secs(1)));
    }

    #[test]
    fn a_dead_locker_not_blocklisted_or_a_bound_too_short_is_refused_saying_why() {
        let open = VfsLockSettings { blocklist_dead_locker: false, ..settings(30_000, 2_000) };
        let e = fencing(open).unwrap_err();
        assert!(e.starts_with("cephsqlite_blocklist_dead_locker is false: ") && e.contains("nothing fences"), "{e}");
        for (timeout, interval) in [(11_999, 2_000), (10_000, 1_500), (5_000, 2_000), (2_000, 2_000), (1_000, 5_000)] {
            let e = fencing(settings(timeout, interval)).unwrap_err();
            assert!(
                e.starts_with(&format!("cephsqlite_lock_renewal_timeout {timeout} ms with cephsqlite_lock_renewal_interval {interval} ms leaves"))
                    && e.contains("at least 2 × the interval + 8 s"),
                "{timeout}/{interval}: {e}"
            );
        }
    }

    #[test]
    fn the_values_are_read_as_ceph_prints_them_and_anything_else_is_named() {
        let s = VfsLockSettings::read("12000", "1000\n", "true").unwrap();
        assert_eq!(s, settings(12_000, 1_000));
        assert!(!VfsLockSettings::read("30000", "2000", "false").unwrap().blocklist_dead_locker);
        for ((t, i, b), why) in [
            (("12s", "1000", "true"), "cephsqlite_lock_renewal_timeout is \"12s\", expected milliseconds"),
            (("12000", "", "true"), "cephsqlite_lock_renewal_interval is \"\", expected milliseconds"),
            (("12000", "1000", "yes"), "cephsqlite_blocklist_dead_locker is \"yes\", expected true or false"),
        ] {
            let e = VfsLockSettings::read(t, i, b).unwrap_err();
            assert!(e.starts_with(why), "{e}");
        }
    }
}
