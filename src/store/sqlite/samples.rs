//! A drain's progress samples.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::store::backend::SampleRows;
use crate::store::{DrainSampleRow, Result};

const SAMPLE: &str = "at, pgs, kb_used, bytes_left, blocked";

fn sample_from(r: &sqlx::sqlite::SqliteRow) -> Result<DrainSampleRow> {
    Ok(DrainSampleRow {
        at: r.try_get(0)?,
        pgs: r.try_get(1)?,
        kb_used: r.try_get(2)?,
        bytes_left: r.try_get(3)?,
        blocked: r.try_get(4)?,
    })
}

#[async_trait]
impl SampleRows for SqliteBackend {
    async fn add_sample(&self, operation_id: i64, sample: &DrainSampleRow) -> Result<()> {
        sqlx::query(
            "INSERT INTO drain_samples (operation_id, at, pgs, kb_used, bytes_left, blocked) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(operation_id)
        .bind(sample.at)
        .bind(sample.pgs)
        .bind(sample.kb_used)
        .bind(sample.bytes_left)
        .bind(&sample.blocked)
        .execute(&self.writes)
        .await?;
        Ok(())
    }

    async fn samples(&self, operation_id: i64) -> Result<Vec<DrainSampleRow>> {
        let rows = sqlx::query(&format!("SELECT {SAMPLE} FROM drain_samples WHERE operation_id = ? ORDER BY at"))
            .bind(operation_id)
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(sample_from).collect()
    }

    async fn recent_samples(&self, operation_id: i64, window_ms: i64) -> Result<Vec<DrainSampleRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {SAMPLE} FROM drain_samples WHERE operation_id = ?1
             AND at >= (SELECT MAX(at) FROM drain_samples WHERE operation_id = ?1) - ?2 ORDER BY at"
        ))
        .bind(operation_id)
        .bind(window_ms)
        .fetch_all(&self.reads)
        .await?;
        rows.iter().map(sample_from).collect()
    }

    async fn samples_after(&self, operation_id: i64, after: i64) -> Result<Vec<DrainSampleRow>> {
        let rows =
            sqlx::query(&format!("SELECT {SAMPLE} FROM drain_samples WHERE operation_id = ? AND at > ? ORDER BY at"))
                .bind(operation_id)
                .bind(after)
                .fetch_all(&self.reads)
                .await?;
        rows.iter().map(sample_from).collect()
    }
}
