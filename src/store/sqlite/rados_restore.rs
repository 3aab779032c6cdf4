//! A backup put in place of a database kept in RADOS.
//!
//! A file is restored by renaming; RADOS cannot rename a database (its
//! objects, their lock) at once, so the content is replaced instead,
//! inside the database, on one connection that holds its lock from the
//! first statement to the close (no daemon can start leading meanwhile):
//!
//! 1. what the database holds is copied to `NAME.before-restore-<time>`
//!    beside it (`VACUUM INTO` through the same VFS), and that copy checked;
//!    then to a local file, from which a local copy of the backup takes
//!    over what the database knows of now (`restore_carry.rs`: tokens
//!    revoked, holds, the recovery boost);
//! 2. that copy (the backup itself when the database held nothing) is
//!    attached through the unix VFS, read-only, and in
//!    one transaction every table of the database is dropped and the
//!    backup's made and filled, then its indexes, triggers and views, its
//!    `sqlite_sequence` and user version;
//! 3. the result is checked (integrity, what it holds) and the connection
//!    closed, which gives the lock back.
//!
//! SQLite's rollback journal (in RADOS too) makes step 2 all or nothing: a
//! restore that dies in the middle leaves a hot journal, and the next
//! opener (a daemon, once the dead restore's lock expired) rolls it back
//! to the old content. Checked by killing it mid-transaction on 16.2.15.
//! Foreign keys are off on this connection: the tables are dropped and
//! filled in any order, as the backup holds them.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::SqliteConnection;
use sqlx::{ConnectOptions, Connection, Row};

use super::rados;
use crate::store::backup::{uri_path, BackupError, KeptFromReplaced};
use crate::store::location::RadosDb;

/// An object of a database's schema, as `sqlite_master` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SchemaObject {
    /// `table`, `index`, `trigger` or `view`.
    kind: String,
    name: String,
    /// The statement that made it.
    sql: String,
}

/// Puts the backup in place of the content of `db` (module comment),
/// waiting at most `wait` for its lock; the copy of the old content and
/// what was taken over from it, when there was one. The caller checked the
/// backup and that no daemon leads.
pub(in crate::store) async fn restore(
    db: &RadosDb,
    backup: &Path,
    aside: &RadosDb,
    wait: Duration,
) -> Result<(Option<RadosDb>, Option<KeptFromReplaced>), BackupError> {
    uri_path(backup)?;
    rados::register_vfs().await.map_err(|e| in_rados(db, format!("{e}")))?;
    let name = db.to_string();
    let opening = async {
        // Foreign keys off: a dropped table's rows are not checked one by one.
        let mut conn = rados::options(db).foreign_keys(false).connect().await?;
        let tables: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut conn).await?;
        Ok::<_, sqlx::Error>((conn, tables))
    };
    let (mut conn, tables) = match tokio::time::timeout(wait, opening).await {
        Ok(opened) => opened.map_err(failed(db, "cannot open it"))?,
        Err(_) => {
            return Err(in_rados(
                db,
                format!(
                    "its lock was taken by someone else (a daemon that just started?) as the restore began; \
                     it was still held after {} s: stop every daemon on {name} and try again",
                    wait.as_secs()
                ),
            ))
        }
    };
    let done = replace(&mut conn, db, tables > 0, backup, aside).await;
    let closed = conn.close().await.map_err(failed(db, "cannot close it"));
    let kept = done?;
    closed?;
    Ok(kept)
}

async fn replace(
    conn: &mut SqliteConnection,
    db: &RadosDb,
    holds_anything: bool,
    backup: &Path,
    aside: &RadosDb,
) -> Result<(Option<RadosDb>, Option<KeptFromReplaced>), BackupError> {
    let scratch = tempfile::tempdir().map_err(|source| BackupError::Io { path: std::env::temp_dir(), source })?;
    let (kept_aside, taken_over, restored) = if holds_anything {
        keep(conn, db, aside).await?;
        let (restored, taken_over) = take_over(conn, db, backup, scratch.path()).await?;
        (Some(aside.clone()), Some(taken_over), restored)
    } else {
        (None, None, backup.to_path_buf())
    };
    let backup_uri = format!("file:{}?vfs=unix&mode=ro", uri_path(&restored)?);
    sqlx::query("ATTACH DATABASE ? AS backup")
        .bind(backup_uri)
        .execute(&mut *conn)
        .await
        .map_err(failed(db, "cannot attach the backup"))?;
    let now = schema(conn, "main").await.map_err(failed(db, "cannot read its schema"))?;
    let wanted = schema(conn, "backup").await.map_err(failed(db, "cannot read the backup's schema"))?;
    let sequence: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM backup.sqlite_master WHERE name = 'sqlite_sequence'")
        .fetch_one(&mut *conn)
        .await
        .map_err(failed(db, "cannot read the backup's schema"))?;
    let version: i64 = sqlx::query_scalar("PRAGMA backup.user_version")
        .fetch_one(&mut *conn)
        .await
        .map_err(failed(db, "cannot read the backup's schema"))?;
    let statements = replacement(&now, &wanted, sequence > 0, version);
    in_one_transaction(conn, &statements).await.map_err(failed(db, "cannot replace its content (nothing changed)"))?;
    sqlx::query("DETACH DATABASE backup").execute(&mut *conn).await.map_err(failed(db, "cannot detach the backup"))?;
    let facts = super::backup::read_facts(conn, 0).await.map_err(failed(db, "cannot check it after the restore"))?;
    if let Err(why) = facts {
        return Err(in_rados(db, format!("the restored database {why}")));
    }
    Ok((kept_aside, taken_over))
}

/// A local copy of the backup that took over what the database knows of
/// now, from a local copy of the database, both in `scratch`.
async fn take_over(
    conn: &mut SqliteConnection,
    db: &RadosDb,
    backup: &Path,
    scratch: &Path,
) -> Result<(std::path::PathBuf, KeptFromReplaced), BackupError> {
    let (replaced, restored) = (scratch.join("replaced.db"), scratch.join("restored.db"));
    let uri = format!("file://{}?vfs=unix", uri_path(&replaced)?);
    let why = "cannot copy it to a local file to keep its revocations, holds and recovery boost (nothing changed)";
    sqlx::query("VACUUM INTO ?").bind(&uri).execute(&mut *conn).await.map_err(failed(db, why))?;
    std::fs::copy(backup, &restored).map_err(|source| BackupError::Io { path: restored.clone(), source })?;
    let kept = super::restore_carry::carry(&restored, &replaced).await?;
    Ok((restored, kept))
}

/// Copies what the database holds to `aside` (which must not exist) and
/// checks the copy.
async fn keep(conn: &mut SqliteConnection, db: &RadosDb, aside: &RadosDb) -> Result<(), BackupError> {
    let uri = format!("file://{}?vfs=ceph", aside.vfs_path());
    let why = format!("cannot copy it to {aside} first (nothing changed)");
    sqlx::query("VACUUM INTO ?").bind(&uri).execute(&mut *conn).await.map_err(failed(db, &why))?;
    sqlx::query("ATTACH DATABASE ? AS kept").bind(&uri).execute(&mut *conn).await.map_err(failed(db, &why))?;
    let check: Result<String, _> = sqlx::query_scalar("PRAGMA kept.integrity_check").fetch_one(&mut *conn).await;
    sqlx::query("DETACH DATABASE kept").execute(&mut *conn).await.map_err(failed(db, &why))?;
    match check.map_err(failed(db, &why))?.as_str() {
        "ok" => Ok(()),
        bad => Err(in_rados(db, format!("{why}: the copy fails SQLite's integrity check: {bad}"))),
    }
}

/// The objects of schema `of` that a restore carries over (SQLite's own,
/// `sqlite_*`, are not made by statements), in the order they were made.
async fn schema(conn: &mut SqliteConnection, of: &str) -> Result<Vec<SchemaObject>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "SELECT type, name, sql FROM {of}.sqlite_master \
         WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
    ))
    .fetch_all(&mut *conn)
    .await?;
    rows.iter().map(|r| Ok(SchemaObject { kind: r.try_get(0)?, name: r.try_get(1)?, sql: r.try_get(2)? })).collect()
}

async fn in_one_transaction(conn: &mut SqliteConnection, statements: &[String]) -> Result<(), sqlx::Error> {
    sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await?;
    for statement in statements {
        if let Err(e) = sqlx::query(statement).execute(&mut *conn).await {
            if let Err(rollback) = sqlx::query("ROLLBACK").execute(&mut *conn).await {
                tracing::warn!("cannot roll the restore back (closing the connection does): {rollback}");
            }
            return Err(e);
        }
    }
    crash_point();
    sqlx::query("COMMIT").execute(&mut *conn).await?;
    Ok(())
}

/// The crash test's power cut (`OSDKEEPER_CRASH_AFTER=restore-statements`,
/// as the daemon's operations name theirs): aborted after the replacing
/// statements ran, before their commit, the lock left to expire.
fn crash_point() {
    if std::env::var("OSDKEEPER_CRASH_AFTER").is_ok_and(|v| v == "restore-statements") {
        eprintln!("OSDKEEPER_CRASH_AFTER=restore-statements: aborting before the restore's commit, as a crash would");
        std::process::abort();
    }
}

/// The statements, run in one transaction on a connection with the backup
/// attached as `backup`, that make `main` hold what the backup holds:
/// `main`'s tables and views dropped (their indexes and triggers go with
/// them), the backup's tables made and filled, then its indexes, triggers
/// and views (made after the rows, so no trigger fires on them), its
/// `sqlite_sequence` rows (the next id of each AUTOINCREMENT table) and
/// its user version.
fn replacement(main: &[SchemaObject], backup: &[SchemaObject], sequence: bool, user_version: i64) -> Vec<String> {
    let mut out = Vec::new();
    for o in main.iter().filter(|o| o.kind == "view") {
        out.push(format!("DROP VIEW main.{}", quoted(&o.name)));
    }
    for o in main.iter().filter(|o| o.kind == "table") {
        out.push(format!("DROP TABLE main.{}", quoted(&o.name)));
    }
    let tables: Vec<&SchemaObject> = backup.iter().filter(|o| o.kind == "table").collect();
    // Unqualified, a CREATE makes its object in `main`.
    out.extend(tables.iter().map(|t| t.sql.clone()));
    for t in &tables {
        out.push(format!("INSERT INTO main.{name} SELECT * FROM backup.{name}", name = quoted(&t.name)));
    }
    out.extend(backup.iter().filter(|o| o.kind != "table").map(|o| o.sql.clone()));
    if sequence {
        out.push("DELETE FROM main.sqlite_sequence".into());
        out.push("INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM backup.sqlite_sequence".into());
    }
    out.push(format!("PRAGMA main.user_version = {user_version}"));
    out
}

/// An SQL identifier, quoted.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn in_rados(db: &RadosDb, message: String) -> BackupError {
    BackupError::InRados { db: db.to_string(), message }
}

fn failed<'a>(db: &'a RadosDb, doing: &'a str) -> impl Fn(sqlx::Error) -> BackupError + 'a {
    move |e| in_rados(db, format!("{doing}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(kind: &str, name: &str, sql: &str) -> SchemaObject {
        SchemaObject { kind: kind.into(), name: name.into(), sql: sql.into() }
    }

    #[test]
    fn a_restore_drops_every_table_and_view_then_makes_the_backups_with_their_rows_before_indexes_and_triggers() {
        let main = [
            object("table", "hosts", "CREATE TABLE hosts (name TEXT)"),
            object("index", "hosts_by_name", "CREATE INDEX hosts_by_name ON hosts (name)"),
            object("view", "names", "CREATE VIEW names AS SELECT name FROM hosts"),
            object("table", "odd \"name\"", "CREATE TABLE \"odd \"\"name\"\"\" (x)"),
        ];
        let backup = [
            object("table", "hosts", "CREATE TABLE hosts (name TEXT, addr TEXT)"),
            object("trigger", "hosts_touch", "CREATE TRIGGER hosts_touch AFTER INSERT ON hosts BEGIN SELECT 1; END"),
            object("table", "events", "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT)"),
            object("index", "events_at", "CREATE INDEX events_at ON events (id)"),
        ];
        let got = replacement(&main, &backup, true, 7);
        assert_eq!(
            got,
            [
                "DROP VIEW main.\"names\"",
                "DROP TABLE main.\"hosts\"",
                "DROP TABLE main.\"odd \"\"name\"\"\"",
                "CREATE TABLE hosts (name TEXT, addr TEXT)",
                "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT)",
                "INSERT INTO main.\"hosts\" SELECT * FROM backup.\"hosts\"",
                "INSERT INTO main.\"events\" SELECT * FROM backup.\"events\"",
                "CREATE TRIGGER hosts_touch AFTER INSERT ON hosts BEGIN SELECT 1; END",
                "CREATE INDEX events_at ON events (id)",
                "DELETE FROM main.sqlite_sequence",
                "INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM backup.sqlite_sequence",
                "PRAGMA main.user_version = 7",
            ]
        );
        let into_nothing = replacement(&[], &backup[..1], false, 0);
        assert_eq!(
            into_nothing,
            [
                "CREATE TABLE hosts (name TEXT, addr TEXT)",
                "INSERT INTO main.\"hosts\" SELECT * FROM backup.\"hosts\"",
                "PRAGMA main.user_version = 0",
            ]
        );
    }
}
