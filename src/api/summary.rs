//! `GET /api/v1/summary`: the counts a dashboard's header shows, from the
//! daemon's read model.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::Extension;

use super::error::ApiError;
use super::snapshot::SnapshotCache;
use crate::daemon::Daemon;
use crate::wire::api::summary::Summary;

#[utoipa::path(get, path = "/api/v1/summary", tag = "summary", responses((status = 200, body = Summary)))]
pub async fn summary(
    State(d): State<Arc<Daemon>>,
    Extension(cache): Extension<Arc<SnapshotCache>>,
) -> Result<Response, ApiError> {
    let view = d.read_model.summary_view().await?;
    Ok(cache.answer("summary", String::new(), &view, |s| (s.clone(), None)))
}
