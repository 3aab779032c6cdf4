//! Devices held back from every spec until an operator releases them.

use super::{Result, Store, StoreError, Topic};
use crate::wire::api::devices::Hold;

impl Store {
    /// Holds a device; holding it again keeps the first reason and time.
    pub async fn hold(&self, host: &str, path: &str, device_id: Option<&str>, reason: &str, now: i64) -> Result<()> {
        self.backend.hold(host, path, device_id.filter(|d| !d.is_empty()), reason, now).await?;
        self.changed(Topic::Holds);
        Ok(())
    }

    pub async fn release(&self, host: &str, path: &str) -> Result<Hold> {
        let hold = self
            .backend
            .release(host, path)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("{path} on {host} is not held")))?;
        self.changed(Topic::Holds);
        Ok(hold)
    }

    pub async fn holds(&self) -> Result<Vec<Hold>> {
        self.backend.holds().await
    }
}
