//! The daemon's state, behind a seam: `Store` (what the daemon holds)
//! calls a `backend::Backend`, of which SQLite (`sqlite/`, the only
//! module with SQL) is the one there is.
//!
//! What is stored, and why it must survive a restart: hosts (with their
//! agents' addresses and labels), the latest inventory of each host (as the
//! agent sent it, with its age), applied specs (with their history), what
//! the reconciler last ran per spec and host, devices held back from specs,
//! per-OSD benches, every durable operation (removals with their drain
//! samples, deployments, swaps, cluster benchmarks, disk probes: asked,
//! running, their results) and its action log, the event log (with the
//! name of the token that asked), the API tokens (their digests and
//! roles), and the recovery boost of fast drains (what to put back after a
//! crash). The schema is in `migrations/`.
//!
//! The store answers in its own row types (`ManagedHost`, `LoggedEvent`,
//! ...), never the API's: each `wire::api` type is built from its row at
//! the edge. What it keeps the same for any database: the change counters
//! (`changes.rs`), the group commit (`group_commit.rs`: writes asked for
//! together share one transaction), the operations' codecs (`operations/`:
//! each kind's state as versioned JSON, so a row an older release wrote
//! still reads), the boost's (`boost.rs`). `location.rs` says where the
//! database is (a file, or `ceph:POOL/NAMESPACE/NAME` in RADOS); `lease.rs`
//! is a leader's lease on the latter; `backup.rs` the copy and the
//! restore.
//!
//! Other writers: a second process on the same database (another daemon,
//! a tool) is seen through `Changes`, which asks the backend about once a
//! second whether anyone else wrote.

pub mod backend;
pub mod backup;
mod boost;
mod changes;
mod events;
mod group_commit;
mod holds;
mod hosts;
mod inventories;
pub mod lease;
pub mod location;
mod operations;
mod osd_benches;
mod runs;
mod specs;
mod sqlite;
mod tokens;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use backend::Backend;
pub use changes::{Changes, Topic};
pub use events::{EventFilter, LoggedEvent, NewEvent};
pub use holds::HeldDevice;
pub use hosts::{ManagedHost, NewHost, PollFailure};
pub use inventories::{InventoryHead, InventorySeen, PolledInventory, PutPolled, Replaced, StoredInventory};
pub use operations::{
    removal_subject, BenchCodec, Codec, DeploymentCodec, DrainSampleRow, Ops, ProbeCodec, RemovalCodec, SwapCodec,
};
pub use osd_benches::{BenchState, BenchTarget, OsdBenchRow};
pub use runs::SpecHostRun;
pub use specs::{AppliedSpec, StoredSpec};
pub use sqlite::LOG_DIRECTIVES;
pub use tokens::StoredToken;

/// Clone: a group commit's failure is every caller's in it.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the database holds something unreadable: {0}")]
    Corrupt(String),
    /// The database cannot be reached at all (its VFS missing, a second
    /// open in one process).
    #[error("{0}")]
    Unavailable(String),
    #[error("database error: {0}")]
    Db(#[source] DbError),
    #[error("cannot prepare the database: {0}")]
    Migrate(#[source] DbError),
}

/// An error of the database library a backend uses, kept whole (with its
/// causes) for the log; what it means to a caller is the `StoreError`
/// variant around it.
#[derive(Debug, Clone, thiserror::Error)]
#[error(transparent)]
pub struct DbError(Arc<dyn std::error::Error + Send + Sync>);

impl DbError {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> DbError {
        DbError(Arc::new(e))
    }
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A handle on the database; cheap to clone. Its calls go to the backend;
/// what a write changed is counted here, whatever the backend.
#[derive(Clone)]
pub struct Store {
    backend: Arc<dyn Backend>,
    changes: Arc<Changes>,
    /// `host add` requests that arrive together, written together.
    host_adds: Arc<hosts::HostAdds>,
    /// A leader's lease on a database kept in RADOS; none on a file.
    lease: Option<Arc<lease::Lease>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating if needed) the SQLite database file and applies migrations.
    pub async fn open(path: &Path) -> Result<Store> {
        Store::with_backend(sqlite::open(path).await?).await
    }

    /// Opens the database kept in RADOS, waiting as long as another daemon
    /// holds it (`sqlite/rados.rs`); `fence` runs if this process loses it,
    /// or lets its lease (`lease.rs`) run past `lease_bound`.
    pub async fn open_rados(
        db: &location::RadosDb,
        fence: impl Fn(&str) + Send + Sync + 'static,
        lease_bound: Duration,
    ) -> Result<Store> {
        let fence: lease::SharedFence = Arc::new(fence);
        let for_the_vfs = fence.clone();
        let backend = sqlite::open_rados(db, Box::new(move |why: &str| for_the_vfs(why))).await?;
        let mut store = Store::with_backend(backend).await?;
        store.lease = Some(Arc::new(lease::Lease::new(lease_bound, fence, Instant::now())));
        Ok(store)
    }

    /// A commit that changes nothing the store reads: proof that writes
    /// still go through (`backend::Lifecycle::touch`), and of the lease.
    pub async fn touch(&self, n: u32) -> Result<()> {
        let began = Instant::now();
        self.backend.touch(n).await?;
        self.proved(began);
        Ok(())
    }

    /// The leader's lease, on a database kept in RADOS.
    pub fn lease(&self) -> Option<&Arc<lease::Lease>> {
        self.lease.as_ref()
    }

    /// Ends the process when the lease has lapsed (another daemon may lead
    /// now), before `what` is done; nothing on a file. Should the fence
    /// return (a test's), an error: `what` must not be done.
    pub fn fence_if_lease_lapsed(&self, what: &str) -> Result<()> {
        match &self.lease {
            Some(lease) => lease.fence_if_lapsed(what).map_err(StoreError::Unavailable),
            None => Ok(()),
        }
    }

    /// This store with a lease of `bound` whose fence is `fence` (tests:
    /// the kernel's check without a database in RADOS).
    #[cfg(test)]
    pub(crate) fn with_lease(mut self, bound: Duration, fence: lease::SharedFence) -> Store {
        self.lease = Some(Arc::new(lease::Lease::new(bound, fence, Instant::now())));
        self
    }

    /// A commit that began at `began` went through.
    fn proved(&self, began: Instant) {
        if let Some(lease) = &self.lease {
            lease.proved(began);
        }
    }

    /// Loads Ceph's SQLite VFS (once per process): whether a `ceph:`
    /// database can be opened at all, asked before the daemon listens.
    pub async fn load_rados_vfs() -> Result<()> {
        sqlite::rados::register_vfs().await
    }

    /// A store on any backend; writes other processes make from now on
    /// are noticed (`Changes::look_outside`).
    pub async fn with_backend(backend: Arc<dyn Backend>) -> Result<Store> {
        let changes = Arc::new(Changes::watching(backend.clone()));
        changes.look_outside().await;
        Ok(Store { backend, changes, host_adds: Default::default(), lease: None })
    }

    /// What has changed since the store was opened (`changes.rs`).
    pub fn changes(&self) -> &Changes {
        &self.changes
    }

    fn changed(&self, topic: Topic) {
        self.changes.bump(topic);
    }

    pub async fn close(&self) {
        self.backend.close().await;
    }
}

#[cfg(test)]
mod tests;
