//! Every answer the API and the dashboard show, as the types of
//! `wire::api`: built per request from the store, the cached inventories
//! and the cluster, or (removal status, summary, OSD list) served from the
//! read model (`read_model/`). Handlers call these and send what they return.

mod cluster_status;
mod deployments;
mod devices;
mod hosts;
mod metrics;
mod osds;
mod removals;
mod specs;
mod summary;

pub use metrics::{HostMetrics, MetricsView};
pub(crate) use removals::drain_sample;
pub use summary::{ClusterCache, CLUSTER_TTL};

use super::{Daemon, DaemonError};
use crate::store::EventFilter;
use crate::wire::api::events::{Event, EventQuery};

impl Daemon {
    pub async fn events(&self, q: &EventQuery) -> Result<Vec<Event>, DaemonError> {
        let limit = q.limit.unwrap_or(100).clamp(1, 1000);
        let subject = q.osd.map(|id| format!("osd.{id}"));
        let filter =
            EventFilter { after: q.after, host: q.host.as_deref(), subject: subject.as_deref(), since: q.since };
        Ok(self.store.events_matching(&filter, limit).await?)
    }
}
