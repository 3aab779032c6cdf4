//! Disk probes as stored: the probe's JSON (version 1; the migration wrote
//! the rows of the old `disk_probes` table in it) and its one effect. fio's
//! report is the output of the probe's action, kept apart from the state
//! so that listings do not read it.

use serde::{Deserialize, Serialize};

use super::{version_of, Codec, Ops};
use crate::domain::operation::{Kind, Operation};
use crate::domain::probe::run::{Probe, ProbePhase, RunFio};
use crate::domain::probe::{DiskKey, JobFigures, ProbeFigures, ProbeJob, ProbeMode};
use crate::store::backend::OperationQuery;
use crate::store::{Result, Topic};

/// The disk probe kind's codec: `store.ops::<ProbeCodec>()`.
pub struct ProbeCodec;

#[derive(Serialize, Deserialize)]
struct ProbeV1 {
    #[serde(default = "one")]
    v: u64,
    /// `DiskKey::stored()`.
    key: String,
    path: String,
    device_id: Option<String>,
    device_class: Option<String>,
    size_bytes: Option<i64>,
    model: Option<String>,
    mode: String,
    phase: String,
    started_at: Option<i64>,
    figures: Option<FiguresV1>,
    #[serde(default)]
    jobs: Vec<JobV1>,
    command: Option<String>,
    #[serde(default)]
    steps: Vec<String>,
    error: Option<String>,
}

fn one() -> u64 {
    1
}

#[derive(Serialize, Deserialize)]
struct FiguresV1 {
    seq_write_bps: f64,
    seq_read_bps: f64,
    rand_read_iops: f64,
    sync_write_iops: f64,
}

#[derive(Serialize, Deserialize)]
struct JobV1 {
    job: String,
    bytes_per_sec: f64,
    iops: f64,
    mean_latency_us: f64,
    p99_latency_us: Option<f64>,
    io_bytes: u64,
    runtime_ms: u64,
}

impl Codec for ProbeCodec {
    type State = Probe;
    type Effect = RunFio;
    const KIND: Kind = Kind::DiskProbe;

    fn encode_state(p: &Probe) -> String {
        let v1 = ProbeV1 {
            v: 1,
            key: p.key.stored(),
            path: p.path.clone(),
            device_id: p.device_id.clone(),
            device_class: p.device_class.clone(),
            size_bytes: p.size_bytes.map(|s| s as i64),
            model: p.model.clone(),
            mode: p.mode.as_str().into(),
            phase: p.phase.as_str().into(),
            started_at: p.started_at,
            figures: p.figures.map(|f| FiguresV1 {
                seq_write_bps: f.seq_write_bps,
                seq_read_bps: f.seq_read_bps,
                rand_read_iops: f.rand_read_iops,
                sync_write_iops: f.sync_write_iops,
            }),
            jobs: p
                .jobs
                .iter()
                .map(|j| JobV1 {
                    job: j.job.name().into(),
                    bytes_per_sec: j.bytes_per_sec,
                    iops: j.iops,
                    mean_latency_us: j.mean_latency_us,
                    p99_latency_us: j.p99_latency_us,
                    io_bytes: j.io_bytes,
                    runtime_ms: j.runtime_ms,
                })
                .collect(),
            command: p.command.clone(),
            steps: p.steps.clone(),
            error: p.error.clone(),
        };
        serde_json::to_string(&v1).expect("a probe serializes")
    }

    fn decode_state(json: &str) -> std::result::Result<Probe, String> {
        match version_of(json)? {
            1 => {}
            v => return Err(format!("version {v} is newer than this osdkeeper reads")),
        }
        let s: ProbeV1 = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let jobs = s
            .jobs
            .into_iter()
            .map(|j| {
                Ok(JobFigures {
                    job: ProbeJob::parse(&j.job).ok_or_else(|| format!("job {:?}", j.job))?,
                    bytes_per_sec: j.bytes_per_sec,
                    iops: j.iops,
                    mean_latency_us: j.mean_latency_us,
                    p99_latency_us: j.p99_latency_us,
                    io_bytes: j.io_bytes,
                    runtime_ms: j.runtime_ms,
                })
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        Ok(Probe {
            key: DiskKey::parse(&s.key).ok_or_else(|| format!("disk key {:?}", s.key))?,
            path: s.path,
            device_id: s.device_id,
            device_class: s.device_class,
            size_bytes: s.size_bytes.map(|b| b.max(0) as u64),
            model: s.model,
            mode: ProbeMode::parse(&s.mode).ok_or_else(|| format!("mode {:?}", s.mode))?,
            phase: ProbePhase::parse(&s.phase).ok_or_else(|| format!("phase {:?}", s.phase))?,
            started_at: s.started_at,
            figures: s.figures.map(|f| ProbeFigures {
                seq_write_bps: f.seq_write_bps,
                seq_read_bps: f.seq_read_bps,
                rand_read_iops: f.rand_read_iops,
                sync_write_iops: f.sync_write_iops,
            }),
            jobs,
            command: s.command,
            steps: s.steps,
            error: s.error,
        })
    }

    fn encode_effect(_: &RunFio) -> String {
        r#"{"effect":"probe"}"#.into()
    }

    fn decode_effect(json: &str) -> std::result::Result<RunFio, String> {
        #[derive(Deserialize)]
        struct E {
            effect: String,
        }
        let e: E = serde_json::from_str(json).map_err(|e| e.to_string())?;
        (e.effect == "probe").then_some(RunFio).ok_or_else(|| format!("effect {:?}", e.effect))
    }

    fn topics(_finished: bool) -> Vec<Topic> {
        vec![Topic::DiskProbes]
    }
}

impl Ops<'_, ProbeCodec> {
    /// Each disk's probes that matter now: its latest, and its latest
    /// finished one when that is older, oldest first.
    pub async fn current(&self) -> Result<Vec<Operation<Probe>>> {
        self.read(OperationQuery::LatestPerSubjectAndIn(ProbePhase::Done.as_str())).await
    }
}
