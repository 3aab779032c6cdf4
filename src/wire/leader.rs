//! The leader record: a small JSON value the daemon holding a RADOS
//! database writes beside it (an xattr of `NAME.osdkeeper-leader`), so that
//! standbys, which cannot read the locked database, can say where the
//! leader serves.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LeaderRecord {
    /// Where the leader's API and dashboard answer.
    pub url: String,
    /// The machine it runs on, and its process id there.
    pub host: String,
    pub pid: u32,
    /// When it took the lock (ms since the epoch).
    pub since_ms: i64,
}

impl LeaderRecord {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a leader record serializes")
    }

    /// None for a value that is not a record (an older or foreign writer).
    pub fn from_json(text: &str) -> Option<LeaderRecord> {
        serde_json::from_str(text.trim()).ok()
    }
}
