//! `/api/v1/swaps`: old OSDs out, new disks in, the data moved once
//! (docs/design/swap.md): ask for one, preview it, follow it, stop it.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam, QueryParams};
use crate::daemon::swap::SwapRequest;
use crate::daemon::Daemon;
use crate::domain::copies::Accept;
use crate::domain::swap::window::degraded_window;
use crate::domain::swap::Phase;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::swaps::{SwapBody, SwapDetail, SwapPreview, SwapQuery, SwapStatus, SwapWindow};

fn request(b: SwapBody) -> SwapRequest {
    SwapRequest {
        osds: b.osds,
        host: b.host,
        devices: b.devices,
        way: b.way,
        accept: Accept { single_copy: b.accept_single_copy, inactive: b.accept_inactive },
        method: b.method,
        encrypted: b.encrypted,
    }
}

#[utoipa::path(post, path = "/api/v1/swaps", tag = "osds", request_body = SwapBody,
    responses((status = 201, body = SwapStatus), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub async fn create(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<SwapBody>,
) -> Result<(StatusCode, Json<SwapStatus>), ApiError> {
    let (rec, _) = d.swaps().schedule(&request(b)).await?;
    Ok((StatusCode::CREATED, Json(SwapStatus::from(&rec))))
}

/// What each way would cost and why the asked one would be refused;
/// nothing changes. It needs `operate` like the swap (it runs Ceph's tools).
#[utoipa::path(post, path = "/api/v1/swaps/preview", tag = "osds", request_body = SwapBody,
    responses((status = 200, body = SwapPreview), (status = 400, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn preview(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<SwapBody>,
) -> Result<Json<SwapPreview>, ApiError> {
    let (swap, costs, refusals) = d.swaps().preview(&request(b)).await?;
    Ok(Json(SwapPreview::of(&swap, &costs, refusals)))
}

#[utoipa::path(get, path = "/api/v1/swaps", tag = "osds", params(SwapQuery),
    responses((status = 200, body = [SwapStatus])))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<SwapQuery>,
) -> Result<Json<Vec<SwapStatus>>, ApiError> {
    let recs = d.swaps().list(q.history.unwrap_or(20)).await?;
    Ok(Json(recs.iter().map(SwapStatus::from).collect()))
}

#[utoipa::path(get, path = "/api/v1/swaps/{swap_id}", tag = "osds", params(("swap_id" = i64, Path)),
    responses((status = 200, body = SwapDetail), (status = 404, body = ErrorBody)))]
pub async fn detail(State(d): State<Arc<Daemon>>, PathParam(id): PathParam<i64>) -> Result<Json<SwapDetail>, ApiError> {
    let (rec, actions) = d.swaps().get(id).await?;
    Ok(Json(SwapDetail {
        status: SwapStatus::from(&rec),
        actions: actions.iter().map(Into::into).collect(),
        degraded_window: degraded_window(&actions, rec.finished_at.filter(|_| rec.state.phase == Phase::Done))
            .map(SwapWindow::from),
    }))
}

#[utoipa::path(post, path = "/api/v1/swaps/{swap_id}/stop", tag = "osds", params(("swap_id" = i64, Path)),
    responses((status = 200, body = SwapStatus), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn stop(State(d): State<Arc<Daemon>>, PathParam(id): PathParam<i64>) -> Result<Json<SwapStatus>, ApiError> {
    Ok(Json(SwapStatus::from(&d.swaps().stop(id).await?)))
}
