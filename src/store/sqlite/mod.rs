//! The store's SQLite adapter: the only module with SQL or sqlx. It opens
//! the database, runs the migrations (`migrations/`), implements
//! `store::backend`'s traits one file per kind of row, and backs the file
//! up (`backup.rs`).
//!
//! Connections: one writes, a pool of readers only reads (opened
//! read-only, so a write sent to them fails at once). SQLite lets one
//! writer in at a time anyway; queueing writers on the one connection
//! spares them SQLite's busy-wait sleeps, and gives `outside_writes` its
//! meaning: `PRAGMA data_version` on the writing connection moves only
//! when another connection — hence another process — committed.
//!
//! What stays SQLite's own, and why (the rest is SQL that PostgreSQL reads
//! too, as far as SQLite allows):
//! * `?`/`?N` placeholders: sqlx passes the statement through as written;
//! * `BEGIN IMMEDIATE` (`write`): a read-then-write transaction takes the
//!   write lock at its start, else its first write fails when another
//!   connection wrote since its read; a server database would lock rows;
//! * numbering by `MAX(..) + 1` in the same transaction (hosts' order,
//!   operations' numbers): unique because SQLite has one writer at a time;
//! * booleans as 0/1 integers, which the schema declares;
//! * `PRAGMA`s (`data_version`, `integrity_check`, `wal_checkpoint`) and
//!   `VACUUM INTO` (the backup), WAL files beside the database;
//! * JSON functions, in migration 0013 only (carrying old rows over).

mod actions;
pub(super) mod backup;
mod boost;
mod events;
mod holds;
mod hosts;
mod inventories;
mod operations;
mod osd_benches;
mod packed;
pub(super) mod rados;
pub(super) mod rados_restore;
mod restore_carry;
mod runs;
mod samples;
mod specs;
#[cfg(test)]
mod tests;
mod tokens;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

use super::backend::{Backend, Lifecycle};
use super::{DbError, Result, StoreError};

/// Log filter directives for this adapter's library: sqlx logs every
/// statement slower than a second at info, which a busy disk floods.
pub const LOG_DIRECTIVES: &str = "sqlx=warn";

/// Opens (creating if needed) the database file and applies migrations.
pub(super) async fn open(path: &Path) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(SqliteBackend::open(path).await?))
}

/// Opens the database kept in RADOS (`rados.rs`), waiting while another
/// daemon holds it; `fence` is called if the lock is lost later.
pub(super) async fn open_rados(db: &super::location::RadosDb, fence: rados::Fence) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(rados::open(db, fence).await?))
}

pub(super) struct SqliteBackend {
    /// One connection, kept open for good: `data_version` is per connection.
    writes: SqlitePool,
    reads: SqlitePool,
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        rados::check(&e);
        StoreError::Db(DbError::new(e))
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> StoreError {
        StoreError::Migrate(DbError::new(e))
    }
}

/// Whether a statement failed on a unique index (a name taken).
fn unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

impl SqliteBackend {
    async fn open(path: &Path) -> Result<SqliteBackend> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let writes = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("./migrations").run(&writes).await?;
        // After the writer: a read-only connection needs the WAL's files there.
        let reads = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(options.create_if_missing(false).read_only(true))
            .await?;
        Ok(SqliteBackend { writes, reads })
    }

    /// Reads and writes on one connection: a database whose lock is held
    /// by its connection (RADOS) cannot have a second one.
    fn one_connection(pool: SqlitePool) -> SqliteBackend {
        SqliteBackend { reads: pool.clone(), writes: pool }
    }

    /// A transaction that takes the write lock at once. Each of ours reads,
    /// then writes: begun deferred, its first write fails with "database is
    /// locked" when another connection wrote in between (SQLite will not
    /// upgrade a stale read snapshot), whatever the busy timeout. Begun
    /// immediate, it waits for the lock instead.
    async fn write(&self) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        Ok(self.writes.begin_with("BEGIN IMMEDIATE").await?)
    }
}

#[async_trait]
impl Lifecycle for SqliteBackend {
    async fn outside_writes(&self) -> Result<u64> {
        let version: i64 = sqlx::query_scalar("PRAGMA data_version").fetch_one(&self.writes).await?;
        Ok(version as u64)
    }

    async fn touch(&self, n: u32) -> Result<()> {
        // The header's user version: no table is touched, nothing reads it.
        sqlx::query(&format!("PRAGMA user_version = {}", n % 1_000_000)).execute(&self.writes).await?;
        Ok(())
    }

    async fn copy_into(&self, dest: &Path) -> Result<()> {
        backup::copy_into(&self.writes, dest).await
    }

    async fn close(&self) {
        self.reads.close().await;
        self.writes.close().await;
    }
}

/// A JSON list of strings, as a column holds it (a host's labels).
fn json_list(text: &str) -> Result<Vec<String>> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("a JSON list column: {e}")))
}
