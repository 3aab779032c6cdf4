//! Applied specs and their history.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::store::backend::SpecRows;
use crate::store::{AppliedSpec, Result, StoredSpec};

fn record_from(row: &sqlx::sqlite::SqliteRow) -> Result<AppliedSpec> {
    Ok(AppliedSpec {
        service_name: row.try_get("service_name")?,
        service_id: row.try_get("service_id")?,
        source: row.try_get("source")?,
        spec_json: row.try_get("spec_json")?,
        unmanaged: row.try_get::<i64, _>("unmanaged")? != 0,
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

const COLUMNS: &str = "service_name, service_id, source, spec_json, unmanaged, version, created_at, updated_at";

#[async_trait]
impl SpecRows for SqliteBackend {
    async fn put_specs(&self, specs: &[StoredSpec], now: i64) -> Result<Vec<AppliedSpec>> {
        let mut tx = self.write().await?;
        for s in specs {
            sqlx::query(
                "INSERT INTO specs (service_name, service_id, source, spec_json, unmanaged, version, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6)
                 ON CONFLICT(service_name) DO UPDATE SET service_id = excluded.service_id, source = excluded.source,
                   spec_json = excluded.spec_json, unmanaged = excluded.unmanaged, version = specs.version + 1,
                   updated_at = excluded.updated_at",
            )
            .bind(&s.service_name)
            .bind(&s.service_id)
            .bind(&s.source)
            .bind(&s.spec_json)
            .bind(i64::from(s.unmanaged))
            .bind(now)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO spec_history (service_name, version, action, source, at)
                 SELECT service_name, version, 'applied', source, ?2 FROM specs WHERE service_name = ?1",
            )
            .bind(&s.service_name)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        let mut out = Vec::with_capacity(specs.len());
        for s in specs {
            let row = sqlx::query(&format!("SELECT {COLUMNS} FROM specs WHERE service_name = ?"))
                .bind(&s.service_name)
                .fetch_one(&mut *tx)
                .await?;
            out.push(record_from(&row)?);
        }
        tx.commit().await?;
        Ok(out)
    }

    async fn spec(&self, service_name: &str) -> Result<Option<AppliedSpec>> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM specs WHERE service_name = ?"))
            .bind(service_name)
            .fetch_optional(&self.reads)
            .await?;
        row.as_ref().map(record_from).transpose()
    }

    async fn specs(&self) -> Result<Vec<AppliedSpec>> {
        let rows =
            sqlx::query(&format!("SELECT {COLUMNS} FROM specs ORDER BY service_name")).fetch_all(&self.reads).await?;
        rows.iter().map(record_from).collect()
    }

    async fn remove_spec(&self, service_name: &str, now: i64) -> Result<Option<AppliedSpec>> {
        let mut tx = self.write().await?;
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM specs WHERE service_name = ?"))
            .bind(service_name)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(record) = row.as_ref().map(record_from).transpose()? else { return Ok(None) };
        sqlx::query(
            "INSERT INTO spec_history (service_name, version, action, source, at) VALUES (?, ?, 'removed', ?, ?)",
        )
        .bind(&record.service_name)
        .bind(record.version)
        .bind(&record.source)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM specs WHERE service_name = ?").bind(service_name).execute(&mut *tx).await?;
        sqlx::query("DELETE FROM spec_host_runs WHERE service_name = ?").bind(service_name).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(Some(record))
    }

    async fn spec_history(&self, service_name: &str) -> Result<Vec<(i64, String, i64)>> {
        let rows = sqlx::query("SELECT version, action, at FROM spec_history WHERE service_name = ? ORDER BY id")
            .bind(service_name)
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("version")?, r.try_get("action")?, r.try_get("at")?))).collect()
    }
}
