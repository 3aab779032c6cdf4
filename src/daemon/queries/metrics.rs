//! What `/metrics` shows, gathered in one place: the active removals with
//! their progress, each host's inventory age, reachability and failed
//! polls, and the workers.

use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError};
use crate::wire::api::osds::RemovalStatus;
use crate::wire::api::workers::WorkerStatus;

pub struct HostMetrics {
    pub name: String,
    pub inventory_age_s: Option<f64>,
    pub unreachable: bool,
    pub poll_errors: u64,
}

pub struct MetricsView {
    /// Active removals only.
    pub removals: Vec<RemovalStatus>,
    pub hosts: Vec<HostMetrics>,
    pub workers: Vec<WorkerStatus>,
}

impl Daemon {
    pub async fn metrics_view(&self) -> Result<MetricsView, DaemonError> {
        let records = self.store.removals(0).await?;
        let mut removals = Vec::with_capacity(records.len());
        for r in &records {
            match self.removal_status(r).await {
                Ok(s) => removals.push(s),
                // One unreadable removal should not blank the whole page.
                Err(e) => tracing::error!(osd = r.removal.osd_id, "cannot show a removal in /metrics: {e}"),
            }
        }
        let hosts = self.store.hosts_with_heads().await?;
        let errors = self.poll_errors.lock().expect("counter lock").clone();
        let now = now_ms();
        let hosts = hosts
            .into_iter()
            .map(|(h, inv)| HostMetrics {
                inventory_age_s: inv.map(|i| (now - i.taken_at) as f64 / 1000.0),
                unreachable: h.unreachable_since.is_some(),
                poll_errors: errors.get(&h.name).copied().unwrap_or(0),
                name: h.name,
            })
            .collect();
        Ok(MetricsView { removals, hosts, workers: self.workers() })
    }
}
