//! `POST /api/v1/backup`: a copy of the live database made by the daemon,
//! through its own connection (the one way into a database in RADOS).

use serde::{Deserialize, Serialize};

use crate::store::backup::BackupFacts;

/// Where the copy goes: an absolute path on the daemon's machine that does not exist yet.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    pub file: String,
}

/// What the copy holds, read back from it after its integrity check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct BackupDone {
    pub file: String,
    /// The last migration applied to it.
    pub schema_version: i64,
    pub hosts: i64,
    pub specs: i64,
    pub removals: i64,
    pub events: i64,
    pub bytes: u64,
}

impl BackupDone {
    pub fn new(file: String, f: BackupFacts) -> BackupDone {
        let BackupFacts { schema_version, hosts, specs, removals, events, bytes } = f;
        BackupDone { file, schema_version, hosts, specs, removals, events, bytes }
    }

    /// What the copy holds, as a local backup says it.
    pub fn facts(&self) -> BackupFacts {
        let BackupDone { schema_version, hosts, specs, removals, events, bytes, .. } = *self;
        BackupFacts { schema_version, hosts, specs, removals, events, bytes }
    }
}
