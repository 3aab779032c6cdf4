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
        let rows = match after {
            Some(after) => {
                sqlx::query("SELECT id, at, level, kind, host, subject, message, actor FROM events WHERE id > ? ORDER BY id LIMIT ?")
                    .bind(after)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
            None => {
                sqlx::query(
                    "SELECT * FROM (SELECT id, at, level, kind, host, subject, message, actor FROM events ORDER BY id DESC LIMIT ?)
                     ORDER BY id",
                )
                .bind(limit)
                .fetch_all(&self.pool)
                .await?
            }
        };
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
