//! Cluster benchmarks: the run's state (`domain::bench::cluster`) as
//! JSON, written before each phase's action and again after it, with an
//! optimistic version check. One run is active at a time.

use sqlx::Row;

use super::{Result, Store, StoreError};
use crate::domain::bench::cluster::ClusterBench;
use crate::wire::api::bench::ClusterRun;

const COLUMNS: &str = "id, state, created_at, updated_at, finished_at, actor, version";

fn run_from(row: &sqlx::sqlite::SqliteRow) -> Result<ClusterRun> {
    let state: String = row.try_get("state")?;
    let bench: ClusterBench =
        serde_json::from_str(&state).map_err(|e| StoreError::Corrupt(format!("cluster bench state: {e}")))?;
    Ok(ClusterRun {
        bench_id: row.try_get("id")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        finished_at: row.try_get("finished_at")?,
        actor: row.try_get("actor")?,
        version: row.try_get("version")?,
        bench,
    })
}

fn state_json(b: &ClusterBench) -> String {
    serde_json::to_string(b).expect("a cluster bench serializes")
}

impl Store {
    /// Stores a new run; refused while another is active. The pool name
    /// of a run that makes its own pool comes from its id, so it is
    /// written in the same transaction.
    pub async fn add_cluster_bench(
        &self,
        b: &ClusterBench,
        own_pool_name: impl Fn(i64) -> String,
        actor: Option<&str>,
        now: i64,
    ) -> Result<ClusterRun> {
        let mut tx = self.write().await?;
        let inserted = sqlx::query(
            "INSERT INTO cluster_benches (label, state, phase, active, created_at, updated_at, actor)
             VALUES (?, ?, ?, 1, ?, ?, ?) RETURNING id",
        )
        .bind(&b.label)
        .bind(state_json(b))
        .bind(b.phase.as_str())
        .bind(now)
        .bind(now)
        .bind(actor)
        .fetch_one(&mut *tx)
        .await;
        let id: i64 = match inserted {
            Ok(row) => row.try_get(0)?,
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                return Err(StoreError::Conflict("a cluster benchmark is already running".into()))
            }
            Err(e) => return Err(e.into()),
        };
        let mut named = b.clone();
        if named.own_pool {
            named.pool = own_pool_name(id);
        }
        named.run_name = format!("osdkeeper-bench-{id}");
        sqlx::query("UPDATE cluster_benches SET state = ? WHERE id = ?")
            .bind(state_json(&named))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.cluster_bench(id).await
    }

    pub async fn cluster_bench(&self, id: i64) -> Result<ClusterRun> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM cluster_benches WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no cluster benchmark {id}")))?;
        run_from(&row)
    }

    pub async fn active_cluster_bench(&self) -> Result<Option<ClusterRun>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM cluster_benches WHERE active = 1"))
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(run_from).transpose()
    }

    /// The last `limit` runs, newest first.
    pub async fn cluster_benches(&self, limit: i64) -> Result<Vec<ClusterRun>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM cluster_benches ORDER BY id DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(run_from).collect()
    }

    /// Writes the run's new state if nobody else did since `version`; the new version.
    pub async fn save_cluster_bench(&self, id: i64, b: &ClusterBench, version: i64, now: i64) -> Result<i64> {
        let finished = b.phase.is_finished();
        let done = sqlx::query(
            "UPDATE cluster_benches SET state = ?, phase = ?, active = ?, updated_at = ?,
                    finished_at = CASE WHEN ? THEN COALESCE(finished_at, ?) ELSE finished_at END,
                    version = version + 1
             WHERE id = ? AND version = ?",
        )
        .bind(state_json(b))
        .bind(b.phase.as_str())
        .bind(!finished)
        .bind(now)
        .bind(finished)
        .bind(now)
        .bind(id)
        .bind(version)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() != 1 {
            return Err(StoreError::Conflict(format!("cluster benchmark {id} changed meanwhile")));
        }
        Ok(version + 1)
    }
}
