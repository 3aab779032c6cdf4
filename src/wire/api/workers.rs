//! `/api/v1/workers`: the daemon's background loops and how they fare.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WorkerStatus {
    /// `poller`, `reconciler`, `removals`.
    pub name: String,
    /// Steps run since the daemon started.
    pub steps: u64,
    /// Failed steps in a row; each one doubles the wait before the next (up to a bound).
    pub consecutive_errors: u32,
    pub last_success_at: Option<i64>,
    pub last_error: Option<String>,
    pub last_error_at: Option<i64>,
    /// When the next step is due at the latest (ms since the epoch).
    pub next_step_at: Option<i64>,
}
