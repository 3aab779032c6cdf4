//! OSD removals: persisted state-machine state, progress samples and the
//! action log. The state is written before the action it leads to, and
//! each action is logged before it is issued, so a crash at any point
//! leaves a record of what may have happened.

use sqlx::Row;

use super::{Result, Store, StoreError, Topic};
use crate::domain::removal::{Effect, Removal, RemovalRecord};
use crate::wire::api::osds::{ActionRecord, Sample};

const COLUMNS: &str = "id, state, waiting_on, last_error, pgs_now, kb_used_now, requested_at, drain_started_at, \
                       finished_at, updated_at, version";

fn record_from(row: &sqlx::sqlite::SqliteRow) -> Result<RemovalRecord> {
    let state: String = row.try_get("state")?;
    let removal: Removal =
        serde_json::from_str(&state).map_err(|e| StoreError::Corrupt(format!("removal state: {e}")))?;
    Ok(RemovalRecord {
        id: row.try_get("id")?,
        removal,
        waiting_on: row.try_get("waiting_on")?,
        last_error: row.try_get("last_error")?,
        pgs_now: row.try_get("pgs_now")?,
        kb_used_now: row.try_get("kb_used_now")?,
        requested_at: row.try_get("requested_at")?,
        drain_started_at: row.try_get("drain_started_at")?,
        finished_at: row.try_get("finished_at")?,
        updated_at: row.try_get("updated_at")?,
        version: row.try_get("version")?,
    })
}

const SAMPLE: &str = "at, pgs, kb_used, bytes_left, blocked";

fn sample_from(r: &sqlx::sqlite::SqliteRow) -> Result<Sample> {
    Ok(Sample {
        at: r.try_get(0)?,
        pgs: r.try_get(1)?,
        kb_used: r.try_get(2)?,
        bytes_left: r.try_get(3)?,
        blocked: r.try_get(4)?,
    })
}

fn state_json(r: &Removal) -> String {
    serde_json::to_string(r).expect("removal serializes")
}

impl Store {
    /// Queues removals, all or none: an OSD already being removed makes the
    /// whole request fail.
    pub async fn add_removals(&self, removals: &[Removal], now: i64) -> Result<Vec<RemovalRecord>> {
        let mut tx = self.write().await?;
        let mut ids = Vec::new();
        for r in removals {
            let inserted = sqlx::query(
                "INSERT INTO removals (osd_id, host, state, phase, active, requested_at, updated_at)
                 VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING id",
            )
            .bind(i64::from(r.osd_id))
            .bind(&r.host)
            .bind(state_json(r))
            .bind(r.phase.as_str())
            .bind(now)
            .bind(now)
            .fetch_one(&mut *tx)
            .await;
            match inserted {
                Ok(row) => ids.push(row.try_get::<i64, _>(0)?),
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    return Err(StoreError::Conflict(format!("osd.{} is already being removed", r.osd_id)))
                }
                Err(e) => return Err(e.into()),
            }
        }
        tx.commit().await?;
        self.changed(Topic::Removals);
        let mut out = Vec::new();
        for id in ids {
            out.push(self.removal(id).await?);
        }
        Ok(out)
    }

    pub async fn removal(&self, id: i64) -> Result<RemovalRecord> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM removals WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no removal {id}")))?;
        record_from(&row)
    }

    /// The active removal of an OSD, if any.
    pub async fn active_removal_of(&self, osd_id: u32) -> Result<Option<RemovalRecord>> {
        sqlx::query(&format!("SELECT {COLUMNS} FROM removals WHERE osd_id = ? AND active = 1"))
            .bind(i64::from(osd_id))
            .fetch_optional(&self.pool)
            .await?
            .map(|r| record_from(&r))
            .transpose()
    }

    pub async fn active_removals(&self) -> Result<Vec<RemovalRecord>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM removals WHERE active = 1 ORDER BY id"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(record_from).collect()
    }

    /// Active removals and the most recent finished ones.
    pub async fn removals(&self, finished_limit: i64) -> Result<Vec<RemovalRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM removals WHERE active = 1
             UNION ALL
             SELECT * FROM (SELECT {COLUMNS} FROM removals WHERE active = 0 ORDER BY finished_at DESC, id DESC LIMIT ?)
             ORDER BY id"
        ))
        .bind(finished_limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from).collect()
    }

    /// The most recent finished removals, most recent first (by when they
    /// finished, then by id: the order `removals` picks them in).
    pub async fn finished_removals(&self, limit: i64) -> Result<Vec<RemovalRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM removals WHERE active = 0 ORDER BY finished_at DESC, id DESC LIMIT ?"
        ))
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(record_from).collect()
    }

    /// Writes a new state if nobody else wrote since `expected_version`.
    pub async fn save_removal(&self, rec: &RemovalRecord, expected_version: i64) -> Result<i64> {
        let finished = rec.removal.phase.is_finished();
        let done = sqlx::query(
            "UPDATE removals SET state = ?, phase = ?, active = ?, waiting_on = ?, last_error = ?, pgs_now = ?,
                kb_used_now = ?, drain_started_at = ?, finished_at = ?, updated_at = ?, version = version + 1
             WHERE id = ? AND version = ?",
        )
        .bind(state_json(&rec.removal))
        .bind(rec.removal.phase.as_str())
        .bind(i64::from(!finished))
        .bind(&rec.waiting_on)
        .bind(&rec.last_error)
        .bind(rec.pgs_now)
        .bind(rec.kb_used_now)
        .bind(rec.drain_started_at)
        .bind(rec.finished_at)
        .bind(rec.updated_at)
        .bind(rec.id)
        .bind(expected_version)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!("removal {} changed concurrently", rec.id)));
        }
        self.changed(Topic::Removals);
        if finished {
            self.changed(Topic::FinishedRemovals);
        }
        Ok(expected_version + 1)
    }

    /// Sets the stop flag of an active removal that can still be stopped.
    pub async fn request_removal_stop(&self, osd_id: u32, now: i64) -> Result<RemovalRecord> {
        let mut tx = self.write().await?;
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM removals WHERE osd_id = ? AND active = 1"))
            .bind(i64::from(osd_id))
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("osd.{osd_id} is not being removed")))?;
        let mut rec = record_from(&row)?;
        if !rec.removal.phase.can_stop() {
            return Err(StoreError::Conflict(format!(
                "osd.{osd_id} is past the point of no return ({}): its daemon is being stopped or it is being destroyed",
                rec.removal.phase.as_str()
            )));
        }
        rec.removal.stop_requested = true;
        write_state(&mut tx, &rec, now).await?;
        tx.commit().await?;
        self.changed(Topic::Removals);
        self.removal(rec.id).await
    }

    /// Makes the active removals of `osd_ids` fast (`host drain --fast`
    /// asked again); returns how many were not fast yet.
    pub async fn make_removals_fast(&self, osd_ids: &[u32], now: i64) -> Result<usize> {
        let mut tx = self.write().await?;
        let mut changed = 0;
        for &osd_id in osd_ids {
            let row = sqlx::query(&format!("SELECT {COLUMNS} FROM removals WHERE osd_id = ? AND active = 1"))
                .bind(i64::from(osd_id))
                .fetch_optional(&mut *tx)
                .await?;
            let Some(mut rec) = row.as_ref().map(record_from).transpose()? else { continue };
            if rec.removal.fast {
                continue;
            }
            rec.removal.fast = true;
            write_state(&mut tx, &rec, now).await?;
            changed += 1;
        }
        tx.commit().await?;
        Ok(changed)
    }

    pub async fn add_sample(&self, removal_id: i64, sample: &Sample) -> Result<()> {
        sqlx::query(
            "INSERT INTO removal_samples (removal_id, at, pgs, kb_used, bytes_left, blocked) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(removal_id)
        .bind(sample.at)
        .bind(sample.pgs)
        .bind(sample.kb_used)
        .bind(sample.bytes_left)
        .bind(&sample.blocked)
        .execute(&self.pool)
        .await?;
        self.changed(Topic::Removals);
        Ok(())
    }

    pub async fn samples(&self, removal_id: i64) -> Result<Vec<Sample>> {
        let rows = sqlx::query(&format!("SELECT {SAMPLE} FROM removal_samples WHERE removal_id = ? ORDER BY at"))
            .bind(removal_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(sample_from).collect()
    }

    /// The samples no older than `window_ms` before the newest one: all the
    /// progress estimate looks at, without reading hours of history per status.
    pub async fn recent_samples(&self, removal_id: i64, window_ms: i64) -> Result<Vec<Sample>> {
        let rows = sqlx::query(&format!(
            "SELECT {SAMPLE} FROM removal_samples WHERE removal_id = ?1
             AND at >= (SELECT MAX(at) FROM removal_samples WHERE removal_id = ?1) - ?2 ORDER BY at"
        ))
        .bind(removal_id)
        .bind(window_ms)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(sample_from).collect()
    }

    /// The samples taken after `after` (ms, exclusive), oldest first: what a
    /// client holding the samples up to `after` is missing.
    pub async fn samples_after(&self, removal_id: i64, after: i64) -> Result<Vec<Sample>> {
        let rows =
            sqlx::query(&format!("SELECT {SAMPLE} FROM removal_samples WHERE removal_id = ? AND at > ? ORDER BY at"))
                .bind(removal_id)
                .bind(after)
                .fetch_all(&self.pool)
                .await?;
        rows.iter().map(sample_from).collect()
    }

    /// Logs an action before it is issued; returns its id.
    pub async fn log_action(&self, removal_id: i64, osd_id: u32, effect: &Effect, now: i64) -> Result<i64> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO removal_actions (removal_id, osd_id, effect, destructive, issued_at) VALUES (?, ?, ?, ?, ?)
             RETURNING id",
        )
        .bind(removal_id)
        .bind(i64::from(osd_id))
        .bind(serde_json::to_string(effect).expect("effect serializes"))
        .bind(i64::from(effect.is_destructive()))
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        Ok(id)
    }

    pub async fn finish_action(&self, action_id: i64, outcome: &str, now: i64) -> Result<()> {
        sqlx::query("UPDATE removal_actions SET finished_at = ?, outcome = ? WHERE id = ?")
            .bind(now)
            .bind(outcome)
            .bind(action_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    pub async fn actions(&self, removal_id: i64) -> Result<Vec<ActionRecord>> {
        let rows = sqlx::query(
            "SELECT id, removal_id, osd_id, effect, destructive, issued_at, finished_at, outcome
             FROM removal_actions WHERE removal_id = ? ORDER BY id",
        )
        .bind(removal_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(ActionRecord {
                    id: r.try_get(0)?,
                    removal_id: r.try_get(1)?,
                    osd_id: r.try_get(2)?,
                    effect: r.try_get(3)?,
                    destructive: r.try_get::<i64, _>(4)? != 0,
                    issued_at: r.try_get(5)?,
                    finished_at: r.try_get(6)?,
                    outcome: r.try_get(7)?,
                })
            })
            .collect()
    }
}

/// Writes a removal's changed state inside the caller's transaction.
async fn write_state(tx: &mut sqlx::Transaction<'static, sqlx::Sqlite>, rec: &RemovalRecord, now: i64) -> Result<()> {
    sqlx::query("UPDATE removals SET state = ?, updated_at = ?, version = version + 1 WHERE id = ?")
        .bind(state_json(&rec.removal))
        .bind(now)
        .bind(rec.id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
