//! Two cluster benchmarks side by side: per pass, MB/s, IOPS, average and
//! maximum latency of each, with the change from the first to the second
//! in percent, and what differs in the clusters' shapes (a comparison of
//! different clusters says little about the disks).

use super::cluster::{ClusterShape, Pass, PassResult};

#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (b - a) / a in percent; none when either is missing or a is 0.
    pub change_percent: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PassComparison {
    pub pass: Pass,
    pub metrics: Vec<Metric>,
}

pub fn change_percent(a: f64, b: f64) -> Option<f64> {
    (a != 0.0 && a.is_finite() && b.is_finite()).then(|| (b - a) / a * 100.0)
}

/// Reads one metric of a pass.
type Reading = fn(&PassResult) -> f64;

/// Every pass either run has, in the order write, seq, rand.
pub fn compare(a: &[PassResult], b: &[PassResult]) -> Vec<PassComparison> {
    let metrics: [(&str, Reading); 4] = [
        ("MB/s", |r| r.bandwidth_mb_s),
        ("IOPS", |r| r.iops),
        ("avg latency s", |r| r.avg_latency_s),
        ("max latency s", |r| r.max_latency_s),
    ];
    Pass::ALL
        .iter()
        .filter_map(|&pass| {
            let ra = a.iter().find(|r| r.pass == pass);
            let rb = b.iter().find(|r| r.pass == pass);
            if ra.is_none() && rb.is_none() {
                return None;
            }
            let metrics = metrics
                .iter()
                .map(|(name, get)| {
                    let (va, vb) = (ra.map(get), rb.map(get));
                    let change = va.zip(vb).and_then(|(x, y)| change_percent(x, y));
                    Metric { name: name.to_string(), a: va, b: vb, change_percent: change }
                })
                .collect();
            Some(PassComparison { pass, metrics })
        })
        .collect()
}

/// What differs between two runs' clusters, in words.
pub fn shape_differences(a: &ClusterShape, b: &ClusterShape) -> Vec<String> {
    let mut out = Vec::new();
    let classes: std::collections::BTreeSet<&String> = a.osds_by_class.keys().chain(b.osds_by_class.keys()).collect();
    for c in classes {
        let (x, y) = (a.osds_by_class.get(c).copied().unwrap_or(0), b.osds_by_class.get(c).copied().unwrap_or(0));
        if x != y {
            out.push(format!("{} OSDs: {x} then {y}", c.to_uppercase()));
        }
    }
    for (what, x, y) in
        [("hosts", a.hosts, b.hosts), ("pool size", a.pool_size, b.pool_size), ("pg_num", a.pg_num, b.pg_num)]
    {
        if x != y {
            out.push(format!("{what}: {x} then {y}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pass: Pass, mb: f64, iops: f64, avg: f64, max: f64) -> PassResult {
        PassResult {
            pass,
            seconds: 60.0,
            ops: 1000,
            op_size: 4 << 20,
            bandwidth_mb_s: mb,
            iops,
            avg_latency_s: avg,
            max_latency_s: max,
            min_latency_s: 0.0,
        }
    }

    #[test]
    fn changes_are_from_a_to_b_in_percent() {
        let a = [r(Pass::Write, 100.0, 25.0, 0.4, 2.0), r(Pass::Seq, 400.0, 100.0, 0.1, 0.5)];
        let b = [r(Pass::Write, 150.0, 37.5, 0.3, 1.0)];
        let c = compare(&a, &b);
        assert_eq!(c.len(), 2);
        let w: Vec<Option<f64>> = c[0].metrics.iter().map(|m| m.change_percent.map(|p| p.round())).collect();
        assert_eq!(w, vec![Some(50.0), Some(50.0), Some(-25.0), Some(-50.0)]);
        assert_eq!((c[1].pass, c[1].metrics[0].b, c[1].metrics[0].change_percent), (Pass::Seq, None, None));
        assert_eq!(change_percent(0.0, 5.0), None);
    }

    #[test]
    fn different_clusters_are_named() {
        let mut a = ClusterShape { hosts: 3, pool_size: 2, pg_num: 32, ..Default::default() };
        a.osds_by_class.insert("hdd".into(), 6);
        let mut b = a.clone();
        b.osds_by_class.insert("hdd".into(), 5);
        b.osds_by_class.insert("ssd".into(), 1);
        assert_eq!(shape_differences(&a, &b), vec!["HDD OSDs: 6 then 5", "SSD OSDs: 0 then 1"]);
        assert_eq!(shape_differences(&a, &a), Vec::<String>::new());
    }
}
