//! Drain progress from samples: what is left to move off the OSD, how fast
//! it leaves, when it ends, and whether it has stalled.
//!
//! What is left is measured in bytes where the worker could read them (the
//! PG stats of the PGs still mapped to the OSD, `removal::remaining`), else
//! in PGs. Counting PGs misjudges the end: in the field report a drain's
//! first PGs are small and its last ones big (the misplaced objects per PG
//! left grew almost threefold over osd.8's drain), so a PG rate measured
//! early promises an end hours too soon (`field_report.rs`, BENCHMARKS.md).
//!
//! The rate is smoothed by an exponentially weighted moving average over
//! time, not a windowed regression: samples come at uneven intervals (on
//! every PG count change, else every 30 s), and a whole PG leaving makes
//! the bytes fall in steps; an average whose weight decays with elapsed
//! time treats a sample after 2 s and one after 30 min each by the time
//! they cover, needs no minimum number of points in a window, and forgets
//! a pace that changed within a few time constants. Until one time
//! constant of history exists it is the plain average since the first
//! sample, so one early step does not dominate.
//!
//! A drain whose remaining data has not fallen for the configured time
//! is stalled: no ETA then (an ETA that keeps shrinking while nothing moves
//! is the lie this module is there to avoid), and the reason the cluster
//! gave during the stall, if it gave one. While data stands still, before
//! the stall is declared, the smoothed rate decays and the ETA grows.

pub mod field_report;
#[cfg(test)]
mod tests;

/// One progress sample of a drain.
#[derive(Debug, Clone, PartialEq)]
pub struct DrainSample {
    /// Milliseconds since the epoch.
    pub at: i64,
    /// PGs still on the OSD.
    pub pgs: i64,
    /// Bytes still to move off it; None where they were not read.
    pub bytes_left: Option<u64>,
    /// Why the cluster holds its PGs back, in the cluster's words, when it
    /// says so ("2 PGs backfill_toofull").
    pub blocked: Option<String>,
}

/// How the estimate looks at the samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The moving average's time constant.
    pub smoothing_ms: i64,
    /// The remaining data not falling for this long: stalled.
    pub stall_after_ms: i64,
}

/// Ten minutes: in the field report a PG left osd.8 every 3.5 minutes on
/// average, so the average spans a few whole PGs, and a change of pace in
/// a drain of hours shows within about twenty minutes.
pub const SMOOTHING_MS: i64 = 10 * 60 * 1000;

/// The samples the estimate needs: the smoothing forgets what is five time
/// constants old (weight below 1 %), and a stall must be seen whole.
pub fn window_ms(s: Settings) -> i64 {
    (5 * s.smoothing_ms).max(2 * s.stall_after_ms)
}

/// What the ETA was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    Bytes,
    Pgs,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Bytes => "bytes",
            Basis::Pgs => "pgs",
        }
    }
}

/// No progress since `since` (ms), and why, if the cluster said.
#[derive(Debug, Clone, PartialEq)]
pub struct Stall {
    /// When the remaining data last fell (at least this long
    /// ago: the estimate sees only its window of samples).
    pub since: i64,
    pub reason: Option<String>,
}

/// What the status shows, as of the newest sample.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Estimate {
    pub pgs_now: Option<i64>,
    pub bytes_left: Option<u64>,
    /// Smoothed, never below 0 (a rise shows as no progress).
    pub pgs_per_min: Option<f64>,
    pub bytes_per_s: Option<f64>,
    pub basis: Option<Basis>,
    /// Seconds after the newest sample; None while stalled or without a rate.
    pub eta_s: Option<f64>,
    pub stalled: Option<Stall>,
}

/// The estimate after the last of `samples` (oldest first).
pub fn estimate(samples: &[DrainSample], s: Settings) -> Estimate {
    let pgs: Vec<(i64, f64)> = samples.iter().map(|x| (x.at, x.pgs as f64)).collect();
    let bytes: Vec<(i64, f64)> = samples.iter().filter_map(|x| Some((x.at, x.bytes_left? as f64))).collect();
    let pg_rate = smoothed_rate(&pgs, s.smoothing_ms);
    let byte_rate = smoothed_rate(&bytes, s.smoothing_ms);
    let mut e = Estimate {
        pgs_now: samples.last().map(|x| x.pgs),
        bytes_left: samples.iter().rev().find_map(|x| x.bytes_left),
        pgs_per_min: pg_rate.map(|r| (r * 60.0).max(0.0)),
        bytes_per_s: byte_rate.map(|r| r.max(0.0)),
        ..Estimate::default()
    };
    let (basis, series, rate) = match (byte_rate, pg_rate) {
        (Some(r), _) => (Basis::Bytes, &bytes, r),
        (None, Some(r)) => (Basis::Pgs, &pgs, r),
        (None, None) => return e,
    };
    e.basis = Some(basis);
    let left = series.last().map_or(0.0, |p| p.1);
    if left <= 0.0 && e.pgs_now.unwrap_or(0) <= 0 {
        e.eta_s = Some(0.0);
        return e;
    }
    e.stalled = stall(series, samples, s.stall_after_ms);
    if e.stalled.is_some() {
        return e;
    }
    e.eta_s = if left <= 0.0 {
        // Only PGs without data are left (empty pools' PGs): they leave at the PG pace.
        pg_rate.filter(|r| *r > 0.0).map(|r| e.pgs_now.unwrap_or(0) as f64 / r)
    } else {
        (rate > 0.0).then(|| left / rate)
    };
    e
}

/// Units per second leaving, smoothed over time: each interval's rate
/// weighted by `1 - exp(-dt/tau)`, or by its share of the history while
/// that is shorter than `tau`. None without two samples at different times.
fn smoothed_rate(points: &[(i64, f64)], tau_ms: i64) -> Option<f64> {
    let (&(first, _), rest) = points.split_first()?;
    let mut prev = points[0];
    let mut rate: Option<f64> = None;
    for &(t, v) in rest {
        if t <= prev.0 {
            prev.1 = v;
            continue;
        }
        let dt = (t - prev.0) as f64;
        let instant = (prev.1 - v) / (dt / 1000.0);
        let decay = 1.0 - (-dt / tau_ms.max(1) as f64).exp();
        let weight = decay.max(dt / (t - first) as f64);
        rate = Some(rate.map_or(instant, |r| r + weight * (instant - r)));
        prev = (t, v);
    }
    rate
}

/// Stalled when the remaining amount has not fallen for `after_ms` (it rose
/// or stayed flat since its last fall); the reason is the latest the
/// cluster gave since then. The last fall, not the lowest value ever seen:
/// a reading taken while PGs remap can be low for a moment (stats of the
/// old mapping), and a drain falling steadily above it is not stalled.
fn stall(series: &[(i64, f64)], samples: &[DrainSample], after_ms: i64) -> Option<Stall> {
    let mut start = series.len().checked_sub(1)?;
    while start > 0 && series[start - 1].1 <= series[start].1 {
        start -= 1;
    }
    let low_at = series[start].0;
    let newest = series.last()?.0;
    if newest - low_at < after_ms {
        return None;
    }
    let reason = samples.iter().rev().take_while(|x| x.at >= low_at).find_map(|x| x.blocked.clone());
    Some(Stall { since: low_at, reason })
}

/// The estimate after each sample in turn: what the status showed then.
pub fn replay(samples: &[DrainSample], s: Settings) -> Vec<Estimate> {
    (1..=samples.len()).map(|n| estimate(&samples[..n], s)).collect()
}

/// The baseline the estimate is compared with (BENCHMARKS.md): PGs moved
/// since the drain began over the time it took, the PGs left at that rate.
pub fn naive_pg_eta(pgs_at_start: i64, started_at: i64, now: &DrainSample) -> Option<f64> {
    let moved = (pgs_at_start - now.pgs) as f64;
    let elapsed_s = (now.at - started_at) as f64 / 1000.0;
    (moved > 0.0 && elapsed_s > 0.0).then(|| now.pgs as f64 / (moved / elapsed_s))
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
