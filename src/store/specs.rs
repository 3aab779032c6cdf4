//! Applied specs and their history.

use super::{Result, Store, StoreError, Topic};

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

/// A stored spec with its version and times.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedSpec {
    pub service_name: String,
    pub service_id: Option<String>,
    /// The YAML document as the operator wrote it.
    pub source: String,
    /// The document as canonical JSON, which the daemon re-reads.
    pub spec_json: String,
    pub unmanaged: bool,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

fn no_spec(service_name: &str) -> StoreError {
    StoreError::NotFound(format!("no spec named {service_name}"))
}

impl Store {
    /// Stores all specs of one apply at once (all or nothing), each as a new
    /// version with a history entry.
    pub async fn put_specs(&self, specs: &[StoredSpec], now: i64) -> Result<Vec<AppliedSpec>> {
        let records = self.backend.put_specs(specs, now).await?;
        self.changed(Topic::Specs);
        Ok(records)
    }

    pub async fn spec(&self, service_name: &str) -> Result<AppliedSpec> {
        self.backend.spec(service_name).await?.ok_or_else(|| no_spec(service_name))
    }

    pub async fn specs(&self) -> Result<Vec<AppliedSpec>> {
        self.backend.specs().await
    }

    pub async fn remove_spec(&self, service_name: &str, now: i64) -> Result<AppliedSpec> {
        let record = self.backend.remove_spec(service_name, now).await?.ok_or_else(|| no_spec(service_name))?;
        self.changed(Topic::Specs);
        Ok(record)
    }

    /// (version, action, at) of every change to a spec, oldest first.
    pub async fn spec_history(&self, service_name: &str) -> Result<Vec<(i64, String, i64)>> {
        self.backend.spec_history(service_name).await
    }
}
