//! Applied specs and their history.

use sqlx::Row;

use super::{Result, Store, StoreError, Topic};
use crate::wire::api::specs::SpecRecord;

/// A spec to store.
#[derive(Debug, Clone)]
pub struct StoredSpec {
    pub service_name: String,
    pub service_id: Option<String>,
    /// The YAML document as the operator wrote it.
    pub source: String,
    /// The document as canonical JSON, which the daemon re-reads.
    pub spec_json: String,
    pub unmanaged: bool,
}

fn record_from(row: &sqlx::sqlite::SqliteRow) -> Result<SpecRecord> {
    Ok(SpecRecord {
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

impl Store {
    /// Stores all specs of one apply at once (all or nothing), each as a new
    /// version with a history entry.
    pub async fn put_specs(&self, specs: &[StoredSpec], now: i64) -> Result<Vec<SpecRecord>> {
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
        tx.commit().await?;
        self.changed(Topic::Specs);
        let mut out = Vec::with_capacity(specs.len());
        for s in specs {
            out.push(self.spec(&s.service_name).await?);
        }
        Ok(out)
    }

    pub async fn spec(&self, service_name: &str) -> Result<SpecRecord> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM specs WHERE service_name = ?"))
            .bind(service_name)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no spec named {service_name}")))?;
        record_from(&row)
    }

    pub async fn specs(&self) -> Result<Vec<SpecRecord>> {
        let rows =
            sqlx::query(&format!("SELECT {COLUMNS} FROM specs ORDER BY service_name")).fetch_all(&self.pool).await?;
        rows.iter().map(record_from).collect()
    }

    pub async fn remove_spec(&self, service_name: &str, now: i64) -> Result<SpecRecord> {
        let mut tx = self.write().await?;
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM specs WHERE service_name = ?"))
            .bind(service_name)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no spec named {service_name}")))?;
        let record = record_from(&row)?;
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
        self.changed(Topic::Specs);
        Ok(record)
    }

    /// (version, action, at) of every change to a spec, oldest first.
    pub async fn spec_history(&self, service_name: &str) -> Result<Vec<(i64, String, i64)>> {
        let rows = sqlx::query("SELECT version, action, at FROM spec_history WHERE service_name = ? ORDER BY id")
            .bind(service_name)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok((r.try_get("version")?, r.try_get("action")?, r.try_get("at")?))).collect()
    }
}
