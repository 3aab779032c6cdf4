//! Backing the database up while the daemon runs, and putting a backup back.
//!
//! The copy is made with `VACUUM INTO`: SQLite writes a consistent
//! snapshot of the live database (WAL included) in one read transaction,
//! so the daemon keeps writing meanwhile, and the copy is compact. It is
//! SQLite's own online copy, without the unsafe C backup API that sqlx
//! does not wrap. A restore never deletes: the database it replaces is
//! moved aside with its WAL, and the daemon must be stopped (its lock).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection};
use sqlx::{ConnectOptions, Connection};

/// What a backup holds, read back from the file itself.
#[derive(Debug, Clone, PartialEq)]
pub struct BackupFacts {
    /// The last migration applied to it.
    pub schema_version: i64,
    pub hosts: i64,
    pub specs: i64,
    pub removals: i64,
    pub events: i64,
    pub bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{path}: {message}")]
    Refused { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Db { path: PathBuf, source: sqlx::Error },
}

/// The lock `serve` holds on its database while it runs; a restore takes
/// it too, so neither runs beside the other.
pub struct DbLock {
    _file: File,
}

/// The lock file of a database: `osdkeeper.db` → `osdkeeper.db.lock`.
pub fn lock_path(db: &Path) -> PathBuf {
    suffixed(db, ".lock")
}

fn suffixed(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl DbLock {
    /// Takes the lock or says who holds it.
    pub fn take(db: &Path) -> Result<DbLock, BackupError> {
        let path = lock_path(db);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|source| BackupError::Io { path: path.clone(), source })?;
        match file.try_lock() {
            Ok(()) => Ok(DbLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(BackupError::Refused {
                path: db.to_path_buf(),
                message: "in use: an `osdkeeper serve` (or a restore) holds its lock; stop it first".into(),
            }),
            Err(std::fs::TryLockError::Error(source)) => Err(BackupError::Io { path, source }),
        }
    }
}

async fn connect(path: &Path, read_only: bool) -> Result<SqliteConnection, BackupError> {
    let db_err = |source| BackupError::Db { path: path.to_path_buf(), source };
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(db_err)?
        .read_only(read_only)
        .busy_timeout(std::time::Duration::from_secs(10));
    options.connect().await.map_err(db_err)
}

/// Writes a consistent copy of the live database `db` to `dest`, which
/// must not exist yet, and reads it back.
pub async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, BackupError> {
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
    conn.close().await.map_err(|source| BackupError::Db { path: db.into(), source })?;
    copied.map_err(|source| BackupError::Db { path: dest.into(), source })?;
    inspect(dest).await
}

/// Checks a backup file (SQLite's integrity check) and says what it holds.
pub async fn inspect(file: &Path) -> Result<BackupFacts, BackupError> {
    let bytes = std::fs::metadata(file).map_err(|source| BackupError::Io { path: file.into(), source })?.len();
    let mut conn = connect(file, true).await?;
    let facts = read_facts(&mut conn, bytes).await.map_err(|source| BackupError::Db { path: file.into(), source });
    conn.close().await.map_err(|source| BackupError::Db { path: file.into(), source })?;
    let facts = facts?;
    facts.map_err(|message| BackupError::Refused { path: file.into(), message })
}

async fn read_facts(conn: &mut SqliteConnection, bytes: u64) -> Result<Result<BackupFacts, String>, sqlx::Error> {
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
    // RemovalCodec are rows of `operations` from migration 13 on; an older
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
pub fn known_schema_version() -> i64 {
    sqlx::migrate!("./migrations").iter().map(|m| m.version).max().unwrap_or(0)
}

/// Puts `backup` in place of `db`. The daemon must be stopped; the current
/// database (with its WAL and shared memory) is moved aside, never
/// deleted, and its new name returned. The next `serve` migrates an
/// older backup forward.
pub async fn restore(db: &Path, backup: &Path, now_s: i64) -> Result<(BackupFacts, Option<PathBuf>), BackupError> {
    let _lock = DbLock::take(db)?;
    let facts = inspect(backup).await?;
    let known = known_schema_version();
    if facts.schema_version > known {
        return Err(BackupError::Refused {
            path: backup.into(),
            message: format!(
                "was written by a newer osdkeeper (schema {}; this one knows up to {known}): restore it with that version",
                facts.schema_version
            ),
        });
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BackupError::Io { path, source }
    };
    // Copied next to the database first, so the final step is a rename.
    let incoming = suffixed(db, ".restoring");
    std::fs::copy(backup, &incoming).map_err(io(&incoming))?;
    let aside = if db.exists() {
        // Owned as the file it replaces: root restores, the daemon's user writes.
        use std::os::unix::fs::MetadataExt;
        let was = std::fs::metadata(db).map_err(io(db))?;
        std::os::unix::fs::chown(&incoming, Some(was.uid()), Some(was.gid())).map_err(io(&incoming))?;
        std::fs::set_permissions(&incoming, was.permissions()).map_err(io(&incoming))?;
        // Folds the WAL into the file first: a WAL left behind (or moved
        // without its database) would be replayed into the wrong file.
        let mut conn = connect(db, false).await?;
        let folded = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&mut conn).await;
        conn.close().await.map_err(|source| BackupError::Db { path: db.into(), source })?;
        folded.map_err(|source| BackupError::Db { path: db.into(), source })?;
        let aside = suffixed(db, &format!(".before-restore-{now_s}"));
        for suffix in ["-wal", "-shm"] {
            let from = suffixed(db, suffix);
            if from.exists() {
                let to = suffixed(&aside, suffix);
                std::fs::rename(&from, &to).map_err(io(&from))?;
            }
        }
        std::fs::rename(db, &aside).map_err(io(db))?;
        Some(aside)
    } else {
        None
    };
    std::fs::rename(&incoming, db).map_err(io(db))?;
    Ok((facts, aside))
}
