//! `osd rm status` from memory: every active removal with its progress
//! (`queries/removals.rs` makes each status from its record and recent
//! samples) and the most recent finished ones. A finished removal never
//! changes again, so the finished ones are read only when one more finished.

use std::collections::{HashMap, HashSet};

use super::ReadModel;
use crate::daemon::DaemonError;
use crate::domain::removal::Phase;
use crate::store::RemovalCodec;
use crate::wire::api::osds::{RemovalStatus, StatusQuery};

/// The most finished removals a status may ask for (`history`).
pub const MAX_HISTORY: i64 = 1000;

/// The finished removals a status shows when it does not say.
const DEFAULT_HISTORY: i64 = 20;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemovalList {
    /// By id.
    active: Vec<RemovalStatus>,
    /// Most recent first, by when they finished, then by id: the order the
    /// history is cut in (`Store::finished_removals`).
    finished: Vec<RemovalStatus>,
}

impl RemovalList {
    /// The active removals and the `history` most recent finished ones, by id.
    pub fn select(&self, q: &StatusQuery) -> Vec<RemovalStatus> {
        let history = q.history.unwrap_or(DEFAULT_HISTORY).clamp(0, MAX_HISTORY) as usize;
        let mut out: Vec<RemovalStatus> =
            self.active.iter().chain(self.finished.iter().take(history)).cloned().collect();
        out.sort_by_key(|s| s.removal_id);
        out
    }

    /// The active removals, by id.
    pub fn active(&self) -> &[RemovalStatus] {
        &self.active
    }

    pub fn active_count(&self) -> usize {
        self.active.len()
    }

    /// The phase of each OSD being removed.
    pub fn phases(&self) -> HashMap<u32, Phase> {
        self.active.iter().map(|s| (s.osd_id, s.state)).collect()
    }
}

impl ReadModel {
    /// The active removals read again; the finished ones only when
    /// `finished_changed` or a removal left the active ones since `previous`.
    pub(super) async fn build_removals(
        &self,
        previous: Option<&RemovalList>,
        finished_changed: bool,
    ) -> Result<RemovalList, DaemonError> {
        let records = self.store.ops::<RemovalCodec>().active().await?;
        let active = self.removal_statuses(&records).await?;
        let now: HashSet<i64> = active.iter().map(|s| s.removal_id).collect();
        let finished = match previous {
            Some(p) if !finished_changed && p.active.iter().all(|s| now.contains(&s.removal_id)) => p.finished.clone(),
            _ => self.removal_statuses(&self.store.ops::<RemovalCodec>().finished(MAX_HISTORY).await?).await?,
        };
        Ok(RemovalList { active, finished })
    }
}
