//! The host agent's HTTP API, shared by the agent (`agent_server`) and the
//! daemon's client for it. JSON over HTTP; with a token configured every
//! request carries `Authorization: Bearer <OSDKEEPER_AGENT_TOKEN>`.
//!
//! | method + path | body | answer |
//! |---|---|---|
//! | `GET /healthz` | | `{"status": "ok"}` (no token needed) |
//! | `GET /v1/inventory` | | `InventoryReport` |
//! | `POST /v1/ceph-volume` | `CephVolumeRequest` | `CommandResult` (also when the command failed), or 4xx `AgentErrorBody` when refused |
//! | `GET /v1/osd/{id}` | | `OsdDaemonStatus` |
//! | `POST /v1/osd/{id}/stop` | | `OsdDaemonStatus` after stopping (idempotent: a stopped daemon stays stopped) |
//! | `POST /v1/zap` | `ZapRequest` | `ZapResult`, or 4xx `AgentErrorBody` when refused (busy device, not in inventory or `--devices`, no force) |
//! | `GET /v1/osds` | | `HostOsds`: the OSDs ceph-volume finds on this host's devices (`raw list`, `lvm list`) |
//! | `POST /v1/osd/{id}/activate` | `ActivateRequest` | `CommandResult` of `ceph-volume raw activate` / `lvm activate` (also when it failed) |
//! | `POST /v1/osd/{id}/start` | | `OsdDaemonStatus` once a process serves the id (idempotent: a running daemon is left alone) |
//! | `POST /v1/probe` | `ProbeRequest` | `ProbeResult` (fio's four jobs on a blank device), or 4xx `AgentErrorBody` when refused (not blank, another disk at the path, no intent) |

use serde::{Deserialize, Serialize};

/// Where the agent's device list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InventorySource {
    /// `ceph-volume inventory --format json` on the host.
    CephVolume,
    /// The kernel's own view (lsblk and /sys/block), in ceph-volume's format.
    Kernel,
    /// A fixed file given with `--inventory-file` (tests, demos).
    File,
}

/// `GET /v1/inventory`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InventoryReport {
    /// The agent's host name (`--host-name`, default the system hostname).
    pub host: String,
    pub source: InventorySource,
    /// When the inventory was taken, in milliseconds since the Unix epoch.
    pub taken_at_ms: i64,
    /// Exactly what `ceph-volume inventory --format json` prints: a list of devices.
    pub devices: Vec<serde_json::Value>,
    /// False when this agent cannot create OSDs (for example with `--inventory-file`).
    pub can_create_osds: bool,
    /// Why, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `POST /v1/ceph-volume`: run one planned ceph-volume command.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CephVolumeRequest {
    /// The arguments after `ceph-volume`, e.g. `["lvm", "batch", "--no-auto", "/dev/sdb", "--yes", "--no-systemd"]`.
    /// Only `lvm batch` and `raw prepare` are accepted.
    pub args: Vec<String>,
    /// Set as `CEPH_VOLUME_OSDSPEC_AFFINITY`, as cephadm does, so that the
    /// OSDs remember which spec made them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osdspec_affinity: Option<String>,
}

/// The outcome of a command the agent ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandResult {
    /// The command line as run, for events and logs.
    pub command: String,
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Every 4xx/5xx answer of the agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentErrorBody {
    pub error: String,
}

/// `GET /v1/osd/{id}` and the answer of `POST /v1/osd/{id}/stop`: whether
/// the OSD's daemon runs on this host, judged on the host itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OsdDaemonStatus {
    pub osd_id: u32,
    pub running: bool,
    /// ceph-osd processes serving this id.
    #[serde(default)]
    pub pids: Vec<u32>,
    /// What was run or seen, for events ("systemctl stop ceph-osd@4", "no ceph-osd -i 4 process").
    #[serde(default)]
    pub detail: String,
}

/// `POST /v1/zap`: wipe a device's labels and signatures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZapRequest {
    pub path: String,
    /// Required: a zap destroys data.
    pub force: bool,
    /// Why (logged and shown), e.g. "removal of osd.4".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The outcome of a zap (refusals are 4xx `AgentErrorBody` with the reason).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZapResult {
    pub path: String,
    /// What was done, in order ("held /dev/loop4 exclusively", "zeroed 10 MiB at 0", ...).
    pub steps: Vec<String>,
}

/// How long and over how much of a disk a probe runs; what one fio job measured.
pub use crate::domain::probe::{JobFigures, ProbeFigures, ProbeJob, ProbeMode};

/// `POST /v1/probe`: fio on a blank device. It writes over the start of the
/// device, so it runs only on a device with nothing on it and nothing using
/// it, checked on the host right before fio starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRequest {
    pub path: String,
    pub mode: ProbeMode,
    /// Required: the probe overwrites what is on the device.
    #[serde(default)]
    pub yes_i_really_mean_it: bool,
    /// The disk id (`device_id`) the daemon saw at this path, if it had one:
    /// another disk found there now is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// Why (logged), e.g. "probe 12 requested by ops".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a probe measured (refusals are 4xx `AgentErrorBody` with the reason).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeResult {
    pub path: String,
    pub mode: ProbeMode,
    pub device_bytes: u64,
    /// How much of the device, from its start, the jobs used.
    pub region_bytes: u64,
    /// The fio command line as run.
    pub command: String,
    pub fio_version: String,
    /// Each job's figures, in the order they ran.
    pub jobs: Vec<JobFigures>,
    /// fio's JSON report as printed, for the record.
    pub fio_json: String,
    /// What was checked and done, in order.
    pub steps: Vec<String>,
    pub elapsed_ms: u64,
}

/// How ceph-volume made an OSD: `raw` (BlueStore straight on the device)
/// or `lvm` (on a logical volume).
pub use crate::domain::deploy::OsdKind;

/// One OSD ceph-volume lists on a host, from its on-disk label or LV tags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedOsd {
    pub osd_id: u32,
    pub osd_fsid: String,
    /// The cluster it belongs to (`ceph fsid`).
    pub cluster_fsid: String,
    pub kind: OsdKind,
    /// The device holding its data (for LVM: the physical device under the LV).
    pub device: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_device: Option<String>,
    /// The spec that made it (LVM tag `ceph.osdspec_affinity`), where recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osdspec_affinity: Option<String>,
}

/// `GET /v1/osds`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostOsds {
    pub osds: Vec<ListedOsd>,
    /// Listings that could not be read (e.g. `lvm list` on a host without LVM), for the log.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// `POST /v1/osd/{id}/activate`: which OSD (id and fsid must agree with the disk).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActivateRequest {
    pub osd_fsid: String,
    pub kind: OsdKind,
    /// The data device, for raw OSDs.
    pub device: String,
}
