//! When a host is polled next: one wait (the interval, or the backoff after
//! failures) after this poll, less a share of it that differs from host to
//! host and poll to poll. Hosts polled together (all of them right after a
//! start, or after an outage of the network) would otherwise poll in the
//! same instant every interval: a burst of thousands of requests, then an
//! idle daemon. Drawn earlier by up to a fifth of the wait, they drift apart
//! within a few rounds. Never later: an inventory is never older than the
//! interval promises (plus the poll itself).

use std::time::Duration;

/// The largest share of the wait a poll is drawn earlier by.
pub const JITTER: f64 = 0.2;

/// When to poll again after a poll that ended at `done_at_ms` (ms since the
/// epoch). `draw` is any number that differs per host and poll (the poller
/// hashes the host's name with the time); it is mapped evenly onto
/// `[wait - JITTER × wait, wait]`.
pub fn next_poll_at(done_at_ms: i64, wait: Duration, draw: u64) -> i64 {
    let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX / 4);
    let spread = (wait_ms as f64 * JITTER) as u64;
    let earlier = i64::try_from(draw % (spread + 1)).expect("below a fifth of an i64");
    done_at_ms.saturating_add(wait_ms - earlier)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simple generator standing in for the poller's hashes.
    fn draws(seed: u64) -> impl Iterator<Item = u64> {
        let mut x = seed;
        std::iter::repeat_with(move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 11
        })
    }

    #[test]
    fn within_a_fifth_of_the_wait_never_later() {
        let wait = Duration::from_secs(60);
        let mut seen = std::collections::BTreeSet::new();
        for d in draws(1).take(10_000).chain([0, u64::MAX]) {
            let at = next_poll_at(1_000, wait, d);
            assert!((1_000 + 48_000..=1_000 + 60_000).contains(&at), "{at}");
            seen.insert((at - 1_000) / 1_000);
        }
        assert_eq!(seen.len(), 13, "every second from 48 s to 60 s drawn: {seen:?}");
        assert_eq!(next_poll_at(5, Duration::ZERO, 7), 5, "no wait, no jitter");
        assert_eq!(next_poll_at(0, Duration::from_millis(4), u64::MAX), 4, "a spread below 1 ms rounds to none");
        assert!(next_poll_at(i64::MAX - 10, Duration::from_secs(u64::MAX / 4), 0) > 0, "no overflow");
    }

    #[test]
    fn hosts_polled_together_drift_apart() {
        // 2000 hosts polled in the same instant, then each again when due,
        // at a 5 s interval: after a few rounds no 100 ms holds more than a
        // small share of them (evenly spread: 40 per 100 ms).
        let wait = Duration::from_secs(5);
        let mut due: Vec<i64> = vec![0; 2000];
        let mut gen = draws(42);
        let busiest = |due: &[i64]| {
            let mut per_slot = std::collections::HashMap::new();
            for t in due {
                *per_slot.entry(t / 100).or_insert(0) += 1;
            }
            per_slot.into_values().max().unwrap()
        };
        assert_eq!(busiest(&due), 2000);
        for _round in 0..8 {
            for t in &mut due {
                *t = next_poll_at(*t, wait, gen.next().unwrap());
            }
        }
        assert!(busiest(&due) < 200, "{}", busiest(&due));
    }
}
