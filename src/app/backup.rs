//! `backup` and `restore` as the CLI runs them: which database the
//! daemon's config names, then the store's copy or restore of it.

use std::path::{Path, PathBuf};

use crate::config::{FileConfig, DEFAULT_DB};
use crate::store::backup;

pub use crate::store::backup::{known_schema_version, BackupFacts};

/// The database `--db` names, else the config file's `db:`, else the default.
pub fn database(db: Option<&Path>, config: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(db) = db {
        return Ok(db.to_path_buf());
    }
    let file = match config {
        Some(p) => FileConfig::read(p).map_err(|e| e.to_string())?,
        None => FileConfig::default(),
    };
    Ok(file.db.unwrap_or_else(|| PathBuf::from(DEFAULT_DB)))
}

pub async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, String> {
    backup::backup(db, dest).await.map_err(|e| e.to_string())
}

/// The facts of the restored backup, and where the replaced database went.
pub async fn restore(db: &Path, file: &Path) -> Result<(BackupFacts, Option<PathBuf>), String> {
    let now_s = crate::clock::now_ms() / 1000;
    backup::restore(db, file, now_s).await.map_err(|e| e.to_string())
}
