//! Durable operations (removals, deployments, cluster benchmarks, disk
//! probes) in one table, their effects in one action log. A row's state is
//! the kind's own JSON, written and read by the kind's codec (`Codec`,
//! one module per kind); everything else is the same for every kind, and
//! so is the code here.
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
#[cfg(test)]
mod tests;

use std::marker::PhantomData;

use sqlx::Row;

use super::{Result, Store, StoreError, Topic};
use crate::domain::operation::{Action, Kind, NewOperation, Operation, State};
use actions::{action_from, ACTION_COLUMNS};

pub use benches::BenchCodec;
pub use deployments::DeploymentCodec;
pub use probes::ProbeCodec;
pub use removals::{subject as removal_subject, DrainSampleRow, RemovalCodec};

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

const COLUMNS: &str = "o.id, o.number, o.subject, o.host, o.state, o.waiting_on, o.last_error, o.actor, \
                       o.created_at, o.updated_at, o.finished_at, o.failures, o.version";

fn operation_from<C: Codec>(row: &sqlx::sqlite::SqliteRow) -> Result<Operation<C::State>> {
    let state: String = row.try_get("state")?;
    let id: i64 = row.try_get("id")?;
    let state = C::decode_state(&state)
        .map_err(|e| StoreError::Corrupt(format!("the state of {} {id}: {e}", C::KIND.as_str())))?;
    Ok(Operation {
        id,
        number: row.try_get("number")?,
        subject: row.try_get("subject")?,
        host: row.try_get("host")?,
        state,
        waiting_on: row.try_get("waiting_on")?,
        last_error: row.try_get("last_error")?,
        actor: row.try_get("actor")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        finished_at: row.try_get("finished_at")?,
        failures: row.try_get::<i64, _>("failures")?.clamp(0, i64::from(u32::MAX)) as u32,
        version: row.try_get("version")?,
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
    fn select(&self, filter: &str) -> String {
        format!("SELECT {COLUMNS} FROM operations o WHERE o.kind = '{}' AND {filter}", C::KIND.as_str())
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
    pub async fn add(
        &self,
        new: &[NewOperation<C::State>],
        now: i64,
        conflict: impl Fn(&str) -> String,
        fill: impl Fn(i64, &mut C::State),
    ) -> Result<Vec<Operation<C::State>>> {
        let mut tx = self.store.write().await?;
        let mut ids = Vec::with_capacity(new.len());
        for n in new {
            // The kind's own numbering goes on from its highest number;
            // the write lock this transaction holds keeps it unique.
            let inserted = sqlx::query(
                "INSERT INTO operations (kind, number, subject, host, phase, active, state, actor, created_at,
                                         updated_at)
                 SELECT ?1, COALESCE(MAX(number), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8
                 FROM operations WHERE kind = ?1
                 RETURNING id, number",
            )
            .bind(C::KIND.as_str())
            .bind(&n.subject)
            .bind(&n.host)
            .bind(n.state.phase_name())
            .bind(i64::from(!n.state.is_finished()))
            .bind(C::encode_state(&n.state))
            .bind(&n.actor)
            .bind(now)
            .fetch_one(&mut *tx)
            .await;
            let (id, number): (i64, i64) = match inserted {
                Ok(row) => (row.try_get(0)?, row.try_get(1)?),
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    return Err(StoreError::Conflict(conflict(&n.subject)))
                }
                Err(e) => return Err(e.into()),
            };
            let mut filled = n.state.clone();
            fill(number, &mut filled);
            if filled != n.state {
                sqlx::query("UPDATE operations SET state = ? WHERE id = ?")
                    .bind(C::encode_state(&filled))
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            ids.push(id);
        }
        tx.commit().await?;
        self.changed(false);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.by_id(id).await?);
        }
        Ok(out)
    }

    pub async fn by_id(&self, id: i64) -> Result<Operation<C::State>> {
        let row = sqlx::query(&self.select("o.id = ?"))
            .bind(id)
            .fetch_optional(&self.store.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no {} with id {id}", C::KIND.as_str())))?;
        operation_from::<C>(&row)
    }

    /// By the kind's own number (what the API shows).
    pub async fn get(&self, number: i64) -> Result<Operation<C::State>> {
        self.find(number).await?.ok_or_else(|| StoreError::NotFound(format!("no {} {number}", C::KIND.as_str())))
    }

    pub async fn find(&self, number: i64) -> Result<Option<Operation<C::State>>> {
        let row = sqlx::query(&self.select("o.number = ?")).bind(number).fetch_optional(&self.store.pool).await?;
        row.as_ref().map(operation_from::<C>).transpose()
    }

    /// The active operations, oldest first.
    pub async fn active(&self) -> Result<Vec<Operation<C::State>>> {
        let rows = sqlx::query(&(self.select("o.active = 1") + " ORDER BY o.id")).fetch_all(&self.store.pool).await?;
        rows.iter().map(operation_from::<C>).collect()
    }

    /// The active operation on `subject`, if any.
    pub async fn active_on(&self, subject: &str) -> Result<Option<Operation<C::State>>> {
        let row = sqlx::query(&self.select("o.active = 1 AND o.subject = ?"))
            .bind(subject)
            .fetch_optional(&self.store.pool)
            .await?;
        row.as_ref().map(operation_from::<C>).transpose()
    }

    /// The latest operation on `subject`, finished or not.
    pub async fn latest_on(&self, subject: &str) -> Result<Option<Operation<C::State>>> {
        let row = sqlx::query(&(self.select("o.subject = ?") + " ORDER BY o.id DESC LIMIT 1"))
            .bind(subject)
            .fetch_optional(&self.store.pool)
            .await?;
        row.as_ref().map(operation_from::<C>).transpose()
    }

    /// The operations in `phase`, oldest first.
    pub async fn in_phase(&self, phase: &str) -> Result<Vec<Operation<C::State>>> {
        let rows = sqlx::query(&(self.select("o.phase = ?") + " ORDER BY o.id"))
            .bind(phase)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(operation_from::<C>).collect()
    }

    /// The active operations and the latest `finished_limit` finished
    /// ones (by when they finished, then by id), oldest first.
    pub async fn with_finished(&self, finished_limit: i64) -> Result<Vec<Operation<C::State>>> {
        let kind = C::KIND.as_str();
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM operations o WHERE o.kind = ?1 AND (o.active = 1 OR o.id IN
               (SELECT id FROM operations WHERE kind = ?1 AND active = 0
                ORDER BY finished_at DESC, id DESC LIMIT ?2))
             ORDER BY o.id"
        ))
        .bind(kind)
        .bind(finished_limit)
        .fetch_all(&self.store.pool)
        .await?;
        rows.iter().map(operation_from::<C>).collect()
    }

    /// The latest finished operations, most recent first (by when they
    /// finished, then by id: the order `with_finished` picks them in).
    pub async fn finished(&self, limit: i64) -> Result<Vec<Operation<C::State>>> {
        let rows = sqlx::query(&(self.select("o.active = 0") + " ORDER BY o.finished_at DESC, o.id DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(operation_from::<C>).collect()
    }

    /// The last `limit` operations, newest first.
    pub async fn latest(&self, limit: i64) -> Result<Vec<Operation<C::State>>> {
        let rows = sqlx::query(&(self.select("1 = 1") + " ORDER BY o.id DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.store.pool)
            .await?;
        rows.iter().map(operation_from::<C>).collect()
    }

    /// Writes an operation's new state and bookkeeping if nobody else
    /// wrote since `expected_version`; returns the new version.
    pub async fn save(&self, op: &Operation<C::State>, expected_version: i64) -> Result<i64> {
        let finished = op.state.is_finished();
        let done = sqlx::query(
            "UPDATE operations SET state = ?, phase = ?, active = ?, waiting_on = ?, last_error = ?, updated_at = ?,
                    finished_at = ?, failures = ?, version = version + 1
             WHERE id = ? AND version = ?",
        )
        .bind(C::encode_state(&op.state))
        .bind(op.state.phase_name())
        .bind(i64::from(!finished))
        .bind(&op.waiting_on)
        .bind(&op.last_error)
        .bind(op.updated_at)
        .bind(op.finished_at)
        .bind(i64::from(op.failures))
        .bind(op.id)
        .bind(expected_version)
        .execute(&self.store.pool)
        .await?;
        if done.rows_affected() == 0 {
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
        missing: impl Fn(&str) -> Option<String>,
        change: impl Fn(&mut C::State) -> std::result::Result<bool, String>,
    ) -> Result<Vec<Operation<C::State>>> {
        let mut tx = self.store.write().await?;
        let mut changed = Vec::new();
        for subject in subjects {
            let row = sqlx::query(&self.select("o.active = 1 AND o.subject = ?"))
                .bind(subject)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(mut op) = row.as_ref().map(operation_from::<C>).transpose()? else {
                match missing(subject) {
                    Some(why) => return Err(StoreError::NotFound(why)),
                    None => continue,
                }
            };
            if !change(&mut op.state).map_err(StoreError::Conflict)? {
                continue;
            }
            sqlx::query("UPDATE operations SET state = ?, updated_at = ?, version = version + 1 WHERE id = ?")
                .bind(C::encode_state(&op.state))
                .bind(now)
                .bind(op.id)
                .execute(&mut *tx)
                .await?;
            changed.push(op.id);
        }
        tx.commit().await?;
        if !changed.is_empty() {
            self.changed(false);
        }
        let mut out = Vec::with_capacity(changed.len());
        for id in changed {
            out.push(self.by_id(id).await?);
        }
        Ok(out)
    }

    /// The active operations whose latest action has no outcome: a restart
    /// cut their effect off. Each with that action.
    pub async fn interrupted(&self) -> Result<Vec<(Operation<C::State>, Action)>> {
        let rows = sqlx::query(
            "SELECT a.id AS action_id FROM operation_actions a JOIN operations o ON o.id = a.operation_id
             WHERE o.kind = ? AND o.active = 1 AND a.finished_at IS NULL
               AND a.id = (SELECT MAX(id) FROM operation_actions WHERE operation_id = o.id)
             ORDER BY a.id",
        )
        .bind(C::KIND.as_str())
        .fetch_all(&self.store.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let action_id: i64 = row.try_get("action_id")?;
            let action =
                sqlx::query(&format!("SELECT {ACTION_COLUMNS}, NULL AS output FROM operation_actions WHERE id = ?"))
                    .bind(action_id)
                    .fetch_one(&self.store.pool)
                    .await?;
            let action = action_from(&action)?;
            out.push((self.by_id(action.operation_id).await?, action));
        }
        Ok(out)
    }

    /// Whether each of `ids` has an action under way (logged, no outcome
    /// yet): by id, for the ids that do.
    pub async fn acting(&self, ids: &[i64]) -> Result<Vec<i64>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(", ");
        let sql = format!(
            "SELECT DISTINCT operation_id FROM operation_actions WHERE finished_at IS NULL AND operation_id IN ({marks})"
        );
        let mut q = sqlx::query_scalar::<_, i64>(&sql);
        for id in ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.store.pool).await?)
    }
}
