//! `/api/v1/hosts`.

use serde::{Deserialize, Serialize};

/// A managed host and the state of its agent's polls. Stored as is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Host {
    pub name: String,
    /// host:port of its agent.
    pub addr: String,
    pub labels: Vec<String>,
    pub added_at: i64,
    /// Since when polls fail (ms since the epoch), if they do.
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub consecutive_failures: i64,
    pub next_poll_at: i64,
}

impl Host {
    /// A host not yet stored or polled: one about to be added, or a test's.
    pub fn unpolled(name: &str, addr: &str) -> Host {
        Host {
            name: name.into(),
            addr: addr.into(),
            labels: vec![],
            added_at: 0,
            unreachable_since: None,
            last_error: None,
            consecutive_failures: 0,
            next_poll_at: 0,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddHost {
    /// Host name (letters, digits, '-' and '.').
    pub name: String,
    /// HOST:PORT of the host's agent.
    pub addr: String,
    #[serde(default)]
    pub labels: Vec<String>,
    /// Add it without asking its agent first (by default the agent must
    /// answer, accept the agent token and report this host name).
    #[serde(default)]
    pub no_check: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelBody {
    pub label: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct HostQuery {
    /// true: only the hosts whose agent does not answer; false: only the others.
    pub unreachable: Option<bool>,
    /// Page through the hosts (in the order they were added): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}
