//! `backup` and `restore` as the CLI runs them: which database the
//! daemon's config names, then the store's copy or restore of it.

use std::path::{Path, PathBuf};

use crate::config::FileConfig;
use crate::store::backup;
use crate::store::location::DbLocation;

pub use crate::store::backup::{known_schema_version, BackupFacts};

/// The `db` value `--db` gives, else the config file's.
fn given(db: Option<&Path>, config: Option<&Path>) -> Result<Option<PathBuf>, String> {
    Ok(match db {
        Some(db) => Some(db.to_path_buf()),
        None => match config {
            Some(p) => FileConfig::read(p).map_err(|e| e.to_string())?.db,
            None => None,
        },
    })
}

/// The `ceph:` database named, if that is what the flags or the config name.
pub fn in_rados(db: Option<&Path>, config: Option<&Path>) -> Option<String> {
    match crate::config::database(given(db, config).ok()?) {
        Ok(DbLocation::Rados(r)) => Some(r.to_string()),
        _ => None,
    }
}

/// The database file `--db` names, else the config file's `db:`, else the
/// default. A database in RADOS is refused with what to do instead.
pub fn database(db: Option<&Path>, config: Option<&Path>) -> Result<PathBuf, String> {
    match crate::config::database(given(db, config)?).map_err(|e| e.to_string())? {
        DbLocation::File(path) => Ok(path),
        DbLocation::Rados(r) => Err(format!(
            "{r} is kept in RADOS: `osdkeeper backup` copies it through the leading daemon (OSDKEEPER_URL); \
             `restore` into RADOS is not supported yet"
        )),
    }
}

pub async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, String> {
    backup::backup(db, dest).await.map_err(|e| e.to_string())
}

/// The facts of the restored backup, and where the replaced database went.
pub async fn restore(db: &Path, file: &Path) -> Result<(BackupFacts, Option<PathBuf>), String> {
    let now_s = crate::clock::now_ms() / 1000;
    backup::restore(db, file, now_s).await.map_err(|e| e.to_string())
}
