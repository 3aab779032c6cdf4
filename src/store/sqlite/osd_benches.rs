//! Per-OSD benches, a row each.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::domain::bench::osd::OsdBenchResult;
use crate::store::backend::OsdBenchRows;
use crate::store::{BenchState, BenchTarget, OsdBenchRow, Result, StoreError};

const COLUMNS: &str = "id, osd_id, host, device_class, size_bytes, model, bytes, block_size, state, requested_at, \
                       started_at, finished_at, bytes_per_sec, iops, elapsed_s, error";

fn bench_from(row: &sqlx::sqlite::SqliteRow) -> Result<OsdBenchRow> {
    let state: String = row.try_get("state")?;
    let osd: i64 = row.try_get("osd_id")?;
    let size: Option<i64> = row.try_get("size_bytes")?;
    let (bytes, block): (i64, i64) = (row.try_get("bytes")?, row.try_get("block_size")?);
    Ok(OsdBenchRow {
        bench_id: row.try_get("id")?,
        target: BenchTarget {
            osd_id: u32::try_from(osd).map_err(|_| StoreError::Corrupt(format!("an OSD id {osd}")))?,
            host: row.try_get("host")?,
            device_class: row.try_get("device_class")?,
            size_bytes: size.map(|s| s.max(0) as u64),
            model: row.try_get("model")?,
            bytes: bytes.max(0) as u64,
            block_size: block.max(0) as u64,
        },
        state: BenchState::parse(&state).ok_or_else(|| StoreError::Corrupt(format!("a bench state {state:?}")))?,
        requested_at: row.try_get("requested_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        bytes_per_sec: row.try_get("bytes_per_sec")?,
        iops: row.try_get("iops")?,
        elapsed_s: row.try_get("elapsed_s")?,
        error: row.try_get("error")?,
    })
}

#[async_trait]
impl OsdBenchRows for SqliteBackend {
    async fn add_osd_benches(&self, benches: &[BenchTarget], actor: Option<&str>, now: i64) -> Result<Vec<i64>> {
        let mut tx = self.write().await?;
        let mut ids = Vec::new();
        for b in benches {
            let row = sqlx::query(
                "INSERT INTO osd_benches (osd_id, host, device_class, size_bytes, model, bytes, block_size, state,
                                          requested_at, actor)
                 VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?) RETURNING id",
            )
            .bind(i64::from(b.osd_id))
            .bind(&b.host)
            .bind(&b.device_class)
            .bind(b.size_bytes.map(|s| s as i64))
            .bind(&b.model)
            .bind(b.bytes as i64)
            .bind(b.block_size as i64)
            .bind(now)
            .bind(actor)
            .fetch_one(&mut *tx)
            .await?;
            ids.push(row.try_get::<i64, _>(0)?);
        }
        tx.commit().await?;
        Ok(ids)
    }

    async fn osd_bench(&self, id: i64) -> Result<Option<OsdBenchRow>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM osd_benches WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.reads)
            .await?;
        row.as_ref().map(bench_from).transpose()
    }

    async fn osd_benches_in(&self, state: BenchState) -> Result<Vec<OsdBenchRow>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM osd_benches WHERE state = ? ORDER BY id"))
            .bind(state.as_str())
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(bench_from).collect()
    }

    async fn latest_osd_benches(&self) -> Result<Vec<OsdBenchRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM osd_benches WHERE id IN (SELECT MAX(id) FROM osd_benches GROUP BY osd_id)
             ORDER BY osd_id"
        ))
        .fetch_all(&self.reads)
        .await?;
        rows.iter().map(bench_from).collect()
    }

    async fn latest_done_osd_benches(&self) -> Result<Vec<OsdBenchRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM osd_benches WHERE id IN
               (SELECT MAX(id) FROM osd_benches WHERE state = 'done' GROUP BY osd_id) ORDER BY osd_id"
        ))
        .fetch_all(&self.reads)
        .await?;
        rows.iter().map(bench_from).collect()
    }

    async fn osd_bench_history(&self, limit: i64) -> Result<Vec<OsdBenchRow>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM osd_benches ORDER BY id DESC LIMIT ?"))
            .bind(limit)
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(bench_from).collect()
    }

    async fn start_osd_bench(&self, id: i64, now: i64) -> Result<bool> {
        let done =
            sqlx::query("UPDATE osd_benches SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'")
                .bind(now)
                .bind(id)
                .execute(&self.writes)
                .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn finish_osd_bench(
        &self,
        id: i64,
        outcome: &std::result::Result<OsdBenchResult, String>,
        now: i64,
    ) -> Result<()> {
        let q = match outcome {
            Ok(r) => sqlx::query(
                "UPDATE osd_benches SET state = 'done', finished_at = ?, bytes_per_sec = ?, iops = ?, elapsed_s = ?
                 WHERE id = ?",
            )
            .bind(now)
            .bind(r.bytes_per_sec)
            .bind(r.iops)
            .bind(r.elapsed_s),
            Err(e) => sqlx::query("UPDATE osd_benches SET state = 'failed', finished_at = ?, error = ? WHERE id = ?")
                .bind(now)
                .bind(e),
        };
        q.bind(id).execute(&self.writes).await?;
        Ok(())
    }

    async fn interrupt_osd_benches(&self, why: &str, now: i64) -> Result<Vec<OsdBenchRow>> {
        let mut tx = self.write().await?;
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM osd_benches WHERE state = 'running' ORDER BY id"))
            .fetch_all(&mut *tx)
            .await?;
        let running = rows.iter().map(bench_from).collect::<Result<Vec<_>>>()?;
        sqlx::query("UPDATE osd_benches SET state = 'failed', finished_at = ?, error = ? WHERE state = 'running'")
            .bind(now)
            .bind(why)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(running)
    }
}
