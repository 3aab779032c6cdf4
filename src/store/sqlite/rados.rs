//! The same SQLite database kept in a RADOS pool, through Ceph's SQLite VFS
//! (`libcephsqlite`, Debian's `libsqlite3-mod-ceph`). Everything above the
//! connection is the file adapter's; what differs is how it is opened and
//! that it is also the daemons' leader lock.
//!
//! The VFS takes one exclusive RADOS lock on the database's first object
//! at the first read or transaction and, with `locking_mode=EXCLUSIVE`,
//! keeps it (renewed every `cephsqlite_lock_renewal_interval`, 2 s, lost
//! `cephsqlite_lock_renewal_timeout`, 30 s, after the last renewal: Ceph's
//! defaults) until the connection closes: whoever holds the connection is the
//! leader. A second daemon's first statement waits inside the VFS (it
//! retries every 5 ms and never answers SQLITE_BUSY) until the leader
//! closes, or dies and its lock expires; the one that takes it over
//! blocklists the old holder, whose next write then fails with an I/O
//! error. So: one connection per process (a second one would wait on the
//! first forever), opened without a time limit, and an I/O error after the
//! lock was ours means another daemon leads now (`Fence`).
//!
//! Pragmas, each for a reason measured on Ceph 16.2:
//! * `locking_mode=EXCLUSIVE`: the lock taken once and kept (the leader
//!   lock), and each transaction spared a lock and an unlock;
//! * `journal_mode=PERSIST`, not WAL: a leader killed in the middle of a
//!   drain left a WAL that its standby could not recover, every try
//!   failing with SQLITE_IOERR_SHORT_READ (2 of 4 runs of
//!   tests/ha_standby.rs; not reproduced with sqlite3 and its own
//!   writes); a rollback journal's torn end is read as its end, and
//!   PERSIST spares deleting its objects after every transaction. It
//!   costs 13 ms a write against WAL's 11 (BENCHMARKS.md);
//! * `synchronous=FULL`: a commit is in RADOS when it returns, so an
//!   intent written before an effect survives the leader's death;
//! * `page_size=65536`: each page is a RADOS write, fewer and larger ones
//!   (set before the database is created; later it has no effect);
//! * `temp_store=MEMORY` (the VFS has no temporary files; `VACUUM` needs
//!   it) and `mmap_size=0` (the VFS cannot be mapped).

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteLockingMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};

use super::SqliteBackend;
use crate::store::location::RadosDb;
use crate::store::{Result, StoreError};

/// The Debian and Ubuntu package that carries the VFS.
pub const VFS_PACKAGE: &str = "libsqlite3-mod-ceph";

/// What to do when the lock is lost: called once, from the statement that
/// found out; the daemon's is to log and exit at once.
pub type Fence = Box<dyn Fn(&str) + Send + Sync>;

static FENCE: OnceLock<Fence> = OnceLock::new();
/// Set once this process's connection has the lock: an I/O error before
/// that is a cluster problem, after it a lost lock.
static LEADING: AtomicBool = AtomicBool::new(false);

/// The VFS registers itself for the whole process when it is loaded; sqlx
/// loads extensions only after it opened a database, so it is loaded into
/// a throw-away in-memory database first.
pub(in crate::store) async fn register_vfs() -> Result<()> {
    static LOADED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    LOADED
        .get_or_try_init(|| async {
            let options = SqliteConnectOptions::from_str("sqlite::memory:")?.extension("libcephsqlite");
            let conn = options.connect().await.map_err(|e| {
                StoreError::Unavailable(format!(
                    "cannot load Ceph's SQLite VFS (libcephsqlite; install the package {VFS_PACKAGE}): {e}"
                ))
            })?;
            conn.close().await?;
            Ok::<(), StoreError>(())
        })
        .await
        .map(|_| ())
}

/// The connection every opener of a database in RADOS makes (the daemon,
/// a restore): the pragmas above.
pub(super) fn options(db: &RadosDb) -> SqliteConnectOptions {
    SqliteConnectOptions::new()
        .filename(db.vfs_path())
        .vfs("ceph")
        .create_if_missing(true)
        .page_size(65536)
        .locking_mode(SqliteLockingMode::Exclusive)
        .journal_mode(SqliteJournalMode::Persist)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        .pragma("temp_store", "MEMORY")
        .pragma("mmap_size", "0")
        // Its first statement waits for the lock as long as another daemon
        // leads; sqlx would call that a slow statement (`app/leader.rs`
        // logs the wait).
        .disable_statement_logging()
}

/// Opens the database in RADOS, waiting as long as another daemon holds
/// it. The caller has checked that the cluster answers and the pool
/// exists: the VFS aborts the process when it cannot reach the cluster.
pub(super) async fn open(db: &RadosDb, fence: Fence) -> Result<SqliteBackend> {
    register_vfs().await?;
    // A second open in one process would wait on the first forever; a
    // try again after a failed one keeps the fence of the first.
    if LEADING.load(Ordering::SeqCst) {
        return Err(StoreError::Unavailable(format!("{db} is open in this process already")));
    }
    if FENCE.set(fence).is_err() {
        tracing::debug!(%db, "opening again; the fence of the first try stays");
    }
    let options = options(db);
    // The connection's first pragma reads the database, so it waits for
    // the lock: as long as another daemon leads, which has no bound.
    let forever = Duration::from_secs(100 * 365 * 24 * 3600);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(1)
        .acquire_timeout(forever)
        .idle_timeout(None)
        .max_lifetime(None)
        // The pool opens a connection again when it closed one (a failed
        // ping, a crashed worker): its lock was given back with the old
        // one, and another daemon may lead now.
        .after_connect(|_, _| {
            Box::pin(async {
                if LEADING.load(Ordering::SeqCst) {
                    if let Some(fence) = FENCE.get() {
                        fence("the database's connection was opened again, its lock given back with the old one");
                    }
                }
                Ok(())
            })
        })
        .connect_with(options)
        .await?;
    LEADING.store(true, Ordering::SeqCst);
    if let Err(e) = sqlx::migrate!("./migrations").run(&pool).await {
        // The lock goes back with the connection, and a try again later
        // (a standby's) starts from nothing held.
        pool.close().await;
        LEADING.store(false, Ordering::SeqCst);
        return Err(e.into());
    }
    Ok(SqliteBackend::one_connection(pool))
}

/// SQLite's I/O error class (extended codes keep it in their low byte).
const SQLITE_IOERR: i32 = 10;

/// Called with every error of the adapter: an I/O error once the lock was
/// ours means it is not any more.
pub(super) fn check(e: &sqlx::Error) {
    if !LEADING.load(Ordering::SeqCst) {
        return;
    }
    let sqlx::Error::Database(d) = e else { return };
    let io = d.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| c & 0xff == SQLITE_IOERR);
    if io {
        if let Some(fence) = FENCE.get() {
            fence(&d.to_string());
        }
    }
}
