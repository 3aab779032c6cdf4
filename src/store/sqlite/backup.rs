//! The copy of a live SQLite database and its restore.
//!
//! The copy is made with `VACUUM INTO`: SQLite writes a consistent
//! snapshot of the live database (WAL included) in one read transaction,
//! so the daemon keeps writing meanwhile, and the copy is compact. It is
//! SQLite's own online copy, without the unsafe C backup API that sqlx
//! does not wrap. A restore moves the database aside with its WAL, after
//! the restored copy took over what the replaced one knows of now
//! (`restore_carry.rs`).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};

use crate::store::backup::{suffixed, BackupError, BackupFacts, KeptFromReplaced};
use crate::store::DbError;

fn db_error(path: &Path) -> impl Fn(sqlx::Error) -> BackupError + '_ {
    move |source| BackupError::Db { path: path.to_path_buf(), source: DbError::new(source) }
}

async fn connect(path: &Path, read_only: bool) -> Result<SqliteConnection, BackupError> {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(db_error(path))?
        .read_only(read_only)
        .busy_timeout(std::time::Duration::from_secs(10));
    options.connect().await.map_err(db_error(path))
}

/// Writes a consistent copy of the live database `db` to `dest`, which
/// must not exist yet, and reads it back.
pub(in crate::store) async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, BackupError> {
    if !db.exists() {
        return Err(BackupError::Refused { path: db.into(), message: "no such database".into() });
    }
    if dest.exists() {
        return Err(BackupError::Refused {
            path: dest.into(),
            message: "exists already; a backup never overwrites a file (remove it or pick another name)".into(),
        });
    }
    let dest_text = dest
        .to_str()
        .ok_or_else(|| BackupError::Refused { path: dest.into(), message: "the path is not UTF-8".into() })?;
    // Not read-only: a WAL database needs its -shm to read, which a
    // read-only connection cannot create when the daemon is stopped.
    let mut conn = connect(db, false).await?;
    let copied = sqlx::query("VACUUM INTO ?").bind(dest_text).execute(&mut conn).await;
    conn.close().await.map_err(db_error(db))?;
    copied.map_err(db_error(dest))?;
    inspect(dest).await
}

/// The copy through the daemon's own connection (a database in RADOS has
/// no other): `VACUUM INTO` a local file named as a URI with the unix VFS,
/// else SQLite would write the copy through the database's own VFS, into
/// RADOS. The caller checked that `dest` is absolute and plain.
pub(super) async fn copy_into(pool: &sqlx::SqlitePool, dest: &Path) -> crate::store::Result<()> {
    // An empty authority, so that a path of `//x` is not read as host x.
    let uri = format!("file://{}?vfs=unix", dest.display());
    // Not through `From<sqlx::Error>`: an I/O error here is the local
    // file's (a full disk), not a sign that the database's lock has passed.
    sqlx::query("VACUUM INTO ?")
        .bind(uri)
        .execute(pool)
        .await
        .map_err(|e| crate::store::StoreError::Db(crate::store::DbError::new(e)))?;
    Ok(())
}

/// Checks a backup file (SQLite's integrity check) and says what it holds.
pub(in crate::store) async fn inspect(file: &Path) -> Result<BackupFacts, BackupError> {
    let bytes = std::fs::metadata(file).map_err(|source| BackupError::Io { path: file.into(), source })?.len();
    let mut conn = connect(file, true).await?;
    let facts = read_facts(&mut conn, bytes).await.map_err(db_error(file));
    conn.close().await.map_err(db_error(file))?;
    let facts = facts?;
    facts.map_err(|message| BackupError::Refused { path: file.into(), message })
}

pub(super) async fn read_facts(
    conn: &mut SqliteConnection,
    bytes: u64,
) -> Result<Result<BackupFacts, String>, sqlx::Error> {
    let check: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut *conn).await?;
    if check != "ok" {
        return Ok(Err(format!("fails SQLite's integrity check: {check}")));
    }
    let schema: Option<i64> =
        match sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success").fetch_one(&mut *conn).await
        {
            Ok(v) => v,
            Err(sqlx::Error::Database(e)) if e.message().contains("no such table") => {
                return Ok(Err("is no osdkeeper database (it has no migrations table)".into()))
            }
            Err(e) => return Err(e),
        };
    // Removals are rows of `operations` from migration 13 on; an older
    // backup (restored, then migrated forward) still has their own table.
    let removals = if schema.unwrap_or(0) >= 13 { "operations WHERE kind = 'removal'" } else { "removals" };
    let mut counts = [0i64; 4];
    for (n, table) in counts.iter_mut().zip(["hosts", "specs", removals, "events"]) {
        *n = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(&mut *conn).await?;
    }
    let [hosts, specs, removals, events] = counts;
    Ok(Ok(BackupFacts { schema_version: schema.unwrap_or(0), hosts, specs, removals, events, bytes }))
}

/// The newest schema this build knows (its last migration).
pub(in crate::store) fn known_schema_version() -> i64 {
    sqlx::migrate!("./migrations").iter().map(|m| m.version).max().unwrap_or(0)
}

/// Makes `incoming`, a copy of the backup, keep what the database `db`
/// knows of now (`restore_carry.rs`), through a copy of `db`.
async fn keep_from(db: &Path, incoming: &Path) -> Result<KeptFromReplaced, BackupError> {
    let scratch = tempfile::tempdir().map_err(|source| BackupError::Io { path: std::env::temp_dir(), source })?;
    let replaced = scratch.path().join("replaced.db");
    backup(db, &replaced).await?;
    super::restore_carry::carry(incoming, &replaced).await
}

/// Moves the database `db` aside (with its WAL, folded in first) and puts
/// a copy of `backup` in its place, after it took over what `db` knows of
/// now; the name `db` was moved to and what was taken over.
pub(in crate::store) async fn put_in_place(
    db: &Path,
    backup: &Path,
    now_s: i64,
) -> Result<(Option<PathBuf>, Option<KeptFromReplaced>), BackupError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BackupError::Io { path, source }
    };
    // Copied next to the database first, so the final step is a rename.
    let incoming = suffixed(db, ".restoring");
    std::fs::copy(backup, &incoming).map_err(io(&incoming))?;
    let (aside, kept) = if db.exists() {
        let kept = match keep_from(db, &incoming).await {
            Ok(kept) => kept,
            Err(e) => {
                if let Err(left) = std::fs::remove_file(&incoming) {
                    tracing::warn!("cannot remove {}: {left}", incoming.display());
                }
                return Err(e);
            }
        };
        // Owned as the file it replaces: root restores, the daemon's user writes.
        use std::os::unix::fs::MetadataExt;
        let was = std::fs::metadata(db).map_err(io(db))?;
        std::os::unix::fs::chown(&incoming, Some(was.uid()), Some(was.gid())).map_err(io(&incoming))?;
        std::fs::set_permissions(&incoming, was.permissions()).map_err(io(&incoming))?;
        // Folds the WAL into the file first: a WAL left behind (or moved
        // without its database) would be replayed into the wrong file.
        let mut conn = connect(db, false).await?;
        let folded = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await;
        conn.close().await.map_err(db_error(db))?;
        folded.map_err(db_error(db))?;
        let aside = suffixed(db, &format!(".before-restore-{now_s}"));
        for suffix in ["-wal", "-shm"] {
            let from = suffixed(db, suffix);
            if from.exists() {
                let to = suffixed(&aside, suffix);
                std::fs::rename(&from, &to).map_err(io(&from))?;
            }
        }
        std::fs::rename(db, &aside).map_err(io(db))?;
        (Some(aside), Some(kept))
    } else {
        (None, None)
    };
    std::fs::rename(&incoming, db).map_err(io(db))?;
    Ok((aside, kept))
}
