//! `/api/v1/events`: the event log.

use serde::{Deserialize, Serialize};

use crate::store::LoggedEvent;

pub use crate::domain::event::{EventKind, Level};

/// One entry of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Event {
    pub id: i64,
    pub at: i64,
    pub level: Level,
    pub kind: EventKind,
    pub host: Option<String>,
    pub subject: Option<String>,
    pub message: String,
    /// The name of the API token whose request recorded it (`bootstrap` for
    /// `OSDKEEPER_TOKEN`, `anonymous` on a daemon without tokens); absent
    /// when the daemon acted on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

impl From<LoggedEvent> for Event {
    fn from(e: LoggedEvent) -> Event {
        Event {
            id: e.id,
            at: e.at,
            level: e.level,
            kind: e.kind,
            host: e.host,
            subject: e.subject,
            message: e.message,
            actor: e.actor,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct EventQuery {
    /// Only events with a larger id (for following the log).
    pub after: Option<i64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<i64>,
    /// Only events about this host (exact name).
    pub host: Option<String>,
    /// Only events about this OSD (`osd.N`).
    pub osd: Option<u32>,
    /// Only events at or after this time (ms since the epoch).
    pub since: Option<i64>,
}
