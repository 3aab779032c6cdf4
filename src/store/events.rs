//! The event log: what osdkeeper noticed and did, in cephadm's wording where
//! cephadm has one ("Detected new or changed devices on HOST").

use super::{Result, Store};
use crate::domain::event::{EventKind, Level};

/// An event to record.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub level: Level,
    pub kind: EventKind,
    pub host: Option<String>,
    pub subject: Option<String>,
    pub message: String,
    /// The name of the token whose request this is; None when the daemon acted on its own.
    pub actor: Option<String>,
}

/// One entry of the event log, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedEvent {
    pub id: i64,
    pub at: i64,
    pub level: Level,
    pub kind: EventKind,
    pub host: Option<String>,
    pub subject: Option<String>,
    pub message: String,
    /// The name of the token whose request recorded it; None when the daemon acted on its own.
    pub actor: Option<String>,
}

/// Which events to list (None: any).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventFilter<'a> {
    pub after: Option<i64>,
    pub host: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub since: Option<i64>,
}

impl LoggedEvent {
    /// `e` as stored with `id` at `at`.
    pub(super) fn stored(id: i64, at: i64, e: NewEvent) -> LoggedEvent {
        LoggedEvent {
            id,
            at,
            level: e.level,
            kind: e.kind,
            host: e.host,
            subject: e.subject,
            message: e.message,
            actor: e.actor,
        }
    }
}

impl Store {
    /// Events stored together, in one transaction (one commit, however
    /// many: ~13 ms each on the store in RADOS).
    pub async fn add_events(&self, events: Vec<NewEvent>, now: i64) -> Result<Vec<LoggedEvent>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.backend.add_events(&events, now).await?;
        Ok(ids.into_iter().zip(events).map(|(id, e)| LoggedEvent::stored(id, now, e)).collect())
    }

    /// Events with an id above `after`, oldest first, at most `limit`; with
    /// `after` = None, the latest `limit` events.
    pub async fn events(&self, after: Option<i64>, limit: i64) -> Result<Vec<LoggedEvent>> {
        self.events_matching(&EventFilter { after, ..EventFilter::default() }, limit).await
    }

    /// The same, only those of `host`, of
    /// `subject` and at or after `since`, where given.
    pub async fn events_matching(&self, q: &EventFilter<'_>, limit: i64) -> Result<Vec<LoggedEvent>> {
        self.backend.events_matching(q, limit).await
    }
}
