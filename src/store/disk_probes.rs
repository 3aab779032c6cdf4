//! Disk probes: each one stored when asked (`queued`, with the token that
//! asked), marked `running` before the agent is asked to run fio, and
//! finished with its figures or its error. A probe found `running` when
//! the worker starts was cut off by a restart: it is marked failed, not run
//! again. Results are kept per disk (`disk_key`), so they follow a disk
//! from slot to slot.

use sqlx::Row;

use super::{Result, Store, StoreError};
use crate::domain::probe::{DiskKey, JobFigures, ProbeFigures, ProbeMode};
use crate::wire::agent::ProbeResult;
use crate::wire::api::probes::{DiskProbe, ProbeState};

const COLUMNS: &str = "id, disk_key, host, path, device_id, device_class, size_bytes, model, mode, state, \
                       requested_at, started_at, finished_at, seq_write_bps, seq_read_bps, rand_read_iops, \
                       sync_write_iops, jobs_json, command, steps_json, error, actor";

/// A probe as asked: the disk, where it is, and what makes it comparable.
#[derive(Debug, Clone)]
pub struct NewProbe {
    pub key: DiskKey,
    pub host: String,
    pub path: String,
    pub device_id: Option<String>,
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub mode: ProbeMode,
}

fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Corrupt(format!("a disk probe's {what} {value:?}"))
}

fn probe_from(row: &sqlx::sqlite::SqliteRow) -> Result<DiskProbe> {
    let key: String = row.try_get("disk_key")?;
    let key = DiskKey::parse(&key).ok_or_else(|| corrupt("disk key", &key))?;
    let mode: String = row.try_get("mode")?;
    let state: String = row.try_get("state")?;
    let size: Option<i64> = row.try_get("size_bytes")?;
    let figures = match (
        row.try_get::<Option<f64>, _>("seq_write_bps")?,
        row.try_get::<Option<f64>, _>("seq_read_bps")?,
        row.try_get::<Option<f64>, _>("rand_read_iops")?,
        row.try_get::<Option<f64>, _>("sync_write_iops")?,
    ) {
        (Some(seq_write_bps), Some(seq_read_bps), Some(rand_read_iops), Some(sync_write_iops)) => {
            Some(ProbeFigures { seq_write_bps, seq_read_bps, rand_read_iops, sync_write_iops })
        }
        _ => None,
    };
    let jobs: Option<String> = row.try_get("jobs_json")?;
    let jobs: Vec<JobFigures> = match jobs {
        Some(j) => serde_json::from_str(&j).map_err(|e| corrupt("jobs", e.to_string()))?,
        None => Vec::new(),
    };
    let steps: Option<String> = row.try_get("steps_json")?;
    let steps: Vec<String> = match steps {
        Some(s) => serde_json::from_str(&s).map_err(|e| corrupt("steps", e.to_string()))?,
        None => Vec::new(),
    };
    Ok(DiskProbe {
        probe_id: row.try_get("id")?,
        host: row.try_get("host")?,
        path: row.try_get("path")?,
        disk: key.shown(),
        by_slot: key.by_slot(),
        device_id: row.try_get("device_id")?,
        device_class: row.try_get("device_class")?,
        size_bytes: size.map(|s| s.max(0) as u64),
        model: row.try_get("model")?,
        mode: ProbeMode::parse(&mode).ok_or_else(|| corrupt("mode", &mode))?,
        state: ProbeState::parse(&state).ok_or_else(|| corrupt("state", &state))?,
        requested_at: row.try_get("requested_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        figures,
        jobs,
        command: row.try_get("command")?,
        steps,
        error: row.try_get("error")?,
        actor: row.try_get("actor")?,
        outlier: None,
        fio_json: None,
    })
}

impl Store {
    /// Stores a probe as asked; refused while the same disk has one queued or running.
    pub async fn add_disk_probe(&self, p: &NewProbe, actor: Option<&str>, now: i64) -> Result<DiskProbe> {
        let inserted = sqlx::query(
            "INSERT INTO disk_probes (disk_key, host, path, device_id, device_class, size_bytes, model, mode, state,
                                      requested_at, actor)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id",
        )
        .bind(p.key.stored())
        .bind(&p.host)
        .bind(&p.path)
        .bind(p.device_id.as_deref().filter(|d| !d.is_empty()))
        .bind(&p.device_class)
        .bind(p.size_bytes.map(|s| s as i64))
        .bind(&p.model)
        .bind(p.mode.as_str())
        .bind(now)
        .bind(actor)
        .fetch_one(&self.pool)
        .await;
        let id: i64 = match inserted {
            Ok(row) => row.try_get(0)?,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(StoreError::Conflict(format!(
                    "disk {} already has a probe queued or running",
                    p.key.shown()
                )))
            }
            Err(e) => return Err(e.into()),
        };
        self.disk_probe(id).await
    }

    /// One probe, with fio's report.
    pub async fn disk_probe(&self, id: i64) -> Result<DiskProbe> {
        let row = sqlx::query(&format!("SELECT {COLUMNS}, fio_json FROM disk_probes WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no disk probe {id}")))?;
        let mut p = probe_from(&row)?;
        p.fio_json = row.try_get("fio_json")?;
        Ok(p)
    }

    /// Probes in this state, oldest first.
    pub async fn disk_probes_in(&self, state: ProbeState) -> Result<Vec<DiskProbe>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM disk_probes WHERE state = ? ORDER BY id"))
            .bind(state.as_str())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(probe_from).collect()
    }

    /// Each disk's probes that matter now: its latest, and its latest
    /// finished one when that is older, oldest first.
    pub async fn current_disk_probes(&self) -> Result<Vec<DiskProbe>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM disk_probes WHERE id IN (SELECT MAX(id) FROM disk_probes GROUP BY disk_key)
                OR id IN (SELECT MAX(id) FROM disk_probes WHERE state = 'done' GROUP BY disk_key)
             ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(probe_from).collect()
    }

    /// The last `limit` probes, newest first.
    pub async fn disk_probe_history(&self, limit: i64) -> Result<Vec<DiskProbe>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM disk_probes ORDER BY id DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(probe_from).collect()
    }

    /// Marks a queued probe as running (before the agent is asked); false
    /// if it was no longer queued.
    pub async fn start_disk_probe(&self, id: i64, now: i64) -> Result<bool> {
        let done =
            sqlx::query("UPDATE disk_probes SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'")
                .bind(now)
                .bind(id)
                .execute(&self.pool)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Puts a running probe back in the queue (its agent was busy with
    /// another disk command and ran nothing).
    pub async fn requeue_disk_probe(&self, id: i64) -> Result<()> {
        sqlx::query("UPDATE disk_probes SET state = 'queued', started_at = NULL WHERE id = ? AND state = 'running'")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Stores what the agent answered: the figures, or why it failed.
    pub async fn finish_disk_probe(
        &self,
        id: i64,
        outcome: std::result::Result<(&ProbeResult, ProbeFigures), String>,
        now: i64,
    ) -> Result<DiskProbe> {
        let q = match &outcome {
            Ok((r, f)) => sqlx::query(
                "UPDATE disk_probes SET state = 'done', finished_at = ?, seq_write_bps = ?, seq_read_bps = ?,
                        rand_read_iops = ?, sync_write_iops = ?, jobs_json = ?, fio_json = ?, command = ?,
                        steps_json = ?
                 WHERE id = ?",
            )
            .bind(now)
            .bind(f.seq_write_bps)
            .bind(f.seq_read_bps)
            .bind(f.rand_read_iops)
            .bind(f.sync_write_iops)
            .bind(serde_json::to_string(&r.jobs).map_err(|e| StoreError::Corrupt(e.to_string()))?)
            .bind(&r.fio_json)
            .bind(&r.command)
            .bind(serde_json::to_string(&r.steps).map_err(|e| StoreError::Corrupt(e.to_string()))?),
            Err(e) => sqlx::query("UPDATE disk_probes SET state = 'failed', finished_at = ?, error = ? WHERE id = ?")
                .bind(now)
                .bind(e),
        };
        q.bind(id).execute(&self.pool).await?;
        self.disk_probe(id).await
    }

    /// Marks every `running` probe failed with `why` (they were cut off).
    pub async fn interrupt_disk_probes(&self, why: &str, now: i64) -> Result<Vec<DiskProbe>> {
        let running = self.disk_probes_in(ProbeState::Running).await?;
        sqlx::query("UPDATE disk_probes SET state = 'failed', finished_at = ?, error = ? WHERE state = 'running'")
            .bind(now)
            .bind(why)
            .execute(&self.pool)
            .await?;
        Ok(running)
    }
}
