//! The read model: every answer the API and the dashboard show, built from
//! the store, the cached inventories and the cluster, as the types of
//! `wire::api`. Handlers call these and send what they return.

mod deployments;
mod devices;
mod hosts;
mod metrics;
mod osds;
mod removals;
mod summary;

pub use metrics::{HostMetrics, MetricsView};
pub use summary::ClusterCache;

use super::{Daemon, DaemonError};
use crate::wire::api::events::{Event, EventQuery};
use crate::wire::api::specs::{SpecDetail, SpecRecord};

impl Daemon {
    pub async fn events(&self, q: &EventQuery) -> Result<Vec<Event>, DaemonError> {
        let limit = q.limit.unwrap_or(100).clamp(1, 1000);
        Ok(self.store.events(q.after, limit).await?)
    }

    pub async fn specs(&self) -> Result<Vec<SpecRecord>, DaemonError> {
        Ok(self.store.specs().await?)
    }

    pub async fn spec(&self, service_name: &str) -> Result<SpecDetail, DaemonError> {
        let spec = self.store.spec(service_name).await?;
        let history = self.store.spec_history(service_name).await?;
        Ok(SpecDetail { spec, history })
    }
}
