//! The throughput a finished drain was seen to reach, for the preview's
//! ETA when the cluster is not recovering right now.

/// Bytes per second that left the drained OSD, from its samples (ms since
/// the epoch, PGs, KiB used; oldest first); None without two usage samples
/// that show data leaving.
pub fn drain_throughput(samples: &[(i64, i64, Option<i64>)]) -> Option<f64> {
    let with_usage: Vec<(i64, i64)> = samples.iter().filter_map(|s| s.2.map(|kb| (s.0, kb))).collect();
    let (&(t0, kb0), &(t1, kb1)) = (with_usage.first()?, with_usage.last()?);
    (t1 > t0 && kb0 > kb1).then(|| (kb0 - kb1) as f64 * 1024.0 / ((t1 - t0) as f64 / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::drain_throughput;

    #[test]
    fn bytes_that_left_over_the_time_they_took() {
        let s = [(0, 10, Some(4096)), (1_000, 5, None), (2_000, 0, Some(2048))];
        assert_eq!(drain_throughput(&s), Some(1024.0 * 1024.0));
        assert_eq!(drain_throughput(&s[..1]), None);
        assert_eq!(drain_throughput(&[(0, 1, Some(10)), (1_000, 0, Some(10))]), None, "nothing left");
    }
}
