//! What the reconciler last ran for a spec on a host.

use async_trait::async_trait;
use sqlx::Row;

use super::SqliteBackend;
use crate::store::backend::RunRows;
use crate::store::{Result, SpecHostRun};

#[async_trait]
impl RunRows for SqliteBackend {
    async fn spec_host_run(&self, service_name: &str, host: &str) -> Result<Option<SpecHostRun>> {
        let row = sqlx::query(
            "SELECT service_name, host, spec_version, inventory_fingerprint, command, outcome, at
             FROM spec_host_runs WHERE service_name = ? AND host = ?",
        )
        .bind(service_name)
        .bind(host)
        .fetch_optional(&self.reads)
        .await?;
        row.map(|r| {
            Ok(SpecHostRun {
                service_name: r.try_get(0)?,
                host: r.try_get(1)?,
                spec_version: r.try_get(2)?,
                inventory_fingerprint: r.try_get(3)?,
                command: r.try_get(4)?,
                outcome: r.try_get(5)?,
                at: r.try_get(6)?,
            })
        })
        .transpose()
    }

    async fn put_spec_host_run(&self, run: &SpecHostRun) -> Result<()> {
        sqlx::query(
            "INSERT INTO spec_host_runs (service_name, host, spec_version, inventory_fingerprint, command, outcome, at)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT(service_name, host) DO UPDATE SET spec_version = excluded.spec_version,
               inventory_fingerprint = excluded.inventory_fingerprint, command = excluded.command,
               outcome = excluded.outcome, at = excluded.at",
        )
        .bind(&run.service_name)
        .bind(&run.host)
        .bind(run.spec_version)
        .bind(&run.inventory_fingerprint)
        .bind(&run.command)
        .bind(&run.outcome)
        .bind(run.at)
        .execute(&self.writes)
        .await?;
        Ok(())
    }
}
