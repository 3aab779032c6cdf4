//! `/api/v1/hosts`: add, list, remove and label hosts.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam, QueryParams};
use super::{paged, Paged};
use crate::daemon::Daemon;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::hosts::{
    AddHost, Host, HostDrainBody, HostDrainPreviewBody, HostDrainStatus, HostDrainStop, HostQuery, LabelBody,
    RemoveHostQuery,
};
use crate::wire::api::removal_preview::RemovalPreview;

#[utoipa::path(get, path = "/api/v1/hosts", tag = "hosts", params(HostQuery),
    responses((status = 200, body = [Host],
        headers(("x-total-count" = usize, description = "hosts matching the filter, before offset and limit")))))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<HostQuery>,
) -> Result<Paged<Host>, ApiError> {
    Ok(paged(d.inventory.hosts(&q).await?))
}

#[utoipa::path(post, path = "/api/v1/hosts", tag = "hosts", request_body = AddHost,
    responses((status = 201, body = Host), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn add(
    State(d): State<Arc<Daemon>>,
    JsonBody(body): JsonBody<AddHost>,
) -> Result<(StatusCode, Json<Host>), ApiError> {
    Ok((
        StatusCode::CREATED,
        Json(d.inventory.add_host(&body.name, &body.addr, &body.labels, !body.no_check).await?.into()),
    ))
}

#[utoipa::path(delete, path = "/api/v1/hosts/{name}", tag = "hosts", params(("name" = String, Path), RemoveHostQuery),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn remove(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
    QueryParams(q): QueryParams<RemoveHostQuery>,
) -> Result<StatusCode, ApiError> {
    d.inventory.remove_host(&name, q.forget_osds).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/hosts/{name}/drain", tag = "hosts", params(("name" = String, Path)),
    request_body = HostDrainBody,
    responses((status = 200, body = HostDrainStatus), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn drain(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
    JsonBody(body): JsonBody<HostDrainBody>,
) -> Result<Json<HostDrainStatus>, ApiError> {
    Ok(Json(d.removals.drain_host(&name, &body).await?))
}

/// What draining the host would do; changes nothing.
#[utoipa::path(post, path = "/api/v1/hosts/{name}/drain/preview", tag = "hosts", params(("name" = String, Path)),
    request_body = HostDrainPreviewBody,
    responses((status = 200, body = RemovalPreview), (status = 404, body = ErrorBody)))]
pub async fn drain_preview(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
    JsonBody(body): JsonBody<HostDrainPreviewBody>,
) -> Result<Json<RemovalPreview>, ApiError> {
    Ok(Json(d.removals.preview_host_drain(&name, body.zap_osd_devices).await?))
}

#[utoipa::path(post, path = "/api/v1/hosts/{name}/drain/stop", tag = "hosts", params(("name" = String, Path)),
    responses((status = 200, body = HostDrainStop), (status = 404, body = ErrorBody)))]
pub async fn drain_stop(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
) -> Result<Json<HostDrainStop>, ApiError> {
    Ok(Json(d.removals.stop_host_drain(&name).await?))
}

#[utoipa::path(get, path = "/api/v1/hosts/{name}/drain", tag = "hosts", params(("name" = String, Path)),
    responses((status = 200, body = HostDrainStatus), (status = 404, body = ErrorBody)))]
pub async fn drain_status(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
) -> Result<Json<HostDrainStatus>, ApiError> {
    Ok(Json(d.removals.host_drain_status(&name).await?))
}

#[utoipa::path(post, path = "/api/v1/hosts/{name}/labels", tag = "hosts", params(("name" = String, Path)),
    request_body = LabelBody, responses((status = 200, body = Host), (status = 404, body = ErrorBody)))]
pub async fn add_label(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
    JsonBody(body): JsonBody<LabelBody>,
) -> Result<Json<Host>, ApiError> {
    Ok(Json(d.inventory.label(&name, &body.label, true).await?.into()))
}

#[utoipa::path(delete, path = "/api/v1/hosts/{name}/labels/{label}", tag = "hosts",
    params(("name" = String, Path), ("label" = String, Path)),
    responses((status = 200, body = Host), (status = 404, body = ErrorBody)))]
pub async fn remove_label(
    State(d): State<Arc<Daemon>>,
    PathParam((name, label)): PathParam<(String, String)>,
) -> Result<Json<Host>, ApiError> {
    Ok(Json(d.inventory.label(&name, &label, false).await?.into()))
}
