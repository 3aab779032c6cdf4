//! `/api/v1/specs`: apply (or dry-run) OSD specs posted as YAML, list and remove them.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::ApiError;
use super::json_body::{PathParam, QueryParams, RawBody};
use crate::daemon::Daemon;
use crate::domain::spec::decode_spec;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::specs::{ApplyQuery, ApplyResponse, SpecDetail, SpecListing, SpecRecord};

/// The body is the YAML spec file itself (one or more documents). The answer
/// is the dry-run, with `stored` when applied.
#[utoipa::path(post, path = "/api/v1/specs", tag = "specs", params(ApplyQuery),
    request_body(content = String, content_type = "application/yaml", description = "OSD spec YAML (cephadm format)"),
    responses((status = 200, description = "dry-run", body = ApplyResponse), (status = 201, description = "applied", body = ApplyResponse),
        (status = 400, body = ErrorBody), (status = 422, description = "invalid documents", body = ErrorBody)))]
pub async fn apply(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<ApplyQuery>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<ApplyResponse>), ApiError> {
    let text = decode_spec(&body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let answer = d.specs.apply(text, &q).await?;
    let status = if q.dry_run { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(answer)))
}

#[utoipa::path(get, path = "/api/v1/specs", tag = "specs", responses((status = 200, body = [SpecListing])))]
pub async fn list(State(d): State<Arc<Daemon>>) -> Result<Json<Vec<SpecListing>>, ApiError> {
    Ok(Json(d.specs.specs().await?))
}

#[utoipa::path(get, path = "/api/v1/specs/{service_name}", tag = "specs", params(("service_name" = String, Path)),
    responses((status = 200, body = SpecDetail), (status = 404, body = ErrorBody)))]
pub async fn get(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
) -> Result<Json<SpecDetail>, ApiError> {
    Ok(Json(d.specs.spec(&name).await?))
}

#[utoipa::path(delete, path = "/api/v1/specs/{service_name}", tag = "specs", params(("service_name" = String, Path)),
    responses((status = 200, body = SpecRecord), (status = 404, body = ErrorBody)))]
pub async fn remove(
    State(d): State<Arc<Daemon>>,
    PathParam(name): PathParam<String>,
) -> Result<Json<SpecRecord>, ApiError> {
    Ok(Json(d.specs.remove_spec(&name).await?))
}
