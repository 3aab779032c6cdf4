//! The seam between the store and a database: what a backend must do, in
//! the store's own row types. `Store` (what the daemon holds) calls these
//! and keeps for itself everything that is the same whatever the database:
//! the change counters, the error messages, the operations' codecs. SQLite
//! is one backend (`sqlite/`); nothing here names its library.
//!
//! A backend's contract, beyond the signatures:
//! * each method is atomic: all it writes commits, or nothing does;
//! * a method that reads, then writes (numbering, "only if unchanged")
//!   holds the write lock from its first read, so that two writers never
//!   both act on the same read;
//! * "none" answers (`None`, `false`) mean the row is not there; the store
//!   turns them into `NotFound` with its own words;
//! * `outside_writes` moves when a write that did not go through this
//!   backend object committed (another process on the same database).

use async_trait::async_trait;

use super::events::{EventFilter, NewEvent};
use super::hosts::{NewHost, PollFailure};
use super::inventories::{InventoryHead, InventorySeen, PolledInventory, PutPolled, Replaced, StoredInventory};
use super::operations::DrainSampleRow;
use super::runs::SpecHostRun;
use super::specs::StoredSpec;
use super::tokens::StoredToken;
use super::{AppliedSpec, BenchState, BenchTarget, HeldDevice, LoggedEvent, ManagedHost, OsdBenchRow, Result};
use crate::domain::auth::Role;
use crate::domain::bench::osd::OsdBenchResult;
use crate::domain::operation::{Action, Intent, Kind, OutcomeStatus};

/// Everything a database behind the store does.
pub trait Backend:
    HostRows
    + InventoryRows
    + SpecRows
    + HoldRows
    + RunRows
    + BoostRows
    + EventRows
    + TokenRows
    + OsdBenchRows
    + OperationRows
    + ActionRows
    + SampleRows
    + Lifecycle
    + Send
    + Sync
    + 'static
{
}

impl<T> Backend for T where
    T: HostRows
        + InventoryRows
        + SpecRows
        + HoldRows
        + RunRows
        + BoostRows
        + EventRows
        + TokenRows
        + OsdBenchRows
        + OperationRows
        + ActionRows
        + SampleRows
        + Lifecycle
        + Send
        + Sync
        + 'static
{
}

/// Watching for other writers, and closing.
#[async_trait]
pub trait Lifecycle {
    /// A number that changes whenever a write that did not go through
    /// this object committed since the last call (a second process on the
    /// same database); the same number when none did. Cheap: the store
    /// asks at most about once a second.
    async fn outside_writes(&self) -> Result<u64>;
    /// Writes a consistent copy of the database, as it is now, to the
    /// local file `dest` (which does not exist yet), while writes go on.
    async fn copy_into(&self, dest: &std::path::Path) -> Result<()>;
    /// Commits a write that changes nothing the store reads (`n` a
    /// counter): that a commit still goes through, which a leader of a
    /// database in RADOS proves every few seconds.
    async fn touch(&self, n: u32) -> Result<()>;
    async fn close(&self);
}

#[async_trait]
pub trait HostRows {
    /// The new host, last in the order; None when the name is taken.
    async fn add_host(&self, name: &str, addr: &str, labels: &[String], now: i64) -> Result<Option<ManagedHost>>;
    /// Hosts added in one transaction, each with the event that tells it,
    /// last in the order; None for a name already taken (left as it is).
    async fn add_hosts(&self, hosts: &[NewHost], now: i64) -> Result<Vec<Option<(ManagedHost, i64)>>>;
    async fn host(&self, name: &str) -> Result<Option<ManagedHost>>;
    /// In the order they were added.
    async fn hosts(&self) -> Result<Vec<ManagedHost>>;
    /// With its inventory and holds; false when there was no such host.
    async fn remove_host(&self, name: &str) -> Result<bool>;
    async fn set_labels(&self, name: &str, labels: &[String]) -> Result<Option<ManagedHost>>;
    /// Whether this failure is the first in a row; None: no such host.
    async fn record_poll_failure(&self, name: &str, f: &PollFailure) -> Result<Option<bool>>;
    /// Whether the host had failed polls before; None: no such host.
    async fn record_poll_success(&self, name: &str, next_poll_at: i64) -> Result<Option<bool>>;
}

#[async_trait]
pub trait InventoryRows {
    /// Stores it, with its device list only when that changed; what it
    /// replaced (its device list only when the new one differs).
    async fn put_inventory(&self, inv: &StoredInventory) -> Result<Option<Replaced>>;
    /// Fresh inventories and their hosts' successful polls, all in one
    /// transaction; for each, in order: None when its host is gone (nothing
    /// written for it), else what it replaced and whether the host had
    /// failed polls before.
    async fn put_polled_inventories(&self, batch: &[PolledInventory]) -> Result<Vec<Option<PutPolled>>>;
    /// Their times and their hosts' next polls; the indices in `seen` of
    /// the inventories that were there to touch (removed ones are skipped).
    async fn touch_inventories(&self, seen: &[InventorySeen]) -> Result<Vec<usize>>;
    async fn inventory(&self, host: &str) -> Result<Option<StoredInventory>>;
    async fn inventories(&self) -> Result<Vec<StoredInventory>>;
    async fn inventory_head(&self, host: &str) -> Result<Option<InventoryHead>>;
    /// Hosts whose `next_poll_at` is at or before `now`, in their order.
    async fn due_hosts(&self, now: i64) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>>;
    async fn next_poll_after(&self, now: i64) -> Result<Option<i64>>;
    async fn hosts_with_heads(&self) -> Result<Vec<(ManagedHost, Option<InventoryHead>)>>;
}

#[async_trait]
pub trait SpecRows {
    /// Each as a new version (1 for a new name) with a history entry.
    async fn put_specs(&self, specs: &[StoredSpec], now: i64) -> Result<Vec<AppliedSpec>>;
    async fn spec(&self, service_name: &str) -> Result<Option<AppliedSpec>>;
    /// By name.
    async fn specs(&self) -> Result<Vec<AppliedSpec>>;
    /// With its runs, a history entry kept; None: no such spec.
    async fn remove_spec(&self, service_name: &str, now: i64) -> Result<Option<AppliedSpec>>;
    async fn spec_history(&self, service_name: &str) -> Result<Vec<(i64, String, i64)>>;
}

#[async_trait]
pub trait HoldRows {
    /// Holding a held device again keeps the first hold.
    async fn hold(
        &self,
        host: &str,
        path: &str,
        device_id: Option<&str>,
        reason: &str,
        waits_for_slot: Option<&str>,
        now: i64,
    ) -> Result<()>;
    /// Holds a device for a `device replace` slot in place of any hold at
    /// its path (one naming an older disk would not cover this one); the
    /// hold it replaced.
    async fn hold_for_slot(
        &self,
        host: &str,
        path: &str,
        device_id: Option<&str>,
        reason: &str,
        slot: &str,
        now: i64,
    ) -> Result<Option<HeldDevice>>;
    async fn release(&self, host: &str, path: &str) -> Result<Option<HeldDevice>>;
    /// Every hold of the host waiting for `slot`, lifted in one write; the
    /// holds lifted, by path.
    async fn release_slot(&self, host: &str, slot: &str) -> Result<Vec<HeldDevice>>;
    /// By host, then path.
    async fn holds(&self) -> Result<Vec<HeldDevice>>;
}

#[async_trait]
pub trait RunRows {
    async fn spec_host_run(&self, service_name: &str, host: &str) -> Result<Option<SpecHostRun>>;
    async fn put_spec_host_run(&self, run: &SpecHostRun) -> Result<()>;
}

/// The recovery boost's stored state, as its JSON.
#[async_trait]
pub trait BoostRows {
    async fn boost(&self) -> Result<Option<String>>;
    async fn save_boost(&self, state: &str, now: i64) -> Result<()>;
    async fn forget_boost(&self) -> Result<()>;
}

#[async_trait]
pub trait EventRows {
    /// In one transaction, in this order; their ids.
    async fn add_events(&self, events: &[NewEvent], now: i64) -> Result<Vec<i64>>;
    /// Oldest first: the first `limit` after `q.after`, or without it the
    /// latest `limit`.
    async fn events_matching(&self, q: &EventFilter<'_>, limit: i64) -> Result<Vec<LoggedEvent>>;
}

#[async_trait]
pub trait TokenRows {
    /// None: a token of that name exists or existed.
    async fn add_token(
        &self,
        name: &str,
        role: Role,
        digest: &[u8; 32],
        created_by: Option<&str>,
        now: i64,
    ) -> Result<Option<StoredToken>>;
    /// Not revoked, by name.
    async fn active_tokens(&self) -> Result<Vec<StoredToken>>;
    async fn any_token_ever(&self) -> Result<bool>;
    /// None: no such token, or revoked already.
    async fn revoke_token(&self, name: &str, now: i64) -> Result<Option<StoredToken>>;
    async fn token_used(&self, name: &str, at: i64) -> Result<()>;
}

#[async_trait]
pub trait OsdBenchRows {
    /// Queued, all or none; their ids in order.
    async fn add_osd_benches(&self, benches: &[BenchTarget], actor: Option<&str>, now: i64) -> Result<Vec<i64>>;
    async fn osd_bench(&self, id: i64) -> Result<Option<OsdBenchRow>>;
    async fn osd_benches_in(&self, state: BenchState) -> Result<Vec<OsdBenchRow>>;
    async fn latest_osd_benches(&self) -> Result<Vec<OsdBenchRow>>;
    async fn latest_done_osd_benches(&self) -> Result<Vec<OsdBenchRow>>;
    async fn osd_bench_history(&self, limit: i64) -> Result<Vec<OsdBenchRow>>;
    /// Queued to running; false if it was not queued.
    async fn start_osd_bench(&self, id: i64, now: i64) -> Result<bool>;
    async fn finish_osd_bench(
        &self,
        id: i64,
        outcome: &std::result::Result<OsdBenchResult, String>,
        now: i64,
    ) -> Result<()>;
    /// Every running one failed with `why`; those it failed.
    async fn interrupt_osd_benches(&self, why: &str, now: i64) -> Result<Vec<OsdBenchRow>>;
}

/// An operation as stored, its state in the kind's stored form (JSON,
/// written and read by the kind's codec outside the backend).
#[derive(Debug, Clone, PartialEq)]
pub struct OperationRow {
    pub id: i64,
    pub number: i64,
    pub subject: String,
    pub host: Option<String>,
    pub state: String,
    pub waiting_on: Option<String>,
    pub last_error: Option<String>,
    pub actor: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    pub failures: i64,
    pub version: i64,
}

/// A new operation to store.
#[derive(Debug, Clone)]
pub struct NewOperationRow {
    pub subject: String,
    pub host: Option<String>,
    pub phase: &'static str,
    pub active: bool,
    pub state: String,
    pub actor: Option<String>,
}

/// An operation's new state and bookkeeping (`save_operation`).
#[derive(Debug, Clone)]
pub struct SavedOperation<'a> {
    pub id: i64,
    pub state: String,
    pub phase: &'static str,
    pub active: bool,
    pub waiting_on: Option<&'a str>,
    pub last_error: Option<&'a str>,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    pub failures: i64,
}

/// Which operations of a kind to read.
#[derive(Debug, Clone, Copy)]
pub enum OperationQuery<'a> {
    Id(i64),
    /// The kind's own number.
    Number(i64),
    /// Active ones, oldest first.
    Active,
    ActiveOn(&'a str),
    /// The latest on a subject, finished or not.
    LatestOn(&'a str),
    /// In a phase, oldest first.
    InPhase(&'a str),
    /// The active ones and the latest this many finished (by when they
    /// finished, then id), oldest first.
    WithFinished(i64),
    /// The latest this many finished, by when they finished then id, newest first.
    Finished(i64),
    /// The latest this many, newest first.
    Latest(i64),
    /// Each subject's latest, and its latest in this phase when that is
    /// older, oldest first.
    LatestPerSubjectAndIn(&'a str),
}

/// What `add_operations` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// Stored them all: their ids, in order.
    All(Vec<i64>),
    /// Stored none: the subject of the one at this index has an active
    /// operation of the kind already.
    SubjectTaken(usize),
}

/// Completes the state of the new operation at an index from the number
/// it got; the new state, when it changed.
pub type Fill<'a> = &'a (dyn Fn(usize, i64) -> Option<String> + Send + Sync);

/// Given a subject and its active operation (if any): the new state to
/// write, none to leave it, or the error that fails the whole change.
pub type Change<'a> = &'a (dyn Fn(&str, Option<OperationRow>) -> Result<Option<String>> + Send + Sync);

#[async_trait]
pub trait OperationRows {
    /// All or none, each numbered after the kind's highest number, each
    /// completed by `fill` in the same transaction.
    async fn add_operations(&self, kind: Kind, new: &[NewOperationRow], now: i64, fill: Fill<'_>) -> Result<Added>;
    async fn operations(&self, kind: Kind, q: OperationQuery<'_>) -> Result<Vec<OperationRow>>;
    /// Writes it if its version is still `expected_version` (then one
    /// more); false if another write came first.
    async fn save_operation(&self, op: &SavedOperation<'_>, expected_version: i64) -> Result<bool>;
    /// `change` on each subject's active operation in one transaction; the
    /// ids of those written (their version one more, `updated_at` now).
    async fn update_active_operations(
        &self,
        kind: Kind,
        subjects: &[String],
        now: i64,
        change: Change<'_>,
    ) -> Result<Vec<i64>>;
    /// Active operations whose latest action has no outcome, each with
    /// that action (without its output), by the action's id.
    async fn interrupted_operations(&self, kind: Kind) -> Result<Vec<(OperationRow, Action)>>;
    /// Those of `ids` with an action logged and not finished.
    async fn acting_operations(&self, ids: &[i64]) -> Result<Vec<i64>>;
}

#[async_trait]
pub trait ActionRows {
    async fn log_action(&self, operation_id: i64, intent: &Intent, now: i64) -> Result<i64>;
    async fn finish_action(
        &self,
        action_id: i64,
        outcome: OutcomeStatus,
        detail: &str,
        output: Option<&str>,
        now: i64,
    ) -> Result<()>;
    /// Oldest first, without their output.
    async fn actions(&self, operation_id: i64) -> Result<Vec<Action>>;
    /// The latest named `effect`, with its output.
    async fn latest_action(&self, operation_id: i64, effect: &str) -> Result<Option<Action>>;
}

/// A drain's progress samples, each list oldest first.
#[async_trait]
pub trait SampleRows {
    async fn add_sample(&self, operation_id: i64, sample: &DrainSampleRow) -> Result<()>;
    async fn samples(&self, operation_id: i64) -> Result<Vec<DrainSampleRow>>;
    /// No older than `window_ms` before the newest.
    async fn recent_samples(&self, operation_id: i64, window_ms: i64) -> Result<Vec<DrainSampleRow>>;
    /// Taken after `after` (exclusive).
    async fn samples_after(&self, operation_id: i64, after: i64) -> Result<Vec<DrainSampleRow>>;
}
