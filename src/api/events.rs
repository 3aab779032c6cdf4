//! `/api/v1/events`: the event log; `/api/v1/workers`: the background loops.

use std::sync::Arc;

use axum::extract::State;
use axum::Json;

use super::error::ApiError;
use super::json_body::QueryParams;
use crate::daemon::Daemon;
use crate::wire::api::events::{Event, EventQuery};
use crate::wire::api::workers::WorkerStatus;

#[utoipa::path(get, path = "/api/v1/events", tag = "events", params(EventQuery), responses((status = 200, body = [Event])))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<EventQuery>,
) -> Result<Json<Vec<Event>>, ApiError> {
    Ok(Json(d.events.list(&q).await?))
}

#[utoipa::path(get, path = "/api/v1/workers", tag = "health",
    responses((status = 200, description = "each background worker: steps, errors in a row, last error and success", body = [WorkerStatus])))]
pub async fn workers(State(d): State<Arc<Daemon>>) -> Json<Vec<WorkerStatus>> {
    Json(d.workers())
}
