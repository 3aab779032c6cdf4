//! Error answers (every failure is `{"error": "..."}`; invalid spec
//! documents add one entry per error), and `/healthz`.

use serde::{Deserialize, Serialize};

use super::preview::SpecErrorJson;

#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What was wrong, naming the field and value where there is one.
    pub error: String,
    /// For invalid spec documents (422): each error with its document and line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SpecErrorJson>,
}

/// `/healthz`: `{"status": "ok"}` while the daemon runs.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Health {
    pub status: String,
}
