//! The dry-run as JSON: the shape of the cephadm oracle's
//! `preview.py --no-simulate` output with more fields (`skipped` with a
//! reason per role, `warnings`, `planned_osds`). Written by `preview
//! --format json` and by the daemon's apply, read by the CLI.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PreviewDoc {
    pub errors: Vec<SpecErrorJson>,
    /// Sorted by (service_id, host) like cephadm's preview.
    pub preview: Vec<PreviewRow>,
    pub notes: Vec<SpecNote>,
}

/// A spec document's error, naming where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SpecErrorJson {
    /// Index of the document in the file (0-based).
    pub doc: usize,
    pub line: usize,
    pub service_id: Option<String>,
    pub error: String,
    pub field: String,
    pub value: Option<String>,
    /// cephadm would accept it; osdkeeper refuses it on purpose
    /// (docs/differences-from-cephadm.md).
    pub stricter_than_cephadm: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SpecNote {
    pub doc: usize,
    pub service_id: Option<String>,
    pub note: String,
}

/// The plan of one spec on one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PreviewRow {
    pub service_id: Option<String>,
    pub service_name: String,
    pub host: String,
    pub data: Vec<String>,
    pub db: Vec<String>,
    pub wal: Vec<String>,
    pub journal: Vec<String>,
    /// The ceph-volume arguments, without the `ceph-volume` prefix.
    pub commands: Vec<String>,
    /// The same with cephadm's `--report --format json`.
    pub preview_commands: Vec<String>,
    pub planned_osds: PlannedOsds,
    /// cephadm's notes for this host's report, printed above its table
    /// (a data `limit` the report falls short of).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub report_notes: Vec<String>,
    /// Every device no role took, with why.
    pub skipped: Vec<SkippedDevice>,
    /// Devices a role took that ceph-volume would not use, with why.
    #[serde(default)]
    pub unused: Vec<SkippedDevice>,
    pub warnings: Vec<String>,
    /// What osdkeeper's disk probes say of the disks this row takes or
    /// keeps back, for those that have a finished probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<DiskProbeNote>,
    /// Seconds since the host's inventory was taken (daemon only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory_age_s: Option<f64>,
}

/// The OSDs ceph-volume's batch would make, or why it would refuse.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum PlannedOsds {
    Osds(Vec<PlannedOsdRow>),
    Refused { error: String },
}

/// One OSD as ceph-volume's `--report` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PlannedOsdRow {
    pub data: String,
    pub db: Option<String>,
    pub wal: Option<String>,
    /// The id it claims (a destroyed OSD's, for a replacement).
    pub osd_id: Option<String>,
    /// Volume sizes as ceph-volume prints them ("3.64 TB", 1024-based);
    /// absent for `raw prepare`, which takes whole devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_size: Option<String>,
    #[serde(default)]
    pub encrypted: bool,
}

/// A disk's latest finished probe, as the dry-run shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DiskProbeNote {
    pub path: String,
    pub probe_id: i64,
    pub mode: crate::domain::probe::ProbeMode,
    pub figures: crate::wire::api::probes::ProbeFigures,
    /// Why it is far below comparable disks, if it is.
    pub outlier: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SkippedDevice {
    pub path: String,
    /// One reason per role that looked at it; empty when none did.
    pub reasons: Vec<String>,
}

impl From<&crate::domain::spec::SpecError> for SpecErrorJson {
    fn from(e: &crate::domain::spec::SpecError) -> Self {
        SpecErrorJson {
            doc: e.doc,
            line: e.line,
            // The message quotes an excerpt; so does this field.
            service_id: e.service_id.as_deref().map(crate::domain::value::excerpt),
            error: e.to_string(),
            field: e.field.clone(),
            value: e.value.clone(),
            stricter_than_cephadm: e.stricter_than_cephadm,
        }
    }
}
