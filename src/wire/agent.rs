//! The host agent's HTTP API, shared by the agent (`agent_server`) and the
//! daemon's client for it. JSON over HTTP; with a token configured every
//! request carries `Authorization: Bearer <OSDKEEPER_AGENT_TOKEN>`.
//!
//! | method + path | body | answer |
//! |---|---|---|
//! | `GET /healthz` | | `{"status": "ok"}` (no token needed) |
//! | `GET /v1/inventory` | | `InventoryReport` with an `ETag`; `304 Not Modified` (no body) to an `If-None-Match` that names the current one |
//! | `POST /v1/ceph-volume` | `CephVolumeRequest` | `CommandResult` (also when the command failed), or 4xx `AgentErrorBody` when refused |
//! | `GET /v1/osd/{id}` | | `OsdDaemonStatus` |
//! | `POST /v1/osd/{id}/stop` | `StopRequest` | `OsdDaemonStatus` after stopping (idempotent: a stopped daemon stays stopped), or 409 `identity_mismatch` when another OSD's daemon serves the id |
//! | `POST /v1/zap` | `ZapRequest` | `ZapResult`, or 4xx `AgentErrorBody` when refused (busy device, not in inventory or `--devices`, no force; `identity_mismatch`: another disk, or another OSD's or cluster's volumes on it) |
//! | `POST /v1/zap-osd` | `ZapOsdRequest` | `ZapOsdResult`, or 4xx `AgentErrorBody` when refused (the OSD runs, no force; `identity_mismatch`: its LVs on a device not named) |
//! | `GET /v1/osds` | | `HostOsds`: the OSDs ceph-volume finds on this host's devices (`raw list`, `lvm list`) |
//! | `POST /v1/osd/{id}/activate` | `ActivateRequest` | `CommandResult` of `ceph-volume raw activate` / `lvm activate` (also when it failed) |
//! | `POST /v1/osd/{id}/start` | | `OsdDaemonStatus` once a process serves the id (idempotent: a running daemon is left alone) |
//! | `POST /v1/probe` | `ProbeRequest` | `ProbeResult` (fio's four jobs on a blank device), or 4xx `AgentErrorBody` when refused (not blank, another disk at the path, no intent) |
//! | `POST /v1/replace-header` | `ReplaceHeaderRequest` | `ReplaceHeaderResult` (ceph-volume's "being replaced" header written or erased on a blank disk), or 4xx `AgentErrorBody` when refused (not blank, another disk at the path) |
//!
//! An error answer (`AgentErrorBody`) says what went wrong and its
//! `AgentErrorCode`: `busy` while another command that changes the host's
//! disks or daemons runs (409), otherwise the kind its status says.

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

impl InventorySource {
    /// As the report and the store write it.
    pub fn as_str(self) -> &'static str {
        match self {
            InventorySource::CephVolume => "ceph-volume",
            InventorySource::Kernel => "kernel",
            InventorySource::File => "file",
        }
    }
}

/// `GET /v1/inventory`. `D` is how the device list is held: as values (the
/// agent builds it so), or as its JSON text (`RawDevices`: what the agent
/// sends and the daemon stores, never turned into a tree of values).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InventoryReport<D = Vec<serde_json::Value>> {
    /// The agent's host name (`--host-name`, default the system hostname).
    pub host: String,
    pub source: InventorySource,
    /// When the inventory was taken, in milliseconds since the Unix epoch.
    pub taken_at_ms: i64,
    /// Exactly what `ceph-volume inventory --format json` prints: a list of devices.
    pub devices: D,
    /// False when this agent cannot create OSDs (for example with `--inventory-file`).
    pub can_create_osds: bool,
    /// Why, when it cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The release of the Ceph whose ceph-volume listed the devices, as
    /// `CephRelease` writes it (`18.2.7 (reef)`), when the list came from
    /// ceph-volume and the `ceph` beside it said (`ceph --version`). Text,
    /// so that a release this daemon does not know never makes a report
    /// unreadable. In the ETag: the daemon stores it with the inventory,
    /// and a package upgrade on the host changes it with the same devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceph_release: Option<String>,
}

/// A device list as JSON text.
pub type RawDevices = Box<serde_json::value::RawValue>;

/// A report whose device list stays JSON text.
pub type RawInventoryReport = InventoryReport<RawDevices>;

impl InventoryReport {
    /// The same report with its device list written out once as JSON text.
    pub fn into_raw(self) -> RawInventoryReport {
        let text = serde_json::to_string(&self.devices).expect("JSON values serialize");
        InventoryReport {
            devices: serde_json::value::RawValue::from_string(text).expect("serde_json wrote valid JSON"),
            host: self.host,
            source: self.source,
            taken_at_ms: self.taken_at_ms,
            can_create_osds: self.can_create_osds,
            note: self.note,
            ceph_release: self.ceph_release,
        }
    }
}

impl RawInventoryReport {
    /// The fingerprint of its device list (`devices_fingerprint`).
    pub fn fingerprint(&self) -> String {
        devices_fingerprint(self.devices.get())
    }

    /// Its ETag (`inventory_etag`), given its fingerprint.
    pub fn etag(&self, fingerprint: &str) -> String {
        inventory_etag(
            fingerprint,
            self.source.as_str(),
            self.can_create_osds,
            self.note.as_deref(),
            self.ceph_release.as_deref(),
        )
    }
}

/// FNV-1a of a device list's JSON text, as the daemon stores it with the
/// inventory: stable across runs and versions (the reconciler plans a host
/// again when it changes, so it must not change with osdkeeper's version).
pub fn devices_fingerprint(devices_json: &str) -> String {
    format!("{:016x}", fnv1a(FNV_OFFSET, devices_json.as_bytes()))
}

/// The port the packaged agent listens on (`deploy/osdkeeper-agent.service`),
/// and the one a host spec's address without a port is given.
pub const AGENT_PORT: u16 = 8741;

/// An inventory's ETag: the devices' fingerprint and a hash of what else
/// the report says (its source, whether OSDs can be made, its note, the
/// release of ceph-volume's Ceph), which is everything but when it was
/// taken. `GET /v1/inventory` answers `304 Not Modified` to an
/// `If-None-Match` naming the current one; the daemon sends the one it
/// stored, computed from the stored columns alone. A report without a
/// release hashes as before releases were reported, so that the inventories
/// stored by an older daemon are not all written again after an upgrade.
pub fn inventory_etag(
    fingerprint: &str,
    source: &str,
    can_create_osds: bool,
    note: Option<&str>,
    ceph_release: Option<&str>,
) -> String {
    let mut h = fnv1a(FNV_OFFSET, source.as_bytes());
    h = fnv1a(h, &[0, u8::from(can_create_osds), u8::from(note.is_some())]);
    h = fnv1a(h, note.unwrap_or_default().as_bytes());
    if let Some(release) = ceph_release {
        // A byte no UTF-8 text holds, so that note and release never run
        // into each other.
        h = fnv1a(h, &[0xff]);
        h = fnv1a(h, release.as_bytes());
    }
    format!("{fingerprint}-{h:016x}")
}

/// Whether an `If-None-Match` header value names `etag` (RFC 9110: a list
/// of entity tags, `*` for any; weak comparison, as for a GET).
pub fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match.split(',').map(str::trim).any(|tag| {
        tag == "*"
            || tag.strip_prefix("W/").unwrap_or(tag).strip_prefix('"').and_then(|t| t.strip_suffix('"')) == Some(etag)
    })
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The one rule by which a zap's request is held against the disk it
/// would wipe (`ZapRequest::expect`), and a stop's fsid against the
/// daemon's: the agent judges by it, as the simulator does.
pub use crate::domain::identity::{check_zap, same_uuid, DiskSeen, LabelSeen, LvSeen, ZapExpect, ZapMismatch};

/// The one grammar of the ceph-volume command (the planner's), by which
/// the agent reads every word of a `CephVolumeRequest`.
pub use crate::domain::osd_layout::args as ceph_volume_grammar;

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

/// Every 4xx/5xx answer of the agent: what went wrong in words, and as a
/// code the daemon acts on (never on the words).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgentErrorBody {
    pub error: String,
    /// Absent in the answers of agents from before the codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<AgentErrorCode>,
}

/// What kind of refusal or failure an agent's error answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentErrorCode {
    /// Another command that changes the host's disks or daemons runs: the
    /// request was not carried out, and may be repeated when it is done.
    Busy,
    /// The request is malformed or asks for what the agent never does (400, 405, 413, 415, 422).
    Invalid,
    /// No token, or a wrong one (401).
    Unauthorized,
    /// Outside what this agent may touch (`--devices`), or sent the way a web page would (403).
    Forbidden,
    /// No such endpoint, or a device that is not in the host's inventory (404).
    NotFound,
    /// Refused for what is on the host now: a device in use, an OSD that
    /// runs or is not there, a fixed inventory (409).
    Conflict,
    /// What the request named is not what is there: another disk at the
    /// path, another OSD's or cluster's volumes on it, another OSD's daemon
    /// under the id (409). Asked again, it is refused again.
    IdentityMismatch,
    /// The command did not finish in its time and was stopped (504).
    TimedOut,
    /// The agent could not do it (500).
    Failed,
    /// A code this side does not know (an agent newer than it).
    #[serde(other)]
    Other,
}

impl AgentErrorCode {
    /// The code of an answer with this status, where nothing more precise is said.
    pub fn of_status(status: u16) -> AgentErrorCode {
        match status {
            401 => AgentErrorCode::Unauthorized,
            403 => AgentErrorCode::Forbidden,
            404 => AgentErrorCode::NotFound,
            409 => AgentErrorCode::Conflict,
            504 => AgentErrorCode::TimedOut,
            400..=499 => AgentErrorCode::Invalid,
            _ => AgentErrorCode::Failed,
        }
    }
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
    /// The disk meant: its serial/WWN id as the daemon recorded it; empty
    /// where it had none (its content must then tell it: `osd_fsids`).
    /// Another disk found at the path is refused (`identity_mismatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// The OSDs (their fsids) whose LVs and BlueStore label the zap may
    /// destroy: an LV or a label of any other OSD on the disk is refused.
    /// Absent: an operator's zap of the disk whatever it holds (the daemon
    /// checked that no OSD of the cluster uses it), or a daemon from
    /// before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_fsids: Option<Vec<String>>,
    /// The cluster those OSDs belong to: an LV or a label of another
    /// cluster is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_fsid: Option<String>,
}

impl ZapRequest {
    /// A zap naming what it may destroy.
    pub fn expecting(path: &str, expect: ZapExpect, reason: String) -> ZapRequest {
        ZapRequest {
            path: path.to_string(),
            force: true,
            reason: Some(reason),
            device_id: Some(expect.device_id),
            osd_fsids: expect.osd_fsids,
            cluster_fsid: expect.cluster_fsid,
        }
    }

    /// What the request names, for `identity::check_zap`; `None` from a
    /// daemon before the fields (it is checked as before them).
    pub fn expect(&self) -> Option<ZapExpect> {
        if self.device_id.is_none() && self.osd_fsids.is_none() {
            return None;
        }
        Some(ZapExpect {
            device_id: self.device_id.clone().unwrap_or_default(),
            osd_fsids: self.osd_fsids.clone(),
            cluster_fsid: self.cluster_fsid.clone(),
        })
    }
}

/// `POST /v1/osd/{id}/stop`: the OSD meant, by its fsid (the OSD map's
/// uuid); a daemon serving the id for another OSD is not stopped
/// (`identity_mismatch`). An empty body (a daemon from before the field)
/// stops whatever serves the id.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StopRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub osd_fsid: Option<String>,
}

/// `POST /v1/zap-osd`: removes one LVM OSD's LVs (block, DB, WAL, wherever
/// they are), their VGs and PVs where nothing else is left, its dm-crypt
/// mappings, and disables its `ceph-volume@lvm-ID-FSID` unit. A DB device
/// shared with other OSDs keeps theirs (a zap by path would take them).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZapOsdRequest {
    pub osd_id: u32,
    /// Pins the OSD: its id may already belong to a new OSD on this host.
    pub osd_fsid: String,
    /// Required: a zap destroys data.
    pub force: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The devices the daemon recorded for the OSD: an LV of it on any
    /// other device is refused (`identity_mismatch`), nothing removed.
    /// Absent (a daemon from before the field): not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Vec<String>>,
}

/// `GET /v1/identity`: who answers, without a scan (checking a host's
/// agent must not wait for a `ceph-volume inventory`, minutes on a host
/// with many disks).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AgentIdentity {
    /// The agent's host name (`--host-name`, default the system hostname).
    pub host: String,
    /// osdkeeper's version of the agent's binary.
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZapOsdResult {
    pub osd_id: u32,
    pub osd_fsid: String,
    /// The devices its LVs were on.
    pub devices: Vec<String>,
    pub steps: Vec<String>,
}

/// `POST /v1/replace-header`: writes on a blank disk, or erases, the
/// header ceph-volume 19.2.1+ reads as "this disk is being replaced"
/// (`being_replaced` in its inventory, the reject reason "Is being
/// replaced"), so that no spec takes the old disk while its slot waits for
/// a new one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplaceHeaderRequest {
    pub path: String,
    /// Write the header (`true`) or erase it (`false`).
    pub mark: bool,
    /// The disk id the daemon saw at this path (required): another disk
    /// found there now is refused.
    pub device_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplaceHeaderResult {
    pub path: String,
    /// The header is on the disk now.
    pub marked: bool,
    /// Something was written (false: it already was as asked).
    pub changed: bool,
    pub steps: Vec<String>,
}

/// The outcome of a zap (refusals are 4xx `AgentErrorBody` with the reason).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZapResult {
    pub path: String,
    /// What was done, in order ("held /dev/loop4 exclusively", "zeroed 10 MiB at 0", ...).
    pub steps: Vec<String>,
}

/// How long and over how much of a disk a probe runs; what one fio job measured.
pub use crate::domain::probe::{ProbeJob, ProbeMode};
pub use crate::wire::api::probes::{JobFigures, ProbeFigures};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_the_one_stored_before() {
        // FNV-1a 64 of the text, as daemons before the ETag stored it: an
        // upgrade must not make every host look changed to the reconciler.
        assert_eq!(devices_fingerprint(""), "cbf29ce484222325");
        assert_eq!(devices_fingerprint("[]"), format!("{:016x}", fnv1a(FNV_OFFSET, b"[]")));
        assert_eq!(devices_fingerprint("a"), "af63dc4c8601ec8c");
    }

    #[test]
    fn the_etag_covers_everything_but_the_time() {
        let report = |note: Option<&str>, devices: &str, taken_at_ms| {
            InventoryReport {
                host: "h1".into(),
                source: InventorySource::Kernel,
                taken_at_ms,
                devices: serde_json::from_str::<Vec<serde_json::Value>>(devices).unwrap(),
                can_create_osds: true,
                note: note.map(str::to_string),
                ceph_release: None,
            }
            .into_raw()
        };
        let etag = |r: &RawInventoryReport| r.etag(&r.fingerprint());
        let base = report(None, r#"[{"path": "/dev/sdb"}]"#, 1);
        assert_eq!(etag(&base), etag(&report(None, r#"[{"path":"/dev/sdb"}]"#, 2)), "taken later, same content");
        assert_ne!(etag(&base), etag(&report(None, r#"[{"path": "/dev/sdc"}]"#, 1)));
        assert_ne!(etag(&base), etag(&report(Some(""), r#"[{"path": "/dev/sdb"}]"#, 1)), "no note vs an empty one");
        let mut file = report(None, r#"[{"path": "/dev/sdb"}]"#, 1);
        file.source = InventorySource::File;
        assert_ne!(etag(&base), etag(&file));
        file.source = InventorySource::Kernel;
        file.can_create_osds = false;
        assert_ne!(etag(&base), etag(&file));
        assert!(etag(&base).starts_with(&format!("{}-", base.fingerprint())));
        let mut upgraded = report(None, r#"[{"path": "/dev/sdb"}]"#, 1);
        upgraded.ceph_release = Some("18.2.7 (reef)".into());
        assert_ne!(etag(&base), etag(&upgraded), "a package upgrade with the same devices");
        let mut again = report(None, r#"[{"path": "/dev/sdb"}]"#, 1);
        again.ceph_release = Some("19.2.3 (squid)".into());
        assert_ne!(etag(&upgraded), etag(&again));
        // Without a release, the ETag an older daemon stored (source, flags, note).
        let old = fnv1a(fnv1a(fnv1a(FNV_OFFSET, b"kernel"), &[0, 1, 0]), b"");
        assert_eq!(etag(&base), format!("{}-{old:016x}", base.fingerprint()));
        assert_eq!(base.devices.get(), r#"[{"path":"/dev/sdb"}]"#, "written compactly, keys sorted");
    }

    #[test]
    fn error_codes_on_the_wire() {
        let busy = AgentErrorBody { error: "busy".into(), code: Some(AgentErrorCode::Busy) };
        assert_eq!(serde_json::to_string(&busy).unwrap(), r#"{"error":"busy","code":"busy"}"#);
        let old: AgentErrorBody = serde_json::from_str(r#"{"error":"x"}"#).unwrap();
        assert_eq!(old.code, None, "an agent from before the codes");
        let newer: AgentErrorBody = serde_json::from_str(r#"{"error":"x","code":"on_fire"}"#).unwrap();
        assert_eq!(newer.code, Some(AgentErrorCode::Other));
        let statuses =
            [(400, "invalid"), (401, "unauthorized"), (403, "forbidden"), (404, "not_found"), (405, "invalid")];
        for (status, code) in
            statuses.into_iter().chain([(409, "conflict"), (422, "invalid"), (500, "failed"), (504, "timed_out")])
        {
            assert_eq!(serde_json::to_value(AgentErrorCode::of_status(status)).unwrap(), code, "{status}");
        }
    }

    #[test]
    fn if_none_match_lists_are_read() {
        assert!(etag_matches(r#""abc""#, "abc"));
        assert!(etag_matches(r#"W/"abc""#, "abc"));
        assert!(etag_matches(r#""x", "abc""#, "abc"));
        assert!(etag_matches("*", "abc"));
        assert!(!etag_matches("abc", "abc"), "an entity tag is quoted");
        assert!(!etag_matches(r#""abcd""#, "abc"));
        assert!(!etag_matches("", "abc"));
    }
}
