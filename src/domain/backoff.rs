//! How long to wait after failures: the usual interval, doubled for each
//! failure in a row, never beyond a bound. The poller backs off from one
//! host this way, and every background worker from its own errors.

use std::time::Duration;

/// The wait before the next try after `failures` failures in a row.
pub fn backoff(interval: Duration, max: Duration, failures: u32) -> Duration {
    let factor = 1u32 << failures.min(10);
    interval.saturating_mul(factor).min(max.max(interval))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_per_failure_up_to_the_bound() {
        let s = Duration::from_secs;
        assert_eq!(backoff(s(10), s(300), 0), s(10));
        assert_eq!(backoff(s(10), s(300), 1), s(20));
        assert_eq!(backoff(s(10), s(300), 3), s(80));
        assert_eq!(backoff(s(10), s(300), 5), s(300));
        assert_eq!(backoff(s(10), s(300), 1000), s(300), "no overflow");
        assert_eq!(backoff(s(10), s(1), 2), s(10), "a bound below the interval does not shorten it");
    }
}
