//! Disk probes as values: what fio runs on a blank disk before it becomes
//! an OSD (`ProbeJob`, the four jobs; `ProbeMode`, how long and how much),
//! what it measured (`JobFigures`, `ProbeFigures`), which disk the results
//! belong to (`DiskKey`: the disk's serial/WWN id, so that they follow the
//! disk from slot to slot; the slot only when the disk has no id), what a
//! device's probes say to the planner (`ProbeStatus`), the spec option that
//! makes a deployment wait for a probe and refuse slow disks (`gate`), and
//! which disks are far below comparable ones (`outliers`), and a disk's probes
//! found again under its serial after ceph-volume renamed it (`aliases`).
//!
//! Rates are in Ceph's MB/s (MiB per second, as `domain::bench`), so that a
//! disk's probe and its OSD's bench read in the same unit.

pub mod aliases;
pub mod gate;
pub mod outliers;
pub mod run;

use crate::domain::bench::outliers::Unit;

/// How long and over how much of the disk fio runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeMode {
    /// A first look: each job a few seconds over the first 256 MiB.
    Quick,
    /// Long enough to get past write caches and an SSD's SLC buffer on
    /// small disks: a minute per job over up to 16 GiB.
    Full,
}

const MIB: u64 = 1 << 20;

/// A disk smaller than this is not probed: the numbers would measure caches.
pub const MIN_DEVICE_BYTES: u64 = 64 * MIB;

impl ProbeMode {
    pub const ALL: [ProbeMode; 2] = [ProbeMode::Quick, ProbeMode::Full];

    pub fn as_str(self) -> &'static str {
        match self {
            ProbeMode::Quick => "quick",
            ProbeMode::Full => "full",
        }
    }

    pub fn parse(s: &str) -> Option<ProbeMode> {
        ProbeMode::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// fio's `--runtime` of each job.
    pub fn job_seconds(self) -> u32 {
        match self {
            ProbeMode::Quick => 5,
            ProbeMode::Full => 60,
        }
    }

    /// fio's `--ramp_time` of each job: not counted, lets caches fill first.
    pub fn ramp_seconds(self) -> u32 {
        match self {
            ProbeMode::Quick => 0,
            ProbeMode::Full => 5,
        }
    }

    /// At most this much of the disk, from its start, is written and read.
    pub fn region_cap(self) -> u64 {
        match self {
            ProbeMode::Quick => 256 * MIB,
            ProbeMode::Full => 16 << 30,
        }
    }

    /// The agent kills fio (its whole process group) past this: the jobs'
    /// time plus a minute for fio's start, its file layout and the end of
    /// the last I/O on a slow disk. The daemon waits this long plus its own
    /// margin for the agent's answer.
    pub fn time_bound_s(self) -> u64 {
        let jobs = ProbeJob::ALL.len() as u64 * u64::from(self.job_seconds() + self.ramp_seconds());
        jobs + 60
    }

    /// How much of a disk of `device_bytes` the jobs use: the cap, or the
    /// whole disk in whole MiB when it is smaller.
    pub fn region(self, device_bytes: u64) -> Result<u64, String> {
        if device_bytes < MIN_DEVICE_BYTES {
            return Err(format!(
                "the device has {device_bytes} bytes; a probe needs at least {MIN_DEVICE_BYTES} (64 MiB) \
                 to measure the disk rather than its cache"
            ));
        }
        Ok(self.region_cap().min(device_bytes / MIB * MIB))
    }
}

/// One of the four fio jobs, run one after the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProbeJob {
    /// 1 MiB writes, 16 in flight.
    SeqWrite,
    /// 1 MiB reads, 16 in flight.
    SeqRead,
    /// 4 KiB random reads, 32 in flight.
    RandRead4k,
    /// 4 KiB writes with `sync=1, iodepth=1`: every write waits until the
    /// disk says it is durable, as BlueStore's WAL writes do. An SSD
    /// without power-loss protection must flush its cache for each, and
    /// falls from tens of thousands of IOPS to a few hundred.
    SyncWrite4k,
}

impl ProbeJob {
    pub const ALL: [ProbeJob; 4] = [ProbeJob::SeqWrite, ProbeJob::SeqRead, ProbeJob::RandRead4k, ProbeJob::SyncWrite4k];

    /// fio's job name, and the name in the API.
    pub fn name(self) -> &'static str {
        match self {
            ProbeJob::SeqWrite => "seq-write",
            ProbeJob::SeqRead => "seq-read",
            ProbeJob::RandRead4k => "rand-read-4k",
            ProbeJob::SyncWrite4k => "sync-write-4k",
        }
    }

    pub fn parse(name: &str) -> Option<ProbeJob> {
        ProbeJob::ALL.into_iter().find(|j| j.name() == name)
    }

    /// fio's `--rw`.
    pub fn rw(self) -> &'static str {
        match self {
            ProbeJob::SeqWrite | ProbeJob::SyncWrite4k => "write",
            ProbeJob::SeqRead => "read",
            ProbeJob::RandRead4k => "randread",
        }
    }

    /// fio's `--bs`, in bytes.
    pub fn block_size(self) -> u64 {
        match self {
            ProbeJob::SeqWrite | ProbeJob::SeqRead => MIB,
            ProbeJob::RandRead4k | ProbeJob::SyncWrite4k => 4096,
        }
    }

    /// fio's `--iodepth`.
    pub fn iodepth(self) -> u32 {
        match self {
            ProbeJob::SeqWrite | ProbeJob::SeqRead => 16,
            ProbeJob::RandRead4k => 32,
            ProbeJob::SyncWrite4k => 1,
        }
    }

    /// fio's `--sync=1`.
    pub fn sync(self) -> bool {
        self == ProbeJob::SyncWrite4k
    }

    pub fn writes(self) -> bool {
        self.rw() != "read" && self.rw() != "randread"
    }

    /// The figure that judges the job: bandwidth for the big blocks,
    /// operations per second for the small ones.
    pub fn unit(self) -> Unit {
        match self {
            ProbeJob::SeqWrite | ProbeJob::SeqRead => Unit::Rate,
            ProbeJob::RandRead4k | ProbeJob::SyncWrite4k => Unit::Iops,
        }
    }

    /// How messages name what the job measured.
    pub fn title(self) -> &'static str {
        match self {
            ProbeJob::SeqWrite => "sequential writes",
            ProbeJob::SeqRead => "sequential reads",
            ProbeJob::RandRead4k => "4k random reads",
            ProbeJob::SyncWrite4k => "4k sync writes",
        }
    }

    /// The spec's threshold key for this job (`osdkeeper.probe.<key>`).
    pub fn threshold_key(self) -> &'static str {
        match self {
            ProbeJob::SeqWrite => "min_seq_write_mb_s",
            ProbeJob::SeqRead => "min_seq_read_mb_s",
            ProbeJob::RandRead4k => "min_rand_read_iops",
            ProbeJob::SyncWrite4k => "min_sync_write_iops",
        }
    }
}

/// What one job measured, in the direction it ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobFigures {
    pub job: ProbeJob,
    pub bytes_per_sec: f64,
    pub iops: f64,
    /// Mean completion latency, microseconds.
    pub mean_latency_us: f64,
    /// 99th percentile of the completion latency, microseconds, when fio reports it.
    pub p99_latency_us: Option<f64>,
    pub io_bytes: u64,
    pub runtime_ms: u64,
}

impl JobFigures {
    /// The job's judging figure (`ProbeJob::unit`).
    pub fn headline(&self) -> f64 {
        match self.job.unit() {
            Unit::Rate => self.bytes_per_sec,
            Unit::Iops => self.iops,
        }
    }
}

/// The four headline figures of a probe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeFigures {
    pub seq_write_bps: f64,
    pub seq_read_bps: f64,
    pub rand_read_iops: f64,
    pub sync_write_iops: f64,
}

impl ProbeFigures {
    /// From the jobs' figures; every job must be there, once.
    pub fn from_jobs(jobs: &[JobFigures]) -> Result<ProbeFigures, String> {
        let get = |job: ProbeJob| -> Result<f64, String> {
            let mut found = jobs.iter().filter(|j| j.job == job);
            match (found.next(), found.next()) {
                (Some(j), None) => Ok(j.headline()),
                (None, _) => Err(format!("fio reported no {} job", job.name())),
                (Some(_), Some(_)) => Err(format!("fio reported the {} job twice", job.name())),
            }
        };
        Ok(ProbeFigures {
            seq_write_bps: get(ProbeJob::SeqWrite)?,
            seq_read_bps: get(ProbeJob::SeqRead)?,
            rand_read_iops: get(ProbeJob::RandRead4k)?,
            sync_write_iops: get(ProbeJob::SyncWrite4k)?,
        })
    }

    pub fn of(&self, job: ProbeJob) -> f64 {
        match job {
            ProbeJob::SeqWrite => self.seq_write_bps,
            ProbeJob::SeqRead => self.seq_read_bps,
            ProbeJob::RandRead4k => self.rand_read_iops,
            ProbeJob::SyncWrite4k => self.sync_write_iops,
        }
    }

    /// "seq write 410 MB/s, seq read 520 MB/s, 4k rand read 81000 IOPS, 4k sync write 420 IOPS".
    pub fn summary(&self) -> String {
        let [w, r, rr, sw] = ProbeJob::ALL.map(|j| j.unit().show(self.of(j)));
        format!("seq write {w}, seq read {r}, 4k rand read {rr}, 4k sync write {sw}")
    }
}

/// Which disk probe results belong to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiskKey {
    /// The inventory's `device_id` (vendor, model and serial, or the WWN).
    Id(String),
    /// The disk reports neither serial nor WWN (a loop device, some virtual
    /// disks): results are kept for its slot, and say so.
    Slot { host: String, path: String },
}

impl DiskKey {
    pub fn of(host: &str, path: &str, device_id: &str) -> DiskKey {
        if device_id.trim().is_empty() {
            DiskKey::Slot { host: host.to_string(), path: path.to_string() }
        } else {
            DiskKey::Id(device_id.to_string())
        }
    }

    /// As stored: `id:<device id>` or `slot:<host>:<path>`.
    pub fn stored(&self) -> String {
        match self {
            DiskKey::Id(id) => format!("id:{id}"),
            DiskKey::Slot { host, path } => format!("slot:{host}:{path}"),
        }
    }

    pub fn parse(stored: &str) -> Option<DiskKey> {
        if let Some(id) = stored.strip_prefix("id:") {
            return (!id.is_empty()).then(|| DiskKey::Id(id.to_string()));
        }
        // Host names hold no ':', device paths may.
        let (host, path) = stored.strip_prefix("slot:")?.split_once(':')?;
        (!host.is_empty() && !path.is_empty()).then(|| DiskKey::Slot { host: host.into(), path: path.into() })
    }

    pub fn by_slot(&self) -> bool {
        matches!(self, DiskKey::Slot { .. })
    }

    /// A second name of the disk, its serial (`serial:<serial>`), under
    /// which its probes are found again when ceph-volume of another release
    /// gives it another `device_id` (`domain::device_id`); none for a slot.
    pub fn alias(&self) -> Option<String> {
        match self {
            DiskKey::Id(id) => super::device_id::serial(id).map(|s| format!("serial:{s}")),
            DiskKey::Slot { .. } => None,
        }
    }
    /// How operators read it: the id, or the slot with why.
    pub fn shown(&self) -> String {
        match self {
            DiskKey::Id(id) => id.clone(),
            DiskKey::Slot { host, path } => format!("{host}:{path} (no serial/WWN: results stay with the slot)"),
        }
    }
}

/// A finished probe, as the planner and the listings need it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeDone {
    pub probe_id: i64,
    pub mode: ProbeMode,
    pub figures: ProbeFigures,
    pub finished_at: i64,
    /// Why it is far below comparable disks (`outliers`), if it is.
    pub outlier: Option<String>,
}

/// What a disk's probes say: its latest finished one, whether one is
/// queued or running, and why the latest failed when it is newer than the
/// latest finished one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProbeStatus {
    pub done: Option<ProbeDone>,
    pub pending: bool,
    pub failure: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(job: ProbeJob, bps: f64, iops: f64) -> JobFigures {
        JobFigures {
            job,
            bytes_per_sec: bps,
            iops,
            mean_latency_us: 1.0,
            p99_latency_us: None,
            io_bytes: 1,
            runtime_ms: 1,
        }
    }

    #[test]
    fn modes_are_bounded_and_small_disks_refused() {
        assert_eq!(ProbeMode::Quick.time_bound_s(), 4 * 5 + 60);
        assert_eq!(ProbeMode::Full.time_bound_s(), 4 * 65 + 60);
        assert_eq!(ProbeMode::Quick.region(10 << 30), Ok(256 << 20));
        assert_eq!(ProbeMode::Full.region(10 << 30), Ok(10 << 30), "a disk below the cap is used whole");
        assert_eq!(ProbeMode::Full.region((100 << 20) + 5), Ok(100 << 20), "whole MiB");
        let e = ProbeMode::Quick.region(1 << 20).unwrap_err();
        assert!(e.starts_with("the device has 1048576 bytes; a probe needs at least 67108864"), "{e}");
        assert_eq!(ProbeMode::parse("full"), Some(ProbeMode::Full));
        assert_eq!(ProbeMode::parse("Full"), None);
    }

    #[test]
    fn the_sync_job_is_the_one_that_waits_for_each_write() {
        let sync: Vec<ProbeJob> = ProbeJob::ALL.into_iter().filter(|j| j.sync()).collect();
        assert_eq!(sync, [ProbeJob::SyncWrite4k]);
        assert_eq!((ProbeJob::SyncWrite4k.iodepth(), ProbeJob::SyncWrite4k.block_size()), (1, 4096));
        assert!(ProbeJob::SyncWrite4k.writes() && ProbeJob::SeqWrite.writes());
        assert!(!ProbeJob::SeqRead.writes() && !ProbeJob::RandRead4k.writes());
        for j in ProbeJob::ALL {
            assert_eq!(ProbeJob::parse(j.name()), Some(j));
        }
    }

    #[test]
    fn figures_need_every_job_once() {
        let jobs = [
            job(ProbeJob::SeqWrite, 400.0 * 1_048_576.0, 400.0),
            job(ProbeJob::SeqRead, 500.0 * 1_048_576.0, 500.0),
            job(ProbeJob::RandRead4k, 300.0 * 1_048_576.0, 80_000.0),
            job(ProbeJob::SyncWrite4k, 1.6 * 1_048_576.0, 420.0),
        ];
        let f = ProbeFigures::from_jobs(&jobs).unwrap();
        assert_eq!(f.rand_read_iops, 80_000.0, "4k jobs are judged by IOPS");
        assert_eq!(f.seq_write_bps, 400.0 * 1_048_576.0, "big blocks by bandwidth");
        assert_eq!(
            f.summary(),
            "seq write 400 MB/s, seq read 500 MB/s, 4k rand read 80000 IOPS, 4k sync write 420 IOPS"
        );
        assert_eq!(ProbeFigures::from_jobs(&jobs[..3]).unwrap_err(), "fio reported no sync-write-4k job");
        let twice = [jobs[0], jobs[1], jobs[2], jobs[3], jobs[3]];
        assert_eq!(ProbeFigures::from_jobs(&twice).unwrap_err(), "fio reported the sync-write-4k job twice");
    }

    #[test]
    fn disks_are_known_by_their_id_else_by_slot_visibly() {
        let by_id = DiskKey::of("f5-422-01", "/dev/sdb", "SEAGATE_ST4000NM0025_ZC18JX1Q");
        assert_eq!(by_id.stored(), "id:SEAGATE_ST4000NM0025_ZC18JX1Q");
        assert_eq!(by_id.shown(), "SEAGATE_ST4000NM0025_ZC18JX1Q");
        assert_eq!(DiskKey::parse(&by_id.stored()), Some(by_id.clone()));
        // The same disk in another slot, even another host, is the same disk.
        assert_eq!(DiskKey::of("f5-422-02", "/dev/sdk", "SEAGATE_ST4000NM0025_ZC18JX1Q"), by_id);
        let slot = DiskKey::of("f5-422-01", "/dev/loop7", " ");
        assert!(slot.by_slot());
        assert_eq!(slot.stored(), "slot:f5-422-01:/dev/loop7");
        assert_eq!(slot.shown(), "f5-422-01:/dev/loop7 (no serial/WWN: results stay with the slot)");
        assert_eq!(DiskKey::parse(&slot.stored()), Some(slot));
        for bad in ["", "id:", "slot:", "slot:h", "slot::/dev/x", "serial:x"] {
            assert_eq!(DiskKey::parse(bad), None, "{bad}");
        }
    }
}
