//! The throughput the preview's ETA is computed at, and which one: the
//! cluster's recovery rate right now while recovery is under way (what the
//! OSDs reach today, with today's settings and load), else the rate of the
//! drains osdkeeper watched lately, from their progress samples (the bytes
//! still to move, `domain::progress`), else none: no guess is made.
//!
//! The recent drains are taken together: the bytes they moved over the time
//! during which at least one of them was moving data. Drains of one host
//! run side by side and share the cluster's recovery, so a per-drain rate
//! would understate what the cluster moved; drains one after another add
//! their times. Each drain counts from its first sample with bytes to the
//! first sample at its final low: the wait for safe-to-destroy after the
//! data left is not recovery.

use crate::domain::progress::DrainSample;

/// What the ETA was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtaSource {
    /// `ceph status`'s recovery rate, read with the preview.
    ClusterRecovery,
    /// The drains osdkeeper watched lately, from their samples.
    RecentDrains,
    /// Nothing moves: no time needed.
    NothingToMove,
    /// No recovery under way and no drain watched: no estimate.
    None,
}

impl EtaSource {
    pub const ALL: [EtaSource; 4] =
        [EtaSource::ClusterRecovery, EtaSource::RecentDrains, EtaSource::NothingToMove, EtaSource::None];

    pub fn as_str(self) -> &'static str {
        match self {
            EtaSource::ClusterRecovery => "cluster_recovery",
            EtaSource::RecentDrains => "recent_drains",
            EtaSource::NothingToMove => "nothing_to_move",
            EtaSource::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<EtaSource> {
        EtaSource::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// A throughput and where it was observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Throughput {
    pub bytes_per_s: f64,
    pub source: EtaSource,
    /// In words, e.g. "the cluster's recovery rate right now (ceph status)".
    pub basis: String,
}

/// A drain osdkeeper watched, with its progress samples (oldest first).
#[derive(Debug, Clone, PartialEq)]
pub struct DrainTrace {
    pub osd: u32,
    pub samples: Vec<DrainSample>,
}

/// The throughput to estimate with: `recovery_now` (bytes per second from
/// `ceph status`; None or 0 when no recovery is under way) first, else the
/// `recent` drains together, else none.
pub fn observed(recovery_now: Option<f64>, recent: &[DrainTrace]) -> Option<Throughput> {
    if let Some(r) = recovery_now.filter(|r| *r > 0.0) {
        return Some(Throughput {
            bytes_per_s: r,
            source: EtaSource::ClusterRecovery,
            basis: format!("the cluster's recovery rate right now, {} (ceph status)", per_s(r)),
        });
    }
    let spans: Vec<(u32, Span)> = recent.iter().filter_map(|d| Some((d.osd, span(&d.samples)?))).collect();
    let bytes: f64 = spans.iter().map(|(_, s)| s.bytes).sum();
    let ms = union_ms(spans.iter().map(|(_, s)| (s.from, s.to)).collect());
    if bytes <= 0.0 || ms <= 0 {
        return None;
    }
    let rate = bytes / (ms as f64 / 1000.0);
    let mut osds: Vec<String> = Vec::new();
    for (o, _) in &spans {
        let name = format!("osd.{o}");
        if !osds.contains(&name) {
            osds.push(name);
        }
    }
    Some(Throughput {
        bytes_per_s: rate,
        source: EtaSource::RecentDrains,
        basis: format!(
            "the recent drains osdkeeper watched ({}), {}: {:.1} MiB in {:.0} s",
            osds.join(", "),
            per_s(rate),
            bytes / MIB,
            ms as f64 / 1000.0
        ),
    })
}

const MIB: f64 = 1024.0 * 1024.0;

fn per_s(bytes_per_s: f64) -> String {
    format!("{:.2} MiB/s", bytes_per_s / MIB)
}

/// The bytes one drain moved and the time it took (ms since the epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    from: i64,
    to: i64,
    bytes: f64,
}

/// From the first sample with bytes to the first that reached the last
/// value; None when the bytes did not fall.
fn span(samples: &[DrainSample]) -> Option<Span> {
    let points: Vec<(i64, u64)> = samples.iter().filter_map(|s| Some((s.at, s.bytes_left?))).collect();
    let &(from, first) = points.first()?;
    let last = points.last()?.1;
    let to = points.iter().find(|p| p.1 == last).map(|p| p.0)?;
    (first > last && to > from).then(|| Span { from, to, bytes: (first - last) as f64 })
}

/// The length of the union of the intervals, in ms.
fn union_ms(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut open: Option<(i64, i64)> = None;
    for (a, b) in spans {
        open = match open {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + open.map_or(0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(osd: u32, points: &[(i64, u64)]) -> DrainTrace {
        let samples =
            points.iter().map(|&(at, b)| DrainSample { at, pgs: 1, bytes_left: Some(b), blocked: None }).collect();
        DrainTrace { osd, samples }
    }

    const M: u64 = 1 << 20;

    #[test]
    fn the_cluster_now_while_it_recovers_else_the_recent_drains_else_nothing() {
        let recent = [drain(4, &[(0, 20 * M), (10_000, 10 * M), (20_000, 0), (60_000, 0)])];
        let now = observed(Some(3.0 * M as f64), &recent).unwrap();
        assert_eq!((now.source, now.bytes_per_s), (EtaSource::ClusterRecovery, 3.0 * M as f64));
        assert_eq!(now.basis, "the cluster's recovery rate right now, 3.00 MiB/s (ceph status)");
        // Not recovering: 20 MiB in the 20 s until the bytes reached 0 (the
        // wait for safe-to-destroy after it does not count).
        for idle in [None, Some(0.0)] {
            let t = observed(idle, &recent).unwrap();
            assert_eq!((t.source, t.bytes_per_s), (EtaSource::RecentDrains, M as f64));
            assert_eq!(t.basis, "the recent drains osdkeeper watched (osd.4), 1.00 MiB/s: 20.0 MiB in 20 s");
        }
        assert_eq!(observed(None, &[]), None);
        // An OSD drained twice (stopped, then drained again) is named once.
        let twice = [recent[0].clone(), drain(4, &[(100_000, 20 * M), (120_000, 0)])];
        assert!(observed(None, &twice).unwrap().basis.contains("(osd.4), 1.00 MiB/s: 40.0 MiB in 40 s"));
    }

    #[test]
    fn drains_side_by_side_add_their_bytes_and_drains_in_turn_their_times() {
        // osd.8 and osd.15 of one host at once: 30 MiB in 10 s.
        let host = [drain(8, &[(0, 10 * M), (10_000, 0)]), drain(15, &[(0, 20 * M), (5_000, 5 * M), (10_000, 0)])];
        assert_eq!(observed(None, &host).unwrap().bytes_per_s, 3.0 * M as f64);
        // Then one more, an hour later: 30 + 10 MiB over 10 + 10 s, the hour between not counted.
        let mut later = host.to_vec();
        later.push(drain(3, &[(3_600_000, 10 * M), (3_610_000, 0)]));
        assert_eq!(observed(None, &later).unwrap().bytes_per_s, 2.0 * M as f64);
    }

    #[test]
    fn drains_that_moved_nothing_or_had_no_bytes_read_give_no_rate() {
        let flat = drain(1, &[(0, 5 * M), (10_000, 5 * M)]);
        let one = drain(2, &[(0, 5 * M)]);
        let mut unread = drain(3, &[(0, 5 * M), (10_000, 0)]);
        unread.samples.iter_mut().for_each(|s| s.bytes_left = None);
        assert_eq!(observed(None, &[flat, one, unread]), None);
    }

    #[test]
    fn overlapping_spans_count_once() {
        assert_eq!(union_ms(vec![(0, 10), (5, 20), (30, 40), (35, 36)]), 30);
        assert_eq!(union_ms(vec![]), 0);
    }
}
