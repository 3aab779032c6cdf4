//! The event log.

use async_trait::async_trait;
use sqlx::{Row, Sqlite};

use super::SqliteBackend;
use crate::domain::event::{EventKind, Level};
use crate::store::backend::EventRows;
use crate::store::{EventFilter, LoggedEvent, NewEvent, Result, StoreError};

fn parse<T>(text: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T> {
    parse(text).ok_or_else(|| StoreError::Corrupt(format!("event {what} {text:?}")))
}

/// Stores an event in `db`, a transaction (that may store what the event
/// tells); its id.
pub(super) async fn insert_event<'e>(
    db: impl sqlx::Executor<'e, Database = Sqlite>,
    e: &NewEvent,
    now: i64,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "INSERT INTO events (at, level, kind, host, subject, message, actor) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(now)
    .bind(e.level.as_str())
    .bind(e.kind.as_str())
    .bind(&e.host)
    .bind(&e.subject)
    .bind(&e.message)
    .bind(&e.actor)
    .fetch_one(db)
    .await?)
}

#[async_trait]
impl EventRows for SqliteBackend {
    async fn add_events(&self, events: &[NewEvent], now: i64) -> Result<Vec<i64>> {
        let mut tx = self.write().await?;
        let mut ids = Vec::with_capacity(events.len());
        for e in events {
            ids.push(insert_event(&mut *tx, e, now).await?);
        }
        tx.commit().await?;
        Ok(ids)
    }

    async fn events_matching(&self, q: &EventFilter<'_>, limit: i64) -> Result<Vec<LoggedEvent>> {
        // One statement for every combination: a filter left out is NULL and
        // matches everything.
        const MATCHES: &str = "(?1 IS NULL OR id > ?1) AND (?2 IS NULL OR host = ?2) \
                               AND (?3 IS NULL OR subject = ?3) AND (?4 IS NULL OR at >= ?4)";
        let sql = if q.after.is_some() {
            format!("SELECT id, at, level, kind, host, subject, message, actor FROM events WHERE {MATCHES} ORDER BY id LIMIT ?5")
        } else {
            format!(
                "SELECT * FROM (SELECT id, at, level, kind, host, subject, message, actor FROM events WHERE {MATCHES} \
                 ORDER BY id DESC LIMIT ?5) AS latest ORDER BY id"
            )
        };
        let rows = sqlx::query(&sql)
            .bind(q.after)
            .bind(q.host)
            .bind(q.subject)
            .bind(q.since)
            .bind(limit)
            .fetch_all(&self.reads)
            .await?;
        rows.iter()
            .map(|r| {
                Ok(LoggedEvent {
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
