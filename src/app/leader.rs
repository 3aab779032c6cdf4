//! Becoming the leader of a database kept in RADOS: check that the cluster
//! answers and the pool is there (Ceph's VFS aborts the process when it
//! cannot reach the cluster, so it is never asked first), wait for the
//! database's lock as a standby that says where the leader is, then say
//! where this daemon serves. Losing the lock later ends the process at
//! once (`lost`: aborted, so that nothing runs after it); systemd starts
//! it again, as a standby.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::ServeError;
use crate::api::standby::Gate;
use crate::ceph::bench::CephBench;
use crate::ceph::cli::CephCli;
use crate::ceph::xattrs::ObjectName;
use crate::clock::now_ms;
use crate::domain::lock_fencing::{self, Fencing};
use crate::store::lease::Lease;
use crate::store::location::RadosDb;
use crate::store::Store;
use crate::wire::leader::LeaderRecord;

/// How often a standby reads the leader's record.
const LEADER_READ_EVERY: Duration = Duration::from_secs(5);
/// PGs of a pool `--create-pool` makes: the database is a few MiB.
const POOL_PGS: u32 = 8;
const XATTR: &str = "leader";

/// Waits for the lock on `db` (whose pool `check_pool` found) and returns
/// the store once this daemon leads, with the words for the event log that
/// say so; None if told to stop first.
pub(super) async fn take_over(
    db: &RadosDb,
    ceph: &CephCli,
    fencing: Fencing,
    gate: &Arc<Gate>,
    url: &str,
    stop: &CancellationToken,
) -> Result<Option<(Store, String)>, ServeError> {
    let object = db.leader_object();
    let at = ObjectName { pool: &db.pool, namespace: &db.namespace, object: &object };
    let started = Instant::now();
    tracing::info!(%db, "waiting for the database's lock (a standby until then)");
    let opening = open_until_it_opens(db, fencing.frozen_after);
    tokio::pin!(opening);
    let mut tick = tokio::time::interval(LEADER_READ_EVERY);
    let store = loop {
        tokio::select! {
            opened = &mut opening => break opened.map_err(|source| ServeError::Store { path: db.to_string(), source })?,
            _ = stop.cancelled() => {
                tracing::info!(%db, "stopped while a standby");
                return Ok(None);
            }
            _ = tick.tick() => match ceph.get_xattr(&at, XATTR).await {
                Ok(text) => gate.set_leader(text.as_deref().and_then(LeaderRecord::from_json)),
                Err(e) => tracing::warn!(%db, "cannot read the leader's record: {e}"),
            },
        }
    };
    let waited = started.elapsed().as_secs_f64();
    tracing::info!(%db, waited_s = waited, "took the database's lock: leading");
    let Some(lease) = store.lease().cloned() else { unreachable!("a database in RADOS is opened with its lease") };
    prove_the_lock(store.clone(), fencing.prove_every);
    watch_for_freezes(db.to_string(), lease);
    let me = LeaderRecord { url: url.to_string(), host: hostname(), pid: std::process::id(), since_ms: now_ms() };
    let before = match gate.leader().filter(|l| (l.host.as_str(), l.pid) != (me.host.as_str(), me.pid)) {
        Some(l) => format!("; the leader before: {} on {} (pid {})", l.url, l.host, l.pid),
        None => String::new(),
    };
    let said = format!(
        "osdkeeper on {} (pid {}, {}) leads {db} after {waited:.1} s as a standby{before}; it {}",
        me.host,
        me.pid,
        me.url,
        fencing.said()
    );
    if let Err(e) = ceph.set_xattr(&at, XATTR, &me.to_json()).await {
        // Only the standbys' hint: leading does not depend on it.
        tracing::warn!(%db, "cannot write the leader's record (standbys will not say where this daemon serves): {e}");
    }
    Ok(Some((store, said)))
}

/// Opens the database, trying again after an error that is not about this
/// machine (the VFS missing): a standby stays one. Seen once in four runs
/// of the test's crash in the middle of a drain on 16.2.15 (not
/// reproduced with sqlite3 itself): the standby that took the lock over
/// failed its first statement with SQLITE_IOERR_SHORT_READ. A failed try
/// closes its connection, which gives the lock back.
async fn open_until_it_opens(db: &RadosDb, lease: Duration) -> Result<Store, crate::store::StoreError> {
    loop {
        let name = db.to_string();
        match Store::open_rados(db, move |why: &str| lost(&name, why), lease).await {
            Ok(store) => return Ok(store),
            Err(e @ crate::store::StoreError::Unavailable(_)) => return Err(e),
            Err(e) => {
                tracing::error!(%db, "cannot open the database (a standby still; trying again in {} s): {e}", RETRY_OPEN.as_secs());
                tokio::time::sleep(RETRY_OPEN).await;
            }
        }
    }
}

/// How long a standby waits before it opens the database again after a failure.
const RETRY_OPEN: Duration = Duration::from_secs(5);

/// Ends the process at once: another daemon leads, or may lead, now. No
/// step of this one may run after that, not even a graceful shutdown's.
/// Aborted, not exited: `exit` runs the Ceph libraries' exit handlers,
/// which took 2 s on 16.2 while the other threads went on working.
fn lost(db: &str, why: &str) -> ! {
    tracing::error!(%db, "lost the database's lock ({why}): another daemon leads now; stopping without another step");
    eprintln!("osdkeeper serve: lost the lock on {db} ({why}); another daemon leads now, stopping at once");
    std::process::abort()
}

/// Reads the lock settings the VFS will run with, as this daemon's Ceph
/// client sees them (`ceph/vfs_settings.rs`), and derives how the leader
/// fences itself (`domain::lock_fencing`); settings that allow no fencing
/// (a dead locker not blocklisted, a timeout too short) are refused before
/// anything listens.
pub(super) async fn fencing(db: &RadosDb, python: &str, timeout: Duration) -> Result<Fencing, ServeError> {
    let settings = crate::ceph::vfs_settings::vfs_lock_settings(python, timeout).await.map_err(|e| {
        ServeError::Rados(format!(
            "cannot open {db}: cannot read the lock settings of Ceph's SQLite VFS, which the leader's \
             fencing is derived from (ceph.python must have Ceph's binding, python3-rados): {e}"
        ))
    })?;
    let fencing = lock_fencing::fencing(settings).map_err(|e| ServeError::Rados(format!("cannot lead {db}: {e}")))?;
    tracing::info!(%db, "once leading, this daemon {}", fencing.said());
    Ok(fencing)
}

/// Commits a write every `every`: each one that goes through proves the
/// lease (`Store::touch`), which the watchdog reads.
fn prove_the_lock(store: Store, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        for n in 0u32.. {
            tick.tick().await;
            if let Err(e) = store.touch(n).await {
                tracing::warn!(
                    "the leader's proof write failed (the watchdog ends the process if none goes through): {e}"
                );
            }
        }
    });
}

/// A thread of its own, which sleeps a second at a time: it sees a freeze
/// (SIGSTOP, a VM paused, swapped out) as a gap when it wakes with the
/// others, and hung writes (the OSD under the database stalled: a hung
/// RADOS call returns no error, and the VFS's renewals hang with it) as a
/// lease that is too old; past the lease's bound either way, the lock may
/// have passed, and the process ends before its next step.
fn watch_for_freezes(db: String, lease: Arc<Lease>) {
    let name = db.clone();
    let bound = lease.bound();
    let spawned = std::thread::Builder::new().name("lock-watchdog".into()).spawn(move || {
        let mut last = Instant::now();
        loop {
            std::thread::sleep(Duration::from_secs(1));
            for (late, what) in [(last.elapsed(), "this process did not run"), (lease.age(), "no write went through")] {
                if late > bound {
                    let why = format!(
                        "{what} for {:.0} s, past its bound of {} s: long enough for its lock to pass",
                        late.as_secs_f64(),
                        bound.as_secs_f64()
                    );
                    lost(&db, &why);
                }
            }
            last = Instant::now();
        }
    });
    if let Err(e) = spawned {
        lost(&name, &format!("cannot start the lock watchdog: {e}"));
    }
}

/// Before anything listens: the cluster answers and the pool is there
/// (made when told to).
pub(super) async fn check_pool(db: &RadosDb, create_pool: bool, ceph: &CephCli) -> Result<(), ServeError> {
    let unreachable = |e: crate::ceph::CephError| {
        ServeError::Rados(format!("cannot open {db}: the Ceph cluster did not answer `ceph osd pool ls detail`: {e}"))
    };
    if ceph.pool(&db.pool).await.map_err(unreachable)?.is_some() {
        return Ok(());
    }
    if !create_pool {
        return Err(ServeError::Rados(format!(
            "cannot open {db}: the pool {pool} does not exist; start with --create-pool, or create it \
             (`ceph osd pool create {pool}` and `ceph osd pool application enable {pool} osdkeeper`)",
            pool = db.pool
        )));
    }
    // The application names what keeps its data there (and silences POOL_APP_NOT_ENABLED).
    ceph.create_pool(&db.pool, POOL_PGS, "osdkeeper")
        .await
        .map_err(|e| ServeError::Rados(format!("cannot create the pool {} for {db}: {e}", db.pool)))?;
    tracing::info!(pool = db.pool, "created the database's pool");
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}
