//! Drain progress from samples of (time, PGs left): the rate over the
//! recent window and the time left at that rate. cephadm shows neither.

/// What the status line shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub pgs_at_start: Option<i64>,
    pub pgs_now: Option<i64>,
    /// PGs moved off per minute over the window (None until two samples differ in time).
    pub pgs_per_min: Option<f64>,
    /// Seconds left at that rate (None when not draining or no rate yet).
    pub eta_s: Option<f64>,
    /// Bytes still on the OSD and the rate they leave at, where Ceph reports usage.
    pub bytes_now: Option<f64>,
    pub bytes_per_s: Option<f64>,
}

/// `samples` are (ms since epoch, PGs, KiB used), oldest first; `window_ms`
/// bounds how far back the rate looks, so that it follows the cluster's
/// current pace rather than the whole history.
pub fn progress(pgs_at_start: Option<i64>, samples: &[(i64, i64, Option<i64>)], window_ms: i64) -> Progress {
    let last = samples.last();
    let mut p = Progress {
        pgs_at_start,
        pgs_now: last.map(|s| s.1),
        pgs_per_min: None,
        eta_s: None,
        bytes_now: last.and_then(|s| s.2).map(|kb| kb as f64 * 1024.0),
        bytes_per_s: None,
    };
    let Some(&(t1, pgs1, kb1)) = last else { return p };
    let start = samples.iter().find(|s| s.0 >= t1 - window_ms).copied();
    let Some((t0, pgs0, kb0)) = start else { return p };
    if t1 <= t0 {
        return p;
    }
    let minutes = (t1 - t0) as f64 / 60_000.0;
    let rate = (pgs0 - pgs1) as f64 / minutes;
    p.pgs_per_min = Some(rate.max(0.0));
    if pgs1 == 0 {
        p.eta_s = Some(0.0);
    } else if rate > 0.0 {
        p.eta_s = Some(pgs1 as f64 / rate * 60.0);
    }
    if let (Some(a), Some(b)) = (kb0, kb1) {
        p.bytes_per_s = Some(((a - b) as f64 * 1024.0 / (minutes * 60.0)).max(0.0));
    }
    p
}

/// "1h 05m", "4m 10s", "12s".
pub fn format_duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        s if s >= 3600 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        s if s >= 60 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_and_eta_over_the_window() {
        // 186 PGs at start, 140 after 30 minutes, 76 after 2 hours (the field report's osd.15).
        let s = [(0, 186, None), (1_800_000, 140, None), (7_200_000, 76, None)];
        let p = progress(Some(186), &s, 6 * 3_600_000);
        let rate = p.pgs_per_min.unwrap();
        assert!((rate - 110.0 / 120.0).abs() < 1e-9);
        assert!((p.eta_s.unwrap() - 76.0 / rate * 60.0).abs() < 1e-6);
        let recent = progress(Some(186), &s, 3_600_000);
        assert_eq!(recent.pgs_per_min, None, "one sample in the window gives no rate");
        assert_eq!(format_duration(p.eta_s.unwrap()), "1h 22m");
    }

    #[test]
    fn finished_and_stalled() {
        assert_eq!(progress(Some(5), &[(0, 5, None), (60_000, 0, Some(0))], 600_000).eta_s, Some(0.0));
        let stalled = progress(Some(5), &[(0, 5, None), (60_000, 5, None)], 600_000);
        assert_eq!((stalled.pgs_per_min, stalled.eta_s), (Some(0.0), None));
    }
}
