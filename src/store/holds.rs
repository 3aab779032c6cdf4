//! Devices held back from every spec until an operator releases them.

use super::{Result, Store, StoreError, Topic};

/// A device held back from every spec, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldDevice {
    pub host: String,
    pub path: String,
    pub reason: String,
    pub since: i64,
    /// The held disk's id (serial/WWN), when known; another disk at the same path is not held.
    pub device_id: Option<String>,
}

impl HeldDevice {
    /// Whether this hold applies to the device at `path` with `device_id`.
    pub fn covers(&self, host: &str, path: &str, device_id: &str) -> bool {
        self.host == host
            && self.path == path
            && match self.device_id.as_deref() {
                None | Some("") => true,
                Some(id) => id == device_id,
            }
    }
}

impl Store {
    /// Holds a device; holding it again keeps the first reason and time.
    pub async fn hold(&self, host: &str, path: &str, device_id: Option<&str>, reason: &str, now: i64) -> Result<()> {
        self.backend.hold(host, path, device_id.filter(|d| !d.is_empty()), reason, now).await?;
        self.changed(Topic::Holds);
        Ok(())
    }

    pub async fn release(&self, host: &str, path: &str) -> Result<HeldDevice> {
        let hold = self
            .backend
            .release(host, path)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("{path} on {host} is not held")))?;
        self.changed(Topic::Holds);
        Ok(hold)
    }

    pub async fn holds(&self) -> Result<Vec<HeldDevice>> {
        self.backend.holds().await
    }
}
