//! `/api/v1/deployments`: OSDs being made from applied specs.

use std::sync::Arc;

use axum::extract::State;
use axum::Json;

use super::error::ApiError;
use super::json_body::{PathParam, QueryParams};
use crate::daemon::Daemon;
use crate::wire::api::deployments::{DeploymentDetail, DeploymentQuery, DeploymentStatus};
use crate::wire::api::error::ErrorBody;

#[utoipa::path(get, path = "/api/v1/deployments", tag = "osds", params(DeploymentQuery),
    responses((status = 200, body = [DeploymentStatus])))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<DeploymentQuery>,
) -> Result<Json<Vec<DeploymentStatus>>, ApiError> {
    Ok(Json(d.deployments.deployments(&q).await?))
}

#[utoipa::path(get, path = "/api/v1/deployments/{deployment_id}", tag = "osds", params(("deployment_id" = i64, Path)),
    responses((status = 200, body = DeploymentDetail), (status = 404, body = ErrorBody)))]
pub async fn detail(
    State(d): State<Arc<Daemon>>,
    PathParam(id): PathParam<i64>,
) -> Result<Json<DeploymentDetail>, ApiError> {
    Ok(Json(d.deployments.deployment_detail(id).await?))
}
