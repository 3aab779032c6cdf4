//! fio (Debian's package, 3.x): the command line of a disk probe's four
//! jobs (`domain::probe::ProbeJob`), one after the other on the raw device,
//! and the reading of its `--output-format=json` report.
//!
//! The jobs use `direct=1` (the page cache would measure memory), `libaio`
//! (so that `iodepth` means I/Os in flight), `time_based` over a region at
//! the start of the disk (the mode's runtime, however fast the disk: the
//! probe is bounded in time, and never writes past the region), and random
//! data in the buffers (fio's default), because controllers that compress
//! make zeros look fast.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::domain::probe::{JobFigures, ProbeJob, ProbeMode};

/// The arguments after `fio` for a probe of `path`, over its first
/// `region` bytes.
pub fn args(mode: ProbeMode, path: &str, region: u64) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--output-format=json".into(),
        "--eta=never".into(),
        format!("--filename={path}"),
        "--direct=1".into(),
        "--ioengine=libaio".into(),
        format!("--size={region}"),
        format!("--runtime={}", mode.job_seconds()),
        "--time_based".into(),
        "--norandommap".into(),
        "--randrepeat=0".into(),
    ];
    if mode.ramp_seconds() > 0 {
        a.push(format!("--ramp_time={}", mode.ramp_seconds()));
    }
    for (i, job) in ProbeJob::ALL.into_iter().enumerate() {
        a.push(format!("--name={}", job.name()));
        if i > 0 {
            // Each job starts when the one before has finished.
            a.push("--stonewall".into());
        }
        a.push(format!("--rw={}", job.rw()));
        a.push(format!("--bs={}", job.block_size()));
        a.push(format!("--iodepth={}", job.iodepth()));
        if job.sync() {
            a.push("--sync=1".into());
        }
    }
    a
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FioError {
    #[error("fio printed no JSON report ({0})")]
    NoReport(String),
    #[error("fio's JSON report is unreadable: {0}")]
    Unreadable(String),
    #[error("fio's job {job} failed with error {code}")]
    JobFailed { job: String, code: i64 },
    #[error("fio reported a job osdkeeper did not ask for: {0}")]
    UnknownJob(String),
}

/// What the report says, job by job in the order they ran.
#[derive(Debug, Clone, PartialEq)]
pub struct FioReport {
    /// "fio-3.33".
    pub version: String,
    pub jobs: Vec<JobFigures>,
}

impl FioReport {
    /// The probe's headline figures, or which job is missing or twice.
    pub fn figures(&self) -> Result<crate::domain::probe::ProbeFigures, String> {
        crate::domain::probe::ProbeFigures::from_jobs(&self.jobs)
    }
}

#[derive(Deserialize)]
struct Report {
    #[serde(rename = "fio version", default)]
    version: String,
    jobs: Vec<Job>,
}

#[derive(Deserialize)]
struct Job {
    jobname: String,
    #[serde(default)]
    error: i64,
    read: Direction,
    write: Direction,
}

#[derive(Deserialize)]
struct Direction {
    io_bytes: u64,
    bw_bytes: f64,
    iops: f64,
    runtime: u64,
    clat_ns: Latency,
}

#[derive(Deserialize)]
struct Latency {
    mean: f64,
    #[serde(default)]
    percentile: BTreeMap<String, f64>,
}

/// Reads fio's stdout. fio may print notes before the report; the report
/// starts at the first line that opens a JSON object.
pub fn parse(stdout: &str) -> Result<FioReport, FioError> {
    let start =
        stdout.match_indices('{').map(|(i, _)| i).find(|&i| i == 0 || stdout.as_bytes()[i - 1] == b'\n').ok_or_else(
            || {
                let first = stdout.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output");
                FioError::NoReport(first.chars().take(200).collect())
            },
        )?;
    let report: Report = serde_json::from_str(&stdout[start..]).map_err(|e| FioError::Unreadable(e.to_string()))?;
    let mut jobs = Vec::new();
    for j in report.jobs {
        let job = ProbeJob::parse(&j.jobname).ok_or_else(|| FioError::UnknownJob(j.jobname.clone()))?;
        if j.error != 0 {
            return Err(FioError::JobFailed { job: j.jobname, code: j.error });
        }
        let d = if job.writes() { &j.write } else { &j.read };
        jobs.push(JobFigures {
            job,
            bytes_per_sec: d.bw_bytes,
            iops: d.iops,
            mean_latency_us: d.clat_ns.mean / 1000.0,
            p99_latency_us: d.clat_ns.percentile.get("99.000000").map(|ns| ns / 1000.0),
            io_bytes: d.io_bytes,
            runtime_ms: d.runtime,
        });
    }
    Ok(FioReport { version: report.version, jobs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::probe::ProbeFigures;

    /// fio 3.33 (Debian 12) on a 2 GiB loop device of this machine, run
    /// with `args(ProbeMode::Quick, "/dev/loop0", 256 << 20)`.
    const LOOP_QUICK: &str = include_str!("../../tests/fixtures/agent/fio-loop-quick.json");

    #[test]
    fn reads_a_real_report_job_by_job() {
        let r = parse(LOOP_QUICK).unwrap();
        assert_eq!(r.version, "fio-3.33");
        let names: Vec<&str> = r.jobs.iter().map(|j| j.job.name()).collect();
        assert_eq!(names, ["seq-write", "seq-read", "rand-read-4k", "sync-write-4k"]);
        for j in &r.jobs {
            assert!(j.bytes_per_sec > 0.0 && j.iops > 0.0 && j.io_bytes > 0, "{j:?}");
            // Each job ran for the mode's runtime (fio stops within its tick).
            let ms = u64::from(ProbeMode::Quick.job_seconds()) * 1000;
            assert!(j.runtime_ms >= ms && j.runtime_ms < ms + 500, "{j:?}");
            assert!(j.p99_latency_us.unwrap() >= j.mean_latency_us * 0.5, "{j:?}");
        }
        // The figures each job is judged by, in the direction it ran.
        let sync = &r.jobs[3];
        assert!((sync.bytes_per_sec / sync.iops - 4096.0).abs() < 64.0, "4 KiB per write: {sync:?}");
        let seq = &r.jobs[0];
        assert!((seq.bytes_per_sec / seq.iops - 1_048_576.0).abs() < 16_384.0, "1 MiB per write: {seq:?}");
        let f = ProbeFigures::from_jobs(&r.jobs).unwrap();
        assert_eq!(f.sync_write_iops, sync.iops);
        assert_eq!(f.seq_write_bps, seq.bytes_per_sec);
    }

    #[test]
    fn notes_before_the_report_and_failures() {
        let noted = format!("fio: note: both iodepth >= 1 and synchronous I/O engine are selected\n{LOOP_QUICK}");
        assert_eq!(parse(&noted).unwrap().jobs.len(), 4);
        assert_eq!(
            parse("fio: failed opening file /dev/sdz\n").unwrap_err(),
            FioError::NoReport("fio: failed opening file /dev/sdz".into())
        );
        assert!(matches!(parse("{\"jobs\": 3}"), Err(FioError::Unreadable(_))));
        let failed = LOOP_QUICK.replacen("\"error\" : 0", "\"error\" : 5", 1);
        assert_eq!(parse(&failed).unwrap_err(), FioError::JobFailed { job: "seq-write".into(), code: 5 });
        let renamed = LOOP_QUICK.replacen("\"jobname\" : \"seq-read\"", "\"jobname\" : \"mine\"", 1);
        assert_eq!(parse(&renamed).unwrap_err(), FioError::UnknownJob("mine".into()));
    }

    #[test]
    fn the_command_line_runs_the_jobs_in_turn_within_the_region() {
        let a = args(ProbeMode::Quick, "/dev/sdb", 256 << 20);
        let text = a.join(" ");
        assert!(
            text.starts_with(
                "--output-format=json --eta=never --filename=/dev/sdb --direct=1 --ioengine=libaio --size=268435456 \
             --runtime=5 --time_based"
            ),
            "{text}"
        );
        assert!(!text.contains("ramp_time"), "quick has no ramp");
        assert!(text.ends_with("--name=sync-write-4k --stonewall --rw=write --bs=4096 --iodepth=1 --sync=1"), "{text}");
        assert_eq!(a.iter().filter(|x| *x == "--stonewall").count(), 3);
        assert_eq!(a.iter().filter(|x| *x == "--sync=1").count(), 1);
        assert!(args(ProbeMode::Full, "/dev/sdb", 1 << 34).contains(&"--ramp_time=5".to_string()));
    }
}
