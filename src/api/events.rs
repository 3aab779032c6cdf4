//! `/api/v1/events`: the event log.

use std::sync::Arc;

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use super::error::ApiError;
use super::json_body::QueryParams;
use crate::daemon::Daemon;
use crate::store::Event;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct EventQuery {
    /// Only events with a larger id (for following the log).
    pub after: Option<i64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/events", tag = "events", params(EventQuery), responses((status = 200, body = [Event])))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<EventQuery>,
) -> Result<Json<Vec<Event>>, ApiError> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    Ok(Json(d.store.events(q.after, limit).await?))
}
