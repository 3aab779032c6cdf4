//! What `/metrics` shows, gathered in one place: the active removals with
//! their progress, each host's inventory age, reachability and failed
//! polls, and the workers. All from memory (Prometheus scrapes every few
//! seconds, 2000 hosts are too many to read per scrape): the read model's
//! removals and hosts, the inventory times the store last wrote, the
//! failed polls counted here.

use std::collections::HashMap;

use super::read_model::ReadModel;
use super::DaemonError;
use crate::wire::api::osds::RemovalStatus;
use crate::wire::api::workers::WorkerStatus;

#[derive(Debug, Clone, PartialEq)]
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

impl ReadModel {
    /// Each host's figures, its inventory's age as of `now` (ms), with the
    /// failed polls counted so far.
    pub async fn host_metrics(&self, now: i64, errors: &HashMap<String, u64>) -> Result<Vec<HostMetrics>, DaemonError> {
        let view = self.hosts_view().await?;
        let times = self.inventory_times();
        let hosts = view
            .snapshot
            .value
            .iter()
            .map(|h| {
                // The time the store last wrote, if it did since it opened:
                // newer than the rebuild's after a poll found it unchanged.
                let taken_at = h.taken_at.map(|at| times.get(&h.name).copied().unwrap_or(at));
                HostMetrics {
                    name: h.name.clone(),
                    inventory_age_s: taken_at.map(|t| (now - t) as f64 / 1000.0),
                    unreachable: h.unreachable,
                    poll_errors: errors.get(&h.name).copied().unwrap_or(0),
                }
            })
            .collect();
        Ok(hosts)
    }
}
