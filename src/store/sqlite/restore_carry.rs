//! What a restore takes over from the database it replaces, which knows
//! more of now than the backup does (`docs/operations.md`, "Restore"):
//!
//! * tokens: one revoked there stays revoked (by name or digest); one made
//!   after the backup is kept as it is there (a revoked name is never
//!   given again, an active one keeps its caller);
//! * holds: every hold there is kept, as it is there; a hold of the backup
//!   released since is kept too (a held disk is never taken by a spec: a
//!   hold too many costs a `device release`, one too few a disk taken),
//!   and named; a host added after the backup that holds disks is kept
//!   with its holds;
//! * the recovery boost of fast drains: the record there, or none if it
//!   has none. It says what the cluster holds now: a boost set after the
//!   backup is still put back, and one put back since is not put back
//!   again over what an operator may have set meanwhile.
//!
//! Both databases are copies in local files, migrated to this build's
//! schema first; the restored one is changed in one transaction, the
//! replaced one only read.

use std::path::Path;
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection, Row};

use crate::store::backup::{BackupError, KeptFromReplaced};
use crate::store::DbError;

fn failed(path: &Path) -> impl Fn(sqlx::Error) -> BackupError + '_ {
    move |e| BackupError::Refused {
        path: path.to_path_buf(),
        message: format!("cannot take revocations, holds and the recovery boost over from it: {e}; nothing changed"),
    }
}

async fn open_migrated(path: &Path) -> Result<SqliteConnection, BackupError> {
    let db = |source| BackupError::Db { path: path.to_path_buf(), source };
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(|e| db(DbError::new(e)))?
        .create_if_missing(false);
    let mut conn = options.connect().await.map_err(|e| db(DbError::new(e)))?;
    sqlx::migrate!("./migrations").run(&mut conn).await.map_err(|e| db(DbError::new(e)))?;
    Ok(conn)
}

/// Makes the local copy `restored` keep what `replaced` (a local copy of
/// the database it replaces) knows of now; both are migrated first.
pub(in crate::store) async fn carry(restored: &Path, replaced: &Path) -> Result<KeptFromReplaced, BackupError> {
    open_migrated(replaced).await?.close().await.map_err(failed(replaced))?;
    let mut conn = open_migrated(restored).await?;
    let replaced_text = replaced
        .to_str()
        .ok_or_else(|| BackupError::Refused { path: replaced.into(), message: "the path is not UTF-8".into() })?;
    sqlx::query("ATTACH DATABASE ? AS replaced")
        .bind(replaced_text)
        .execute(&mut conn)
        .await
        .map_err(failed(restored))?;
    let kept = take_over(&mut conn).await.map_err(failed(restored));
    let detached = sqlx::query("DETACH DATABASE replaced").execute(&mut conn).await.map_err(failed(restored));
    conn.close().await.map_err(failed(restored))?;
    let kept = kept?;
    detached?;
    Ok(kept)
}

async fn names(conn: &mut SqliteConnection, query: &str) -> Result<Vec<String>, sqlx::Error> {
    let rows = sqlx::query(query).fetch_all(&mut *conn).await?;
    rows.iter().map(|r| r.try_get(0)).collect()
}

/// The tokens, holds and boost of `replaced` into `main`, in one transaction.
async fn take_over(conn: &mut SqliteConnection) -> Result<KeptFromReplaced, sqlx::Error> {
    let mut tx = conn.begin().await?;
    let revoked_there = "FROM replaced.api_tokens r WHERE (r.name = m.name OR r.digest = m.digest) \
                         AND r.revoked_at IS NOT NULL";
    let revoked = names(&mut tx, &format!(
        "SELECT m.name FROM main.api_tokens m WHERE m.revoked_at IS NULL AND EXISTS (SELECT 1 {revoked_there}) ORDER BY m.name"
    ))
    .await?;
    sqlx::query(&format!(
        "UPDATE main.api_tokens AS m SET revoked_at = (SELECT MIN(r.revoked_at) {revoked_there}) \
         WHERE m.revoked_at IS NULL AND EXISTS (SELECT 1 {revoked_there})"
    ))
    .execute(&mut *tx)
    .await?;
    let unknown_here = "NOT EXISTS (SELECT 1 FROM main.api_tokens m WHERE m.name = r.name OR m.digest = r.digest)";
    let tokens =
        names(&mut tx, &format!("SELECT r.name FROM replaced.api_tokens r WHERE {unknown_here} ORDER BY r.name"))
            .await?;
    let columns = "name, role, digest, created_at, created_by, last_used_at, revoked_at";
    sqlx::query(&format!(
        "INSERT INTO main.api_tokens ({columns}) SELECT {columns} FROM replaced.api_tokens r WHERE {unknown_here}"
    ))
    .execute(&mut *tx)
    .await?;

    let hosts = carry_holding_hosts(&mut tx).await?;
    let holds = names(
        &mut tx,
        "SELECT r.host || ' ' || r.path FROM replaced.held_devices r WHERE NOT EXISTS \
         (SELECT 1 FROM main.held_devices m WHERE m.host = r.host AND m.path = r.path) ORDER BY r.host, r.path",
    )
    .await?;
    let holds_released_since = names(
        &mut tx,
        "SELECT m.host || ' ' || m.path FROM main.held_devices m WHERE NOT EXISTS \
         (SELECT 1 FROM replaced.held_devices r WHERE r.host = m.host AND r.path = m.path) ORDER BY m.host, m.path",
    )
    .await?;
    sqlx::query(
        "DELETE FROM main.held_devices AS m WHERE EXISTS \
         (SELECT 1 FROM replaced.held_devices r WHERE r.host = m.host AND r.path = m.path)",
    )
    .execute(&mut *tx)
    .await?;
    let columns = "host, path, reason, since, device_id, waits_for_slot";
    sqlx::query(&format!("INSERT INTO main.held_devices ({columns}) SELECT {columns} FROM replaced.held_devices"))
        .execute(&mut *tx)
        .await?;

    let count = |schema: &str| format!("SELECT COUNT(*) FROM {schema}.recovery_boost");
    let boost_dropped: i64 = sqlx::query_scalar(&count("main")).fetch_one(&mut *tx).await?;
    let boost_taken: i64 = sqlx::query_scalar(&count("replaced")).fetch_one(&mut *tx).await?;
    sqlx::query("DELETE FROM main.recovery_boost").execute(&mut *tx).await?;
    let columns = "id, state, started_at, updated_at";
    sqlx::query(&format!("INSERT INTO main.recovery_boost ({columns}) SELECT {columns} FROM replaced.recovery_boost"))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(KeptFromReplaced {
        revoked,
        tokens,
        holds,
        holds_released_since,
        hosts,
        boost_taken: boost_taken > 0,
        boost_dropped: boost_dropped > 0 && boost_taken == 0,
    })
}

/// The hosts that hold disks there and are unknown to the backup, put
/// after the backup's hosts in the order they were added.
async fn carry_holding_hosts(conn: &mut SqliteConnection) -> Result<Vec<String>, sqlx::Error> {
    let missing = "FROM replaced.hosts h WHERE h.name IN (SELECT host FROM replaced.held_devices) \
                   AND h.name NOT IN (SELECT name FROM main.hosts)";
    let hosts = names(&mut *conn, &format!("SELECT h.name {missing} ORDER BY h.position")).await?;
    let last: i64 =
        sqlx::query_scalar("SELECT COALESCE(MAX(position), 0) FROM main.hosts").fetch_one(&mut *conn).await?;
    sqlx::query(&format!(
        "INSERT INTO main.hosts (name, addr, labels, position, added_at, unreachable_since, last_error, \
         consecutive_failures, next_poll_at) SELECT h.name, h.addr, h.labels, ? + h.position, h.added_at, \
         h.unreachable_since, h.last_error, h.consecutive_failures, 0 {missing}"
    ))
    .bind(last)
    .execute(&mut *conn)
    .await?;
    Ok(hosts)
}
