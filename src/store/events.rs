//! The event log: what osdkeeper noticed and did, in cephadm's wording where
//! cephadm has one ("Detected new or changed devices on HOST").

use sqlx::Row;

use super::{Result, Store, StoreError};
use crate::domain::event::{EventKind, Level};
use crate::wire::api::events::Event;

fn parse<T>(text: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T> {
    parse(text).ok_or_else(|| StoreError::Corrupt(format!("event {what} {text:?}")))
}

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

/// Which events to list (None: any).
#[derive(Debug, Clone, Copy, Default)]
pub struct EventFilter<'a> {
    pub after: Option<i64>,
    pub host: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub since: Option<i64>,
}

impl Store {
    pub async fn add_event(&self, e: NewEvent, now: i64) -> Result<Event> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO events (at, level, kind, host, subject, message, actor) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(now)
        .bind(e.level.as_str())
        .bind(e.kind.as_str())
        .bind(&e.host)
        .bind(&e.subject)
        .bind(&e.message)
        .bind(&e.actor)
        .fetch_one(&self.pool)
        .await?;
        Ok(Event {
            id,
            at: now,
            level: e.level,
            kind: e.kind,
            host: e.host,
            subject: e.subject,
            message: e.message,
            actor: e.actor,
        })
    }

    /// Events with an id above `after`, oldest first, at most `limit`; with
    /// `after` = None, the latest `limit` events.
    pub async fn events(&self, after: Option<i64>, limit: i64) -> Result<Vec<Event>> {
        self.events_matching(&EventFilter { after, ..EventFilter::default() }, limit).await
    }

    /// The same, only those of `host`, of
    /// `subject` and at or after `since`, where given.
    pub async fn events_matching(&self, q: &EventFilter<'_>, limit: i64) -> Result<Vec<Event>> {
        // One statement for every combination: a filter left out is NULL and
        // matches everything.
        const MATCHES: &str = "(?1 IS NULL OR id > ?1) AND (?2 IS NULL OR host = ?2) \
                               AND (?3 IS NULL OR subject = ?3) AND (?4 IS NULL OR at >= ?4)";
        let sql = if q.after.is_some() {
            format!("SELECT id, at, level, kind, host, subject, message, actor FROM events WHERE {MATCHES} ORDER BY id LIMIT ?5")
        } else {
            format!(
                "SELECT * FROM (SELECT id, at, level, kind, host, subject, message, actor FROM events WHERE {MATCHES} \
                 ORDER BY id DESC LIMIT ?5) ORDER BY id"
            )
        };
        let rows = sqlx::query(&sql)
            .bind(q.after)
            .bind(q.host)
            .bind(q.subject)
            .bind(q.since)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Event {
                    id: r.try_get(0)?,
                    at: r.try_get(1)?,
                    level: parse(&r.try_get::<String, _>(2)?, Level::parse, "level")?,
                    kind: parse(&r.try_get::<String, _>(3)?, EventKind::parse, "kind")?,
                    host: r.try_get(4)?,
                    subject: r.try_get(5)?,
                    message: r.try_get(6)?,
                    actor: r.try_get(7)?,
                })
            })
            .collect()
    }
}
