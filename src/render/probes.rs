//! Disk probes: `device probes` (each disk's latest, or the last N),
//! `device probe` and `device probes ID` (one probe, job by job), and the
//! short form `device ls --wide` and the dry-run show.

use std::fmt::Write as _;

use super::table::{Align, Table};
use crate::clock::format_ms;
use crate::domain::bench::{format_disk_size, format_rate};
use crate::domain::probe::{ProbeFigures, ProbeJob};
use crate::wire::api::devices::DeviceProbe;
use crate::wire::api::probes::{DiskProbe, ProbeState};

/// "w 410 / r 520 MB/s, 4k: r 81000 / sync w 420 IOPS".
pub fn figures_short(f: &ProbeFigures) -> String {
    let mb = |v: f64| format_rate(v).trim_end_matches(" MB/s").to_string();
    format!(
        "w {} / r {} MB/s, 4k: r {:.0} / sync w {:.0} IOPS",
        mb(f.seq_write_bps),
        mb(f.seq_read_bps),
        f.rand_read_iops,
        f.sync_write_iops
    )
}

/// A device's probes in one cell (`device ls --wide`).
pub fn device_probe_cell(p: &DeviceProbe) -> String {
    let mut parts = Vec::new();
    if let (Some(f), Some(mode), Some(id)) = (&p.figures, p.mode, p.probe_id) {
        parts.push(format!("{} ({} #{id})", figures_short(&ProbeFigures::from(*f)), mode.as_str()));
    }
    if p.outlier.is_some() {
        parts.push("OUTLIER".into());
    }
    if p.pending {
        parts.push("probing".into());
    } else if p.failure.is_some() {
        parts.push("last probe failed".into());
    }
    parts.join("; ")
}

pub fn probes_table(rows: &[DiskProbe]) -> String {
    if rows.is_empty() {
        return "No disk probes reported\n".into();
    }
    let mut t = Table::new([
        "ID",
        "HOST",
        "PATH",
        "DISK",
        "TYPE",
        "SIZE",
        "MODE",
        "STATE",
        "SEQ W",
        "SEQ R",
        "4K RAND R",
        "4K SYNC W",
        "FINISHED",
        "NOTE",
    ]);
    for c in [0, 8, 9, 10, 11] {
        t = t.align(c, Align::Right);
    }
    for p in rows {
        let f = p.figures.map(crate::domain::probe::ProbeFigures::from);
        let f = f.as_ref();
        let show = |job: ProbeJob| f.map(|f| job.unit().show(f.of(job))).unwrap_or_default();
        let note = p.outlier.clone().or_else(|| p.error.clone()).unwrap_or_default();
        t.row([
            p.probe_id.to_string(),
            p.host.clone(),
            p.path.clone(),
            p.disk.clone(),
            p.device_class.clone().unwrap_or_default(),
            p.size_bytes.map(format_disk_size).unwrap_or_default(),
            p.mode.as_str().to_string(),
            p.state.as_str().to_string(),
            show(ProbeJob::SeqWrite),
            show(ProbeJob::SeqRead),
            show(ProbeJob::RandRead4k),
            show(ProbeJob::SyncWrite4k),
            p.finished_at.map(format_ms).unwrap_or_default(),
            note,
        ]);
    }
    t.plain()
}

/// One probe: the disk, each job's figures, what the agent did.
pub fn probe_text(p: &DiskProbe) -> String {
    let mut out = String::new();
    let _ =
        writeln!(out, "Probe {} of {} on {} ({}): {}", p.probe_id, p.path, p.host, p.mode.as_str(), p.state.as_str());
    let _ = writeln!(out, "disk: {}", p.disk);
    if let Some(e) = &p.error {
        let _ = writeln!(out, "error: {e}");
    }
    if !p.jobs.is_empty() {
        let mut t = Table::new(["JOB", "MB/s", "IOPS", "MEAN LAT", "P99 LAT", "SECONDS"]);
        for c in 1..=5 {
            t = t.align(c, Align::Right);
        }
        for j in &p.jobs {
            t.row([
                j.job.name().to_string(),
                format_rate(j.bytes_per_sec).trim_end_matches(" MB/s").to_string(),
                format!("{:.0}", j.iops),
                latency(j.mean_latency_us),
                j.p99_latency_us.map(latency).unwrap_or_default(),
                format!("{:.1}", j.runtime_ms as f64 / 1000.0),
            ]);
        }
        out.push_str(&t.plain());
    }
    if let Some(o) = &p.outlier {
        let _ = writeln!(out, "OUTLIER: {o}");
    }
    if p.state == ProbeState::Done && p.by_slot {
        let _ =
            writeln!(out, "note: the disk reports no serial/WWN; these results belong to its slot, not to the disk");
    }
    if let Some(c) = &p.command {
        let _ = writeln!(out, "command: {c}");
    }
    out
}

/// Microseconds as "0.41 ms" or "2.2 s".
fn latency(us: f64) -> String {
    if us >= 1_000_000.0 {
        format!("{:.1} s", us / 1_000_000.0)
    } else if us >= 10_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::bench::MB;

    #[test]
    fn short_forms_read_at_a_glance() {
        let f = ProbeFigures {
            seq_write_bps: 410.0 * MB,
            seq_read_bps: 520.0 * MB,
            rand_read_iops: 81_000.4,
            sync_write_iops: 420.0,
        };
        assert_eq!(figures_short(&f), "w 410 / r 520 MB/s, 4k: r 81000 / sync w 420 IOPS");
        let p = DeviceProbe {
            probe_id: Some(3),
            mode: Some(crate::domain::probe::ProbeMode::Quick),
            figures: Some(f.into()),
            finished_at: Some(0),
            outlier: Some("...".into()),
            pending: true,
            failure: None,
            by_slot: true,
        };
        assert_eq!(
            device_probe_cell(&p),
            "w 410 / r 520 MB/s, 4k: r 81000 / sync w 420 IOPS (quick #3); OUTLIER; probing"
        );
        assert_eq!(
            (latency(410.0), latency(25_000.0), latency(2_200_000.0)),
            ("0.41 ms".into(), "25 ms".into(), "2.2 s".into())
        );
    }
}
