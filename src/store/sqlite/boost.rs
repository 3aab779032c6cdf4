//! The recovery boost of fast drains: one row at most.

use async_trait::async_trait;

use super::SqliteBackend;
use crate::store::backend::BoostRows;
use crate::store::Result;

#[async_trait]
impl BoostRows for SqliteBackend {
    async fn boost(&self) -> Result<Option<String>> {
        Ok(sqlx::query_scalar("SELECT state FROM recovery_boost WHERE id = 1").fetch_optional(&self.reads).await?)
    }

    async fn save_boost(&self, state: &str, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO recovery_boost (id, state, started_at, updated_at) VALUES (1, ?1, ?2, ?2)
             ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
        )
        .bind(state)
        .bind(now)
        .execute(&self.writes)
        .await?;
        Ok(())
    }

    async fn forget_boost(&self) -> Result<()> {
        sqlx::query("DELETE FROM recovery_boost").execute(&self.writes).await?;
        Ok(())
    }
}
