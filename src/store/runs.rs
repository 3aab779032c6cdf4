//! What the reconciler last ran for a spec on a host.

use super::{Result, Store};

#[derive(Debug, Clone, PartialEq)]
pub struct SpecHostRun {
    pub service_name: String,
    pub host: String,
    pub spec_version: i64,
    pub inventory_fingerprint: String,
    pub command: String,
    pub outcome: String,
    pub at: i64,
}

impl Store {
    pub async fn spec_host_run(&self, service_name: &str, host: &str) -> Result<Option<SpecHostRun>> {
        self.backend.spec_host_run(service_name, host).await
    }

    pub async fn put_spec_host_run(&self, run: &SpecHostRun) -> Result<()> {
        self.backend.put_spec_host_run(run).await
    }
}
