//! `bench osds`: each OSD's latest bench, and why an OSD is much slower
//! than comparable ones; cluster benchmarks (`bench ls`, `bench show`,
//! `bench compare`).

use super::table::{Align, Table};
use crate::clock::format_ms;
use crate::domain::bench::cluster::Pass;
use crate::domain::bench::{format_disk_size, format_rate};
use crate::wire::api::bench::{ClusterComparison, ClusterRun, OsdBench};

pub fn osd_bench_table(rows: &[OsdBench]) -> String {
    if rows.is_empty() {
        return "No OSD benches reported\n".into();
    }
    let mut t = Table::new(["OSD", "HOST", "CLASS", "SIZE", "RATE", "IOPS", "STATE", "FINISHED", "OUTLIER"])
        .align(4, Align::Right)
        .align(5, Align::Right);
    for b in rows {
        let rate = b.bytes_per_sec.map(format_rate).unwrap_or_default();
        let note = b.outlier.clone().or_else(|| b.error.clone()).unwrap_or_default();
        t.row([
            format!("osd.{}", b.target.osd_id),
            b.target.host.clone(),
            b.target.device_class.clone().unwrap_or_default(),
            b.target.size_bytes.map(format_disk_size).unwrap_or_default(),
            rate,
            b.iops.map(|i| format!("{i:.0}")).unwrap_or_default(),
            b.state.as_str().to_string(),
            b.finished_at.map(format_ms).unwrap_or_default(),
            note,
        ]);
    }
    t.plain()
}

/// `bench ls`: one line per cluster benchmark, newest first.
pub fn cluster_runs_table(rows: &[ClusterRun]) -> String {
    if rows.is_empty() {
        return "No cluster benchmarks reported\n".into();
    }
    let mut t = Table::new(["ID", "LABEL", "STATE", "POOL", "SECONDS", "WRITE", "SEQ", "RAND", "STARTED", "WARNINGS"])
        .align(0, Align::Right)
        .align(4, Align::Right);
    for r in rows {
        let b = &r.bench;
        let rate = |p: Pass| {
            b.results.iter().find(|x| x.pass == p).map(|x| format!("{:.0} MB/s", x.bandwidth_mb_s)).unwrap_or_default()
        };
        t.row([
            r.bench_id.to_string(),
            b.label.clone().unwrap_or_default(),
            b.phase.as_str().to_string(),
            b.pool.clone(),
            b.seconds.to_string(),
            rate(Pass::Write),
            rate(Pass::Seq),
            rate(Pass::Rand),
            format_ms(r.created_at),
            b.warnings.len().to_string(),
        ]);
    }
    t.plain()
}

/// `bench show ID`: the run, its cluster, each pass, and its warnings.
pub fn cluster_run_text(r: &ClusterRun) -> String {
    let b = &r.bench;
    let mut out = format!("Cluster benchmark {}", r.bench_id);
    if let Some(l) = &b.label {
        out.push_str(&format!(" ({l})"));
    }
    out.push_str(&format!(
        "\nstate: {}\npool: {} ({})\nseconds per pass: {}\nstarted: {}\n",
        b.phase.as_str(),
        b.pool,
        if b.own_pool { "made for the run and removed" } else { "given; only the run's objects removed" },
        b.seconds,
        format_ms(r.created_at)
    ));
    if let Some(s) = &b.shape {
        let classes: Vec<String> = s.osds_by_class.iter().map(|(c, n)| format!("{n} {}", c.to_uppercase())).collect();
        out.push_str(&format!(
            "cluster: {} OSDs up and in on {} hosts; pool size {}, {} PGs\n",
            classes.join(" + "),
            s.hosts,
            s.pool_size,
            s.pg_num
        ));
    }
    if let Some(h) = &b.health {
        out.push_str(&format!("health at start: {h}\n"));
    }
    if let Some(f) = &b.failure {
        out.push_str(&format!("failed: {f}\n"));
    }
    if !b.results.is_empty() {
        let mut t = Table::new(["PASS", "MB/S", "IOPS", "AVG LAT S", "MAX LAT S", "SECONDS", "OPS"]);
        for c in 1..7 {
            t = t.align(c, Align::Right);
        }
        for p in &b.results {
            t.row([
                p.pass.as_str().to_string(),
                format!("{:.1}", p.bandwidth_mb_s),
                format!("{:.0}", p.iops),
                format!("{:.4}", p.avg_latency_s),
                format!("{:.4}", p.max_latency_s),
                format!("{:.1}", p.seconds),
                p.ops.to_string(),
            ]);
        }
        out.push('\n');
        out.push_str(&t.plain());
    }
    for w in &b.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// `bench compare A B`: each metric of each pass side by side, with the change.
pub fn comparison_text(c: &ClusterComparison) -> String {
    let name = |r: &ClusterRun| match &r.bench.label {
        Some(l) => format!("{} ({l})", r.bench_id),
        None => r.bench_id.to_string(),
    };
    let mut out = format!("A: benchmark {}\nB: benchmark {}\n\n", name(&c.a), name(&c.b));
    let mut t = Table::new(["PASS", "METRIC", "A", "B", "CHANGE"])
        .align(2, Align::Right)
        .align(3, Align::Right)
        .align(4, Align::Right);
    let num = |v: Option<f64>, latency: bool| match v {
        Some(v) if latency => format!("{v:.4}"),
        Some(v) => format!("{v:.1}"),
        None => "-".into(),
    };
    for p in &c.passes {
        for m in &p.metrics {
            let latency = m.name.contains("latency");
            t.row([
                p.pass.as_str().to_string(),
                m.name.clone(),
                num(m.a, latency),
                num(m.b, latency),
                m.change_percent.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "-".into()),
            ]);
        }
    }
    out.push_str(&t.plain());
    for d in &c.differences {
        out.push_str(&format!("the clusters differ: {d}\n"));
    }
    for (which, r) in [("A", &c.a), ("B", &c.b)] {
        for w in &r.bench.warnings {
            out.push_str(&format!("{which}: warning: {w}\n"));
        }
    }
    out
}
