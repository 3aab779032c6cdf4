//! `GET /api/v1/summary`: the counts a dashboard's header shows (built,
//! cheaply, by the daemon's read model).

use std::sync::Arc;

use axum::extract::State;
use axum::Json;

use super::error::ApiError;
use crate::daemon::Daemon;
use crate::wire::api::summary::Summary;

#[utoipa::path(get, path = "/api/v1/summary", tag = "summary", responses((status = 200, body = Summary)))]
pub async fn summary(State(d): State<Arc<Daemon>>) -> Result<Json<Summary>, ApiError> {
    Ok(Json(d.summary().await?))
}
