//! `/api/v1/osds`: OSDs, their removal (drain, stop, destroy/purge, zap),
//! the removal status with progress, stopping a removal, and the preview
//! of one (`osd rm --dry-run`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::{Extension, Json};

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam, QueryParams};
use super::snapshot::SnapshotCache;
use crate::daemon::removal::RemoveRequest;
use crate::daemon::Daemon;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::osds::{
    DetailQuery, IdsBody, OsdQuery, OsdRow, RemovalDetail, RemovalStatus, RemoveBody, StatusQuery,
};
use crate::wire::api::removal_preview::{PreviewBody, RemovalPreview};

#[utoipa::path(get, path = "/api/v1/osds", tag = "osds", params(OsdQuery),
    responses((status = 200, body = [OsdRow],
        headers(("x-total-count" = usize, description = "OSDs matching the filters, before offset and limit"))),
        (status = 422, body = ErrorBody)))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    Extension(cache): Extension<Arc<SnapshotCache>>,
    QueryParams(q): QueryParams<OsdQuery>,
) -> Result<Response, ApiError> {
    let view = d.read_model.osds_view().await?;
    Ok(cache.answer("osds", format!("{q:?}"), &view, |rows| {
        let page = rows.page(&q);
        (page.items, Some(page.total))
    }))
}

#[utoipa::path(post, path = "/api/v1/osds/removals", tag = "osds", request_body = RemoveBody,
    responses((status = 202, body = [RemovalStatus]), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn remove(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<RemoveBody>,
) -> Result<(StatusCode, Json<Vec<RemovalStatus>>), ApiError> {
    let req = RemoveRequest {
        ids: b.ids,
        replace: b.replace,
        force: b.force,
        zap: b.zap,
        fast: b.fast,
        ignore_preview_blockers: b.ignore_preview_blockers,
        slot: None,
        in_place: None,
        expected_uuids: Vec::new(),
    };
    let recs = d.removals.schedule_removals(&req).await?;
    Ok((StatusCode::ACCEPTED, Json(d.read_model.removal_statuses(&recs).await?)))
}

/// What removing the OSDs together would do; nothing changes. It needs
/// `operate` like the removal (it runs Ceph's tools on the daemon's host).
#[utoipa::path(post, path = "/api/v1/osds/removals/preview", tag = "osds", request_body = PreviewBody,
    responses((status = 200, body = RemovalPreview), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn preview(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<PreviewBody>,
) -> Result<Json<RemovalPreview>, ApiError> {
    Ok(Json(d.removals.preview_removal(&b.ids, b.zap).await?))
}

#[utoipa::path(get, path = "/api/v1/osds/removals", tag = "osds", params(StatusQuery), responses((status = 200, body = [RemovalStatus])))]
pub async fn status(
    State(d): State<Arc<Daemon>>,
    Extension(cache): Extension<Arc<SnapshotCache>>,
    QueryParams(q): QueryParams<StatusQuery>,
) -> Result<Response, ApiError> {
    let view = d.read_model.removals_view().await?;
    Ok(cache.answer("removals", format!("{:?}", q.history), &view, |r| (r.select(&q), None)))
}

#[utoipa::path(get, path = "/api/v1/osds/removals/{removal_id}", tag = "osds",
    params(("removal_id" = i64, Path), DetailQuery),
    responses((status = 200, body = RemovalDetail), (status = 404, body = ErrorBody)))]
pub async fn detail(
    State(d): State<Arc<Daemon>>,
    PathParam(id): PathParam<i64>,
    QueryParams(q): QueryParams<DetailQuery>,
) -> Result<Json<RemovalDetail>, ApiError> {
    Ok(Json(d.read_model.removal_detail(id, &q).await?))
}

#[utoipa::path(post, path = "/api/v1/osds/removals/stop", tag = "osds", request_body = IdsBody,
    responses((status = 200, body = [RemovalStatus]), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn stop(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<IdsBody>,
) -> Result<Json<Vec<RemovalStatus>>, ApiError> {
    let recs = d.removals.stop_removals(&b.ids).await?;
    Ok(Json(d.read_model.removal_statuses(&recs).await?))
}
