//! Each host as `/metrics` shows it: whether its agent answers and when its
//! inventory was taken, from the read of the store the summary's host
//! counts are built from (again when hosts or inventories changed).
//!
//! An inventory seen again unchanged changes only its time, which the
//! store does not count as a change (thousands of polls a minute at fleet
//! scale would rebuild this every moment); the store keeps the time it
//! last wrote for each host in memory instead (`Changes::inventory_times`),
//! and `/metrics` takes the time from there when it has one.

use crate::store::{InventoryHead, ManagedHost};

#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub name: String,
    pub unreachable: bool,
    /// When its inventory was taken (ms), as of the rebuild; None without one.
    pub taken_at: Option<i64>,
}

pub(super) fn rows(hosts: &[(ManagedHost, Option<InventoryHead>)]) -> Vec<HostRow> {
    hosts
        .iter()
        .map(|(h, head)| HostRow {
            name: h.name.clone(),
            unreachable: h.unreachable_since.is_some(),
            taken_at: head.as_ref().map(|i| i.taken_at),
        })
        .collect()
}
