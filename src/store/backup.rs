//! Backing the database up while the daemon runs, and putting a backup back:
//! what `osdkeeper backup` and `restore` see. The copy itself is the
//! backend's (`sqlite/backup.rs`: a consistent copy of the live file). A
//! restore never deletes: the database it replaces is moved aside (a file)
//! or copied aside (a database in RADOS), and no daemon may hold it (the
//! file's lock, the RADOS lock).

use std::fs::File;
use std::path::{Path, PathBuf};

use super::location::RadosDb;
use super::{sqlite, DbError};

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

/// What a restore took over from the database it replaced, which knows
/// more of now than the backup (`sqlite/restore_carry.rs` has the rules).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KeptFromReplaced {
    /// Tokens active in the backup and revoked since: revoked.
    pub revoked: Vec<String>,
    /// Tokens made after the backup, kept as they are (revoked or not).
    pub tokens: Vec<String>,
    /// Holds made or changed after the backup (`HOST PATH`).
    pub holds: Vec<String>,
    /// Holds of the backup released since: kept (`HOST PATH`).
    pub holds_released_since: Vec<String>,
    /// Hosts added after the backup that hold disks: kept with their holds.
    pub hosts: Vec<String>,
    /// The replaced database's recovery boost was taken (one is set on the cluster).
    pub boost_taken: bool,
    /// The backup's boost was dropped: it was put back since.
    pub boost_dropped: bool,
}

/// A restore's outcome: the backup's facts, where the replaced database
/// went, and what was taken over from it (nothing was replaced: `None`).
#[derive(Debug, Clone)]
pub struct Restored<Aside> {
    pub facts: BackupFacts,
    pub aside: Option<Aside>,
    pub kept: Option<KeptFromReplaced>,
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("{path}: {message}")]
    Refused { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Db { path: PathBuf, source: DbError },
    /// Refused or failed on a database kept in RADOS (`ceph:...`).
    #[error("{db}: {message}")]
    InRados { db: String, message: String },
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

pub(super) fn suffixed(db: &Path, suffix: &str) -> PathBuf {
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

/// Writes a consistent copy of the live database `db` to `dest`, which
/// must not exist yet, and reads it back.
pub async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, BackupError> {
    sqlite::backup::backup(db, dest).await
}

impl super::Store {
    /// A consistent copy of the live database, made through this store's
    /// own connection (the only way into a database kept in RADOS, whose
    /// lock admits no second one), to the local file `dest`, then checked.
    pub async fn backup_to(&self, dest: &Path) -> Result<BackupFacts, BackupError> {
        let refused = |message: &str| BackupError::Refused { path: dest.into(), message: message.into() };
        if !dest.is_absolute() {
            return Err(refused("must be an absolute path on the daemon's machine"));
        }
        uri_path(dest)?;
        if dest.exists() {
            return Err(refused("exists already; a backup never overwrites a file (remove it or pick another name)"));
        }
        if !dest.parent().is_some_and(Path::is_dir) {
            return Err(refused("its directory does not exist"));
        }
        self.backend
            .copy_into(dest)
            .await
            .map_err(|e| BackupError::Db { path: dest.into(), source: DbError::new(e) })?;
        inspect(dest).await
    }
}

/// Checks a backup file (the database's own integrity check) and says what it holds.
pub async fn inspect(file: &Path) -> Result<BackupFacts, BackupError> {
    sqlite::backup::inspect(file).await
}

/// The newest schema this build knows (its last migration).
pub fn known_schema_version() -> i64 {
    sqlite::backup::known_schema_version()
}

/// Puts `backup` in place of `db`, keeping what `db` knows of now
/// (tokens revoked, holds, the recovery boost). The daemon must be
/// stopped; the current database is moved aside, never deleted, and its
/// new name returned. The next `serve` migrates an older backup forward
/// (one that replaced a database already is).
pub async fn restore(db: &Path, backup: &Path, now_s: i64) -> Result<Restored<PathBuf>, BackupError> {
    let _lock = DbLock::take(db)?;
    let facts = restorable(backup).await?;
    let (aside, kept) = sqlite::backup::put_in_place(db, backup, now_s).await?;
    Ok(Restored { facts, aside, kept })
}

/// Checks that `backup` may be restored by this build: an osdkeeper
/// database that passes its integrity check, of a schema this build knows
/// (the next `serve` migrates an older one forward). What it holds.
pub async fn restorable(backup: &Path) -> Result<BackupFacts, BackupError> {
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
    Ok(facts)
}

/// How long a restore into RADOS waits for the database's lock, which
/// `rados lock info` found free just before: longer, a daemon took it
/// meanwhile (the VFS would wait as long as that daemon leads).
pub const RADOS_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Puts the backup `backup` (checked with `restorable`) in place of the
/// content of the database `db` kept in RADOS, in one transaction under
/// the database's own lock, after a copy of what it held to `aside`, and
/// keeping what it knows of now as `restore` does; the copy's name and
/// what was kept when there was anything (`sqlite/rados_restore.rs`). The
/// caller found no daemon holding the lock.
pub async fn restore_rados(
    db: &RadosDb,
    backup: &Path,
    aside: &RadosDb,
) -> Result<(Option<RadosDb>, Option<KeptFromReplaced>), BackupError> {
    sqlite::rados_restore::restore(db, backup, aside, RADOS_LOCK_WAIT).await
}

/// `path` as the path of a `file:` URI (SQLite's way to name a local file
/// with its VFS from a connection to another): absolute, UTF-8, and
/// nothing a URI reads as structure.
pub(super) fn uri_path(path: &Path) -> Result<&str, BackupError> {
    let refused = |message: &str| BackupError::Refused { path: path.into(), message: message.into() };
    if !path.is_absolute() {
        return Err(refused("must be an absolute path"));
    }
    let text = path.to_str().ok_or_else(|| refused("the path is not UTF-8"))?;
    if text.contains(['?', '#', '%']) {
        return Err(refused("holds '?', '#' or '%', which a database URI would read as structure"));
    }
    Ok(text)
}
