//! When a cluster benchmark is too short or too small to mean much: the
//! methodology points of the ceph-users thread on misleading tests
//! (../shared/reference/field-reports/001): a test of 1 GiB measures
//! caches more than disks (at least 10 GiB), short runs are noise, reads
//! of data just written come from caches, and a run on a cluster that is
//! busy recovering measures the recovery.

use super::cluster::{ClusterBench, Pass};

/// Passes shorter than this vary too much from run to run to compare.
pub const MIN_MEANINGFUL_SECONDS: u32 = 60;
/// Less data than this fits in the OSDs' caches (BlueStore's cache and the
/// hosts' page cache): the thread's "at least 10G".
pub const MIN_MEANINGFUL_BYTES: u64 = 10 << 30;

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The warnings a finished (or partly finished) run deserves.
pub fn warnings(b: &ClusterBench) -> Vec<String> {
    let mut out = Vec::new();
    if b.seconds < MIN_MEANINGFUL_SECONDS {
        out.push(format!(
            "each pass ran {} s: too short to compare with other runs; use {MIN_MEANINGFUL_SECONDS} s or more \
             (the field report's runs are 600 s)",
            b.seconds
        ));
    }
    if let Some(w) = b.results.iter().find(|r| r.pass == Pass::Write) {
        let written = w.ops * w.op_size;
        if written < MIN_MEANINGFUL_BYTES {
            out.push(format!(
                "the write pass wrote {}: reads of so little data come largely from the OSDs' caches, not the \
                 disks; write at least {} (a longer run)",
                gib(written),
                gib(MIN_MEANINGFUL_BYTES)
            ));
        }
    }
    if let Some(s) = b.results.iter().find(|r| r.pass == Pass::Seq) {
        if s.seconds < f64::from(b.seconds) * 0.9 {
            out.push(format!(
                "the sequential read ran out of objects after {:.1} s: it read back all {} objects the write pass \
                 wrote",
                s.seconds, s.ops
            ));
        }
    }
    if b.shape.as_ref().is_some_and(|s| s.pool_size == 1) {
        out.push("the pool keeps one copy: the writes include no replication".into());
    }
    if let Some(h) = b.health.as_deref().filter(|h| *h != "HEALTH_OK") {
        out.push(format!("the cluster was {h} when the run started (forced): it may have measured recovery"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bench::cluster::{new_run, ClusterShape, PassResult};

    fn pass(pass: Pass, seconds: f64, ops: u64) -> PassResult {
        PassResult {
            pass,
            seconds,
            ops,
            op_size: 4 << 20,
            bandwidth_mb_s: 100.0,
            iops: 25.0,
            avg_latency_s: 0.5,
            max_latency_s: 1.0,
            min_latency_s: 0.1,
        }
    }

    #[test]
    fn a_long_large_run_on_a_healthy_cluster_has_no_warning() {
        let mut b = new_run(None, Some(600), None, None, false).unwrap();
        b.health = Some("HEALTH_OK".into());
        b.shape = Some(ClusterShape { pool_size: 3, ..Default::default() });
        b.results =
            vec![pass(Pass::Write, 600.0, 15_000), pass(Pass::Seq, 590.0, 14_000), pass(Pass::Rand, 600.0, 30_000)];
        assert_eq!(warnings(&b), Vec::<String>::new());
    }

    #[test]
    fn a_short_small_run_says_why_it_means_little() {
        let mut b = new_run(None, Some(5), None, None, true).unwrap();
        b.health = Some("HEALTH_WARN".into());
        b.shape = Some(ClusterShape { pool_size: 1, ..Default::default() });
        b.results = vec![pass(Pass::Write, 5.2, 134), pass(Pass::Seq, 0.7, 134)];
        let w = warnings(&b);
        assert_eq!(w.len(), 5, "{w:#?}");
        assert!(w[0].starts_with("each pass ran 5 s"));
        assert!(w[1].starts_with("the write pass wrote 0.5 GiB"));
        assert!(w[2].starts_with("the sequential read ran out of objects after 0.7 s: it read back all 134"));
        assert!(w[3].contains("one copy"));
        assert!(w[4].contains("HEALTH_WARN"));
    }
}
