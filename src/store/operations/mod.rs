//! Durable operations (removals, deployments, swaps, cluster benchmarks,
//! disk probes) in one table, their effects in one action log. A row's
//! state is the kind's own JSON, written and read by the kind's codec
//! (`Codec`, one module per kind); everything else is the same for every
//! kind, and so is the code here.
//!
//! A state is written before the effect it leads to (`save`, guarded by
//! the row's version), the effect is logged as an intent before it is
//! carried out (`log_action`) and completed with its outcome after
//! (`finish_action`): a crash at any point leaves a record of what may
//! have happened. An action without an outcome was cut off by a restart.

mod actions;
mod benches;
mod deployments;
mod probes;
mod removals;
mod swaps;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;

use super::backend::{Added, NewOperationRow, OperationQuery, OperationRow, SavedOperation};
use super::{Result, Store, StoreError, Topic};
use crate::domain::operation::{Action, Kind, NewOperation, Operation, State};

pub use benches::BenchCodec;
pub use deployments::DeploymentCodec;
pub use probes::ProbeCodec;
pub use removals::{subject as removal_subject, DrainSampleRow, RemovalCodec};
pub use swaps::SwapCodec;

/// How one kind's state and effects are stored: JSON in the kind's own
/// stored form, versioned (`"v"`), so that a row written by an older
/// release still reads.
pub trait Codec: Send + Sync + 'static {
    type State: State + Clone + PartialEq + Send + Sync;
    type Effect: Send + Sync;
    const KIND: Kind;

    fn encode_state(state: &Self::State) -> String;
    fn decode_state(json: &str) -> std::result::Result<Self::State, String>;
    fn encode_effect(effect: &Self::Effect) -> String;
    fn decode_effect(json: &str) -> std::result::Result<Self::Effect, String>;
    /// The store's change counters this kind's writes bump.
    fn topics(finished: bool) -> Vec<Topic>;
}

/// The version of a stored state: its `"v"`, or 1 for rows written before
/// states carried one.
pub(super) fn version_of(json: &str) -> std::result::Result<u64, String> {
    #[derive(serde::Deserialize)]
    struct Versioned {
        #[serde(default = "first")]
        v: u64,
    }
    fn first() -> u64 {
        1
    }
    serde_json::from_str::<Versioned>(json).map(|v| v.v).map_err(|e| e.to_string())
}

fn operation_from<C: Codec>(row: OperationRow) -> Result<Operation<C::State>> {
    let state = C::decode_state(&row.state)
        .map_err(|e| StoreError::Corrupt(format!("the state of {} {}: {e}", C::KIND.as_str(), row.id)))?;
    Ok(Operation {
        id: row.id,
        number: row.number,
        subject: row.subject,
        host: row.host,
        state,
        waiting_on: row.waiting_on,
        last_error: row.last_error,
        actor: row.actor,
        created_at: row.created_at,
        updated_at: row.updated_at,
        finished_at: row.finished_at,
        failures: row.failures.clamp(0, i64::from(u32::MAX)) as u32,
        version: row.version,
    })
}

/// One kind's operations in the store: `store.ops::<RemovalCodec>()`.
pub struct Ops<'a, C> {
    store: &'a Store,
    kind: PhantomData<C>,
}

impl Store {
    /// The operations of one kind.
    pub fn ops<C: Codec>(&self) -> Ops<'_, C> {
        Ops { store: self, kind: PhantomData }
    }
}

impl<C: Codec> Ops<'_, C> {
    async fn read(&self, q: OperationQuery<'_>) -> Result<Vec<Operation<C::State>>> {
        let rows = self.store.backend.operations(C::KIND, q).await?;
        rows.into_iter().map(operation_from::<C>).collect()
    }

    async fn read_one(&self, q: OperationQuery<'_>) -> Result<Option<Operation<C::State>>> {
        Ok(self.read(q).await?.into_iter().next())
    }

    fn changed(&self, finished: bool) {
        for topic in C::topics(finished) {
            self.store.changed(topic);
        }
    }

    /// Stores new operations, all or none: one whose subject already has an
    /// active operation of this kind makes the whole request fail with
    /// `conflict(subject)`. `fill` completes a state from the number it got
    /// (a benchmark's pool is named after it), in the same transaction.
    /// The kind's own numbering goes on from its highest number.
    pub async fn add(
        &self,
        new: &[NewOperation<C::State>],
        now: i64,
        conflict: impl Fn(&str) -> String,
        fill: impl Fn(i64, &mut C::State) + Send + Sync,
    ) -> Result<Vec<Operation<C::State>>> {
        let rows: Vec<NewOperationRow> = new
            .iter()
            .map(|n| NewOperationRow {
                subject: n.subject.clone(),
                host: n.host.clone(),
                phase: n.state.phase_name(),
                active: !n.state.is_finished(),
                state: C::encode_state(&n.state),
                actor: n.actor.clone(),
            })
            .collect();
        let filled = |i: usize, number: i64| {
            let mut state = new[i].state.clone();
            fill(number, &mut state);
            (state != new[i].state).then(|| C::encode_state(&state))
        };
        let ids = match self.store.backend.add_operations(C::KIND, &rows, now, &filled).await? {
            Added::All(ids) => ids,
            Added::SubjectTaken(i) => return Err(StoreError::Conflict(conflict(&new[i].subject))),
        };
        self.changed(false);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.by_id(id).await?);
        }
        Ok(out)
    }

    pub async fn by_id(&self, id: i64) -> Result<Operation<C::State>> {
        self.read_one(OperationQuery::Id(id))
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no {} with id {id}", C::KIND.as_str())))
    }

    /// By the kind's own number (what the API shows).
    pub async fn get(&self, number: i64) -> Result<Operation<C::State>> {
        self.find(number).await?.ok_or_else(|| StoreError::NotFound(format!("no {} {number}", C::KIND.as_str())))
    }

    pub async fn find(&self, number: i64) -> Result<Option<Operation<C::State>>> {
        self.read_one(OperationQuery::Number(number)).await
    }

    /// The active operations, oldest first.
    pub async fn active(&self) -> Result<Vec<Operation<C::State>>> {
        self.read(OperationQuery::Active).await
    }

    /// The active operation on `subject`, if any.
    pub async fn active_on(&self, subject: &str) -> Result<Option<Operation<C::State>>> {
        self.read_one(OperationQuery::ActiveOn(subject)).await
    }

    /// The latest operation on `subject`, finished or not.
    pub async fn latest_on(&self, subject: &str) -> Result<Option<Operation<C::State>>> {
        self.read_one(OperationQuery::LatestOn(subject)).await
    }

    /// The operations in `phase`, oldest first.
    pub async fn in_phase(&self, phase: &str) -> Result<Vec<Operation<C::State>>> {
        self.read(OperationQuery::InPhase(phase)).await
    }

    /// The active operations and the latest `finished_limit` finished
    /// ones (by when they finished, then by id), oldest first.
    pub async fn with_finished(&self, finished_limit: i64) -> Result<Vec<Operation<C::State>>> {
        self.read(OperationQuery::WithFinished(finished_limit)).await
    }

    /// The latest finished operations, most recent first (by when they
    /// finished, then by id: the order `with_finished` picks them in).
    pub async fn finished(&self, limit: i64) -> Result<Vec<Operation<C::State>>> {
        self.read(OperationQuery::Finished(limit)).await
    }

    /// The last `limit` operations, newest first.
    pub async fn latest(&self, limit: i64) -> Result<Vec<Operation<C::State>>> {
        self.read(OperationQuery::Latest(limit)).await
    }

    /// Writes an operation's new state and bookkeeping if nobody else
    /// wrote since `expected_version`; returns the new version.
    pub async fn save(&self, op: &Operation<C::State>, expected_version: i64) -> Result<i64> {
        let finished = op.state.is_finished();
        let saved = SavedOperation {
            id: op.id,
            state: C::encode_state(&op.state),
            phase: op.state.phase_name(),
            active: !finished,
            waiting_on: op.waiting_on.as_deref(),
            last_error: op.last_error.as_deref(),
            updated_at: op.updated_at,
            finished_at: op.finished_at,
            failures: i64::from(op.failures),
        };
        if !self.store.backend.save_operation(&saved, expected_version).await? {
            return Err(StoreError::Conflict(format!("{} {} changed concurrently", C::KIND.as_str(), op.number)));
        }
        self.changed(finished);
        Ok(expected_version + 1)
    }

    /// Changes the state of the active operation on each of `subjects` in
    /// one transaction, all or none: `change` returns whether it changed
    /// the state, or why it must not (which fails the whole request).
    /// A subject without an active operation is `missing(subject)`.
    pub async fn update_active(
        &self,
        subjects: &[String],
        now: i64,
        missing: impl Fn(&str) -> Option<String> + Send + Sync,
        change: impl Fn(&mut C::State) -> std::result::Result<bool, String> + Send + Sync,
    ) -> Result<Vec<Operation<C::State>>> {
        let changed = |subject: &str, row: Option<OperationRow>| -> Result<Option<String>> {
            let Some(row) = row else {
                return match missing(subject) {
                    Some(why) => Err(StoreError::NotFound(why)),
                    None => Ok(None),
                };
            };
            let mut op = operation_from::<C>(row)?;
            Ok(change(&mut op.state).map_err(StoreError::Conflict)?.then(|| C::encode_state(&op.state)))
        };
        let ids = self.store.backend.update_active_operations(C::KIND, subjects, now, &changed).await?;
        if !ids.is_empty() {
            self.changed(false);
        }
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.by_id(id).await?);
        }
        Ok(out)
    }

    /// The active operations whose latest action has no outcome: a restart
    /// cut their effect off. Each with that action.
    pub async fn interrupted(&self) -> Result<Vec<(Operation<C::State>, Action)>> {
        let rows = self.store.backend.interrupted_operations(C::KIND).await?;
        rows.into_iter().map(|(row, action)| Ok((operation_from::<C>(row)?, action))).collect()
    }

    /// Whether each of `ids` has an action under way (logged, no outcome
    /// yet): by id, for the ids that do.
    pub async fn acting(&self, ids: &[i64]) -> Result<Vec<i64>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        self.store.backend.acting_operations(ids).await
    }
}
