//! The recovery boost of fast drains: at most one, stored before its first
//! `config set` and removed once its values are back (`domain::removal::boost`).

use sqlx::Row;

use super::{Result, Store, StoreError};
use crate::domain::removal::boost::Boost;

impl Store {
    pub async fn boost(&self) -> Result<Option<Boost>> {
        let row = sqlx::query("SELECT state FROM recovery_boost WHERE id = 1").fetch_optional(&self.pool).await?;
        row.map(|r| {
            let state: String = r.try_get(0)?;
            serde_json::from_str(&state).map_err(|e| StoreError::Corrupt(format!("recovery boost: {e}")))
        })
        .transpose()
    }

    pub async fn save_boost(&self, boost: &Boost, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO recovery_boost (id, state, started_at, updated_at) VALUES (1, ?1, ?2, ?2)
             ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at",
        )
        .bind(serde_json::to_string(boost).expect("a boost serializes"))
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    pub async fn forget_boost(&self) -> Result<()> {
        sqlx::query("DELETE FROM recovery_boost").execute(&self.pool).await?;
        Ok(())
    }
}
