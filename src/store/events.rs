//! The event log: what osdkeeper noticed and did, in cephadm's wording where
//! cephadm has one ("Detected new or changed devices on HOST").

use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::{Result, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    fn parse(s: &str) -> Result<Level> {
        match s {
            "info" => Ok(Level::Info),
            "warning" => Ok(Level::Warning),
            "error" => Ok(Level::Error),
            other => Err(StoreError::Corrupt(format!("event level {other:?}"))),
        }
    }
}

/// An event to record.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub level: Level,
    /// A stable machine-readable kind, e.g. `devices-changed`, `host-unreachable`.
    pub kind: &'static str,
    pub host: Option<String>,
    pub subject: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Event {
    pub id: i64,
    pub at: i64,
    pub level: Level,
    pub kind: String,
    pub host: Option<String>,
    pub subject: Option<String>,
    pub message: String,
}

impl Store {
    pub async fn add_event(&self, e: NewEvent, now: i64) -> Result<Event> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO events (at, level, kind, host, subject, message) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(now)
        .bind(e.level.as_str())
        .bind(e.kind)
        .bind(&e.host)
        .bind(&e.subject)
        .bind(&e.message)
        .fetch_one(&self.pool)
        .await?;
        Ok(Event {
            id,
            at: now,
            level: e.level,
            kind: e.kind.to_string(),
            host: e.host,
            subject: e.subject,
            message: e.message,
        })
    }

    /// Events with an id above `after`, oldest first, at most `limit`; with
    /// `after` = None, the latest `limit` events.
    pub async fn events(&self, after: Option<i64>, limit: i64) -> Result<Vec<Event>> {
        let rows = match after {
            Some(after) => {
                sqlx::query("SELECT id, at, level, kind, host, subject, message FROM events WHERE id > ? ORDER BY id LIMIT ?")
                    .bind(after)
                    .bind(limit)
                    .fetch_all(&self.pool)
                    .await?
            }
            None => {
                sqlx::query(
                    "SELECT * FROM (SELECT id, at, level, kind, host, subject, message FROM events ORDER BY id DESC LIMIT ?)
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
                    level: Level::parse(&r.try_get::<String, _>(2)?)?,
                    kind: r.try_get(3)?,
                    host: r.try_get(4)?,
                    subject: r.try_get(5)?,
                    message: r.try_get(6)?,
                })
            })
            .collect()
    }
}
