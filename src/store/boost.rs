//! The recovery boost of fast drains: at most one, stored before its first
//! `config set` and removed once its values are back (`domain::removal::boost`).

use super::{Result, Store, StoreError};
use crate::domain::removal::boost::Boost;

impl Store {
    pub async fn boost(&self) -> Result<Option<Boost>> {
        let state = self.backend.boost().await?;
        state
            .map(|s| serde_json::from_str(&s).map_err(|e| StoreError::Corrupt(format!("recovery boost: {e}"))))
            .transpose()
    }

    pub async fn save_boost(&self, boost: &Boost, now: i64) -> Result<()> {
        self.backend.save_boost(&serde_json::to_string(boost).expect("a boost serializes"), now).await
    }

    pub async fn forget_boost(&self) -> Result<()> {
        self.backend.forget_boost().await
    }
}
