//! `backup` and `restore` as the CLI runs them: which database the
//! daemon's config names, then the store's copy or restore of it. A
//! restore into RADOS asks the cluster first whether a daemon holds the
//! database: the VFS would wait for its lock as long as that daemon leads.

use std::path::{Path, PathBuf};

use crate::ceph::bench::CephBench;
use crate::ceph::cli::CephCli;
use crate::ceph::xattrs::ObjectName;
use crate::config::{CephFile, Config, FileConfig, Overrides};
use crate::store::backup;
use crate::store::location::{DbLocation, VFS_LOCK};
use crate::wire::leader::LeaderRecord;

pub use crate::store::backup::{known_schema_version, BackupFacts, KeptFromReplaced, Restored};
pub use crate::store::location::RadosDb;

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
pub fn in_rados(db: Option<&Path>, config: Option<&Path>) -> Option<RadosDb> {
    match crate::config::database(given(db, config).ok()?) {
        Ok(DbLocation::Rados(r)) => Some(r),
        _ => None,
    }
}

/// The config file's `ceph:` settings (the cluster, the cephx user), or
/// none given.
pub fn ceph_settings(config: Option<&Path>) -> Result<CephFile, String> {
    match config {
        Some(p) => Ok(FileConfig::read(p).map_err(|e| e.to_string())?.ceph),
        None => Ok(CephFile::default()),
    }
}

/// The database file `--db` names, else the config file's `db:`, else the
/// default. A database in RADOS is refused with what to do instead.
pub fn database(db: Option<&Path>, config: Option<&Path>) -> Result<PathBuf, String> {
    match crate::config::database(given(db, config)?).map_err(|e| e.to_string())? {
        DbLocation::File(path) => Ok(path),
        DbLocation::Rados(r) => Err(format!(
            "{r} is kept in RADOS: `osdkeeper backup` copies it through the leading daemon (OSDKEEPER_URL)"
        )),
    }
}

pub async fn backup(db: &Path, dest: &Path) -> Result<BackupFacts, String> {
    backup::backup(db, dest).await.map_err(|e| e.to_string())
}

/// The facts of the restored backup, where the replaced database went and
/// what was kept of it.
pub async fn restore(db: &Path, file: &Path) -> Result<Restored<PathBuf>, String> {
    let now_s = crate::clock::now_ms() / 1000;
    backup::restore(db, file, now_s).await.map_err(|e| e.to_string())
}

/// `restore FILE` into a database kept in RADOS: the backup checked, the
/// pool there, no daemon holding the database (its lock, whose holder the
/// leader's record names), then the store's restore. The facts of the
/// backup, where the replaced content was copied and what was kept of it.
/// `conf` is the cluster's config file (`CEPH_CONF` or the config's
/// `ceph.conf`).
pub async fn restore_rados(
    db: &RadosDb,
    ceph: &CephFile,
    conf: Option<PathBuf>,
    file: &Path,
) -> Result<Restored<RadosDb>, String> {
    let facts = backup::restorable(file).await.map_err(|e| e.to_string())?;
    let cli = rados_cli(ceph, conf)?;
    // The VFS aborts the process when it cannot reach the cluster.
    match cli.pool(&db.pool).await {
        Ok(Some(_)) => {}
        Ok(None) => return Err(format!("{db}: the pool {} does not exist", db.pool)),
        Err(e) => return Err(format!("{db}: the Ceph cluster did not answer `ceph osd pool ls detail`: {e}")),
    }
    if let Some(holder) = holder(db, &cli).await? {
        return Err(format!("{db}: {holder}"));
    }
    let now_s = crate::clock::now_ms() / 1000;
    let aside = db.beside(&format!(".before-restore-{now_s}"));
    match backup::restore_rados(db, file, &aside).await {
        Ok((aside, kept)) => Ok(Restored { facts, aside, kept }),
        Err(e) => {
            // Said again with whoever holds the lock now, if anyone does.
            match holder(db, &cli).await {
                Ok(Some(holder)) => Err(format!("{e}; {holder}")),
                _ => Err(e.to_string()),
            }
        }
    }
}

/// Who holds the database, said as the refusal: the lock's holder and
/// what the leader's record says of it. None when its lock is free.
async fn holder(db: &RadosDb, cli: &CephCli) -> Result<Option<String>, String> {
    let object = db.first_object();
    let at = ObjectName { pool: &db.pool, namespace: &db.namespace, object: &object };
    let holders = cli
        .lock_holders(&at, VFS_LOCK)
        .await
        .map_err(|e| format!("{db}: cannot tell whether a daemon holds it (`rados lock info`): {e}"))?;
    let Some(h) = holders.first() else { return Ok(None) };
    let leader_object = db.leader_object();
    let record_at = ObjectName { pool: &db.pool, namespace: &db.namespace, object: &leader_object };
    let leader = match cli.get_xattr(&record_at, "leader").await {
        Ok(text) => match text.as_deref().and_then(LeaderRecord::from_json) {
            Some(r) => format!("the leader's record names {} on {} pid {}", r.url, r.host, r.pid),
            None => "no leader's record names it".to_string(),
        },
        Err(e) => format!("the leader's record cannot be read: {e}"),
    };
    Ok(Some(format!(
        "in use: a daemon leads on it ({leader}; its lock is held by {} at {}); stop every daemon on it \
         (a standby would take it over) and try again; the lock of a daemon that crashed expires \
         cephsqlite_lock_renewal_timeout after its last renewal (this one: {} unless renewed)",
        h.client, h.addr, h.expires
    )))
}

/// The `ceph` and `rados` command lines the config's `ceph:` names, for
/// the reads a restore makes, resolved as the daemon resolves them. Only
/// that section: the rest of the config (tokens, TLS) is for serving.
fn rados_cli(ceph: &CephFile, conf: Option<PathBuf>) -> Result<CephCli, String> {
    let file = FileConfig { ceph: ceph.clone(), ..FileConfig::default() };
    let config =
        Config::resolve(file, Overrides { ceph_conf: conf, ..Overrides::default() }).map_err(|e| e.to_string())?;
    Ok(super::ceph_cli(&config, None))
}
