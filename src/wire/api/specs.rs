//! `/api/v1/specs`: applying (or dry-running) OSD specs, and the stored ones.

use serde::{Deserialize, Serialize};

use super::preview::PreviewDoc;
use crate::store::AppliedSpec;

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct ApplyQuery {
    /// Only show what would happen; store nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Poll the hosts the specs match before planning.
    #[serde(default)]
    pub refresh: bool,
    /// Store a spec whose `label:` or `host_pattern:` matches no host now
    /// (it creates no OSDs until one matches); without it such an apply is
    /// refused and the dry-run warns.
    #[serde(default)]
    pub allow_empty_placement: bool,
    /// Add the file's hosts (`service_type: host`) without asking their
    /// agents first.
    #[serde(default)]
    pub no_check: bool,
}

/// A stored spec with its version and times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SpecRecord {
    pub service_name: String,
    pub service_id: Option<String>,
    /// The YAML document as the operator wrote it.
    pub source: String,
    /// The document as canonical JSON, which the daemon re-reads (not sent).
    #[serde(skip)]
    pub spec_json: String,
    pub unmanaged: bool,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<AppliedSpec> for SpecRecord {
    fn from(s: AppliedSpec) -> SpecRecord {
        SpecRecord {
            service_name: s.service_name,
            service_id: s.service_id,
            source: s.source,
            spec_json: s.spec_json,
            unmanaged: s.unmanaged,
            version: s.version,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SpecDetail {
    #[serde(flatten)]
    pub spec: SpecRecord,
    /// (version, action, at) of every change.
    pub history: Vec<(i64, String, i64)>,
}

/// What the daemon knows about a host a dry-run planned (or could not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostFacts {
    pub name: String,
    pub inventory_age_s: Option<f64>,
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub can_create_osds: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RefreshFailure {
    pub host: String,
    pub error: String,
}

/// What an apply does with one host spec (`service_type: host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HostSpecAction {
    /// A new host.
    Add,
    /// A known host at the same address that gets the spec's labels it
    /// lacks (none is taken away, as in cephadm).
    Relabel,
    /// Known as the spec says.
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostSpecOutcome {
    pub name: String,
    pub addr: String,
    /// Its labels after the apply.
    pub labels: Vec<String>,
    pub action: HostSpecAction,
}

/// The answer to an apply or a dry-run: the preview (the shape of
/// `osdkeeper preview --format json`, each row with its inventory age),
/// what the daemon knows about the hosts, and what it stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ApplyResponse {
    #[serde(flatten)]
    pub preview: PreviewDoc,
    pub dry_run: bool,
    pub hosts: Vec<HostFacts>,
    /// Known hosts without an inventory yet: left out of planning.
    pub hosts_without_inventory: Vec<String>,
    pub refresh_failures: Vec<RefreshFailure>,
    /// Documents whose `label:` or `host_pattern:` selects no host now, and
    /// why: the apply needs `allow_empty_placement` to store them.
    #[serde(default)]
    pub empty_placements: Vec<String>,
    /// The specs stored, when applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<Vec<SpecRecord>>,
    /// Hosts where the specs would make OSDs while OSDs there are being
    /// removed: a swap moves their data once (`osd replace`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub swap_proposals: Vec<SwapProposal>,
    /// The file's host specs, each with what the apply does (or, in a
    /// dry-run, would do) with it; hosts are added before OSD specs are
    /// planned, as cephadm does.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_specs: Vec<HostSpecOutcome>,
}

/// A swap the dry-run proposes instead of drain-then-add.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SwapProposal {
    pub host: String,
    /// The OSDs being removed there.
    pub osds: Vec<u32>,
    /// The disks the specs would make OSDs on.
    pub devices: Vec<String>,
    /// The commands that swap instead.
    pub command: String,
    /// The proposal in words.
    pub text: String,
}

/// A stored spec as `spec ls` lists it, with the columns of cephadm's
/// `orch ls`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SpecListing {
    #[serde(flatten)]
    pub spec: SpecRecord,
    /// OSDs of this spec: those whose disks carry its service id as
    /// `osdspec_affinity`, in the stored inventories.
    pub running: u64,
    /// The placement as `orch ls` writes it: `label:osd`, `f5-422-0*`,
    /// `f5-422-01;f5-422-02`, or `<unmanaged>`.
    pub placement: String,
}
