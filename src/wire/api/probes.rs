//! `/api/v1/devices/probe` and `/api/v1/devices/probes`: disk probes (fio
//! on a blank disk before it becomes an OSD), asked for with explicit
//! intent, stored per disk (its serial/WWN id, or its slot when it has
//! none), and the disks far below comparable ones.

use serde::{Deserialize, Serialize};

pub use crate::domain::probe::ProbeMode;

mirror! {
    /// What one job measured, in the direction it ran.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct JobFigures = crate::domain::probe::JobFigures {
        pub job: crate::domain::probe::ProbeJob,
        pub bytes_per_sec: f64,
        pub iops: f64,
        /// Mean completion latency, microseconds.
        pub mean_latency_us: f64,
        /// 99th percentile of the completion latency, microseconds, when fio reports it.
        pub p99_latency_us: Option<f64>,
        pub io_bytes: u64,
        pub runtime_ms: u64,
    }
}

mirror! {
    /// The four headline figures of a probe.
    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct ProbeFigures = crate::domain::probe::ProbeFigures {
        pub seq_write_bps: f64,
        pub seq_read_bps: f64,
        pub rand_read_iops: f64,
        pub sync_write_iops: f64,
    }
}

carry_pairs!(crate::domain::probe::JobFigures => JobFigures, crate::domain::probe::ProbeFigures => ProbeFigures);
pub use crate::wire::api::bench::BenchState as ProbeState;

/// `POST /api/v1/devices/probe`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeBody {
    pub host: String,
    pub path: String,
    /// quick (the default) or full.
    #[serde(default)]
    pub mode: Option<ProbeMode>,
    /// Required: a probe OVERWRITES the start of the device (it runs on
    /// blank devices only).
    #[serde(default)]
    pub yes_i_really_mean_it: bool,
}

/// `GET /api/v1/devices/probes`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct ProbeQuery {
    /// The last N probes, newest first, instead of each disk's latest.
    pub history: Option<i64>,
    /// Only this host's.
    pub host: Option<String>,
}

/// One disk probe: asked, running, or with its figures (from the stored
/// probe operation); `outlier` is worked out when it is shown, and
/// `fio_json` sent only for one probe (`GET /api/v1/devices/probes/{probe_id}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DiskProbe {
    pub probe_id: i64,
    pub host: String,
    pub path: String,
    /// The disk the results belong to: its id, or its slot with why.
    pub disk: String,
    /// The disk has no serial/WWN: the results stay with the slot (host and path).
    pub by_slot: bool,
    pub device_id: Option<String>,
    /// hdd, ssd or unknown, from the inventory when it was asked.
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub mode: ProbeMode,
    pub state: ProbeState,
    pub requested_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub figures: Option<ProbeFigures>,
    #[serde(default)]
    pub jobs: Vec<JobFigures>,
    /// The fio command line the agent ran.
    pub command: Option<String>,
    /// What the agent checked and did, in order.
    #[serde(default)]
    pub steps: Vec<String>,
    pub error: Option<String>,
    /// The token that asked.
    pub actor: Option<String>,
    /// Why it is far below comparable disks, for a disk's latest finished probe.
    pub outlier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_json: Option<String>,
}
