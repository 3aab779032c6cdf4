//! The daemon's state in SQLite: the only module that contains SQL.
//!
//! What is stored, and why it must survive a restart: hosts (with their
//! agents' addresses and labels), the latest inventory of each host (as the
//! agent sent it, with its age), applied specs (with their history), what
//! the reconciler last ran per spec and host, devices held back from specs,
//! benchmarks and disk probes (asked, running, their results), the event
//! log (with the name of the token that asked), the API tokens (their
//! digests and roles), and the recovery boost of fast drains (what to put
//! back after a crash). The database runs in WAL mode with foreign keys on.

pub mod backup;
mod boost;
mod changes;
mod events;
mod holds;
mod hosts;
mod inventories;
mod operations;
mod osd_benches;
mod runs;
mod specs;
mod tokens;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

pub use changes::{Changes, Topic};
pub use events::{EventFilter, NewEvent};
pub use hosts::PollFailure;
pub use inventories::{InventoryHead, InventorySeen, Replaced, StoredInventory};
pub use operations::{
    removal_subject, BenchCodec, Codec, DeploymentCodec, DrainSampleRow, Ops, ProbeCodec, RemovalCodec,
};
pub use runs::SpecHostRun;
pub use specs::StoredSpec;
pub use tokens::StoredToken;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the database holds something unreadable: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("cannot prepare the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A handle on the database; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: SqlitePool,
    changes: std::sync::Arc<Changes>,
}

impl Store {
    /// Opens (creating if needed) the database file and applies migrations.
    pub async fn open(path: &Path) -> Result<Store> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options).await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        Ok(Store { pool, changes: Default::default() })
    }

    /// What has changed since the store was opened (`changes.rs`).
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    fn changed(&self, topic: Topic) {
        self.changes.bump(topic);
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// A transaction that takes the write lock at once. Each of ours reads,
    /// then writes: begun deferred, its first write fails with "database is
    /// locked" when another connection wrote in between (SQLite will not
    /// upgrade a stale read snapshot), whatever the busy timeout. Begun
    /// immediate, it waits for the lock instead.
    async fn write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }
}

fn json_list(text: &str) -> Result<Vec<String>> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("a JSON list column: {e}")))
}

#[cfg(test)]
mod tests;
