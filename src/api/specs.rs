//! `/api/v1/specs`: apply (or dry-run) OSD specs posted as YAML, list and remove them.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ApiError, ErrorBody};
use super::json_body::{QueryParams, RawBody};
use crate::daemon::Daemon;
use crate::store::SpecRecord;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct ApplyQuery {
    /// Only show what would happen; store nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Poll the hosts the specs match before planning.
    #[serde(default)]
    pub refresh: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SpecDetail {
    #[serde(flatten)]
    pub spec: SpecRecord,
    /// (version, action, at) of every change.
    pub history: Vec<(i64, String, i64)>,
}

/// The body is the YAML spec file itself (one or more documents). The answer
/// is the dry-run: `errors`, `preview` rows (each with `inventory_age_s`),
/// `notes`, `hosts`, `hosts_without_inventory`, `refresh_failures`, and
/// `stored` when applied.
#[utoipa::path(post, path = "/api/v1/specs", tag = "specs", params(ApplyQuery),
    request_body(content = String, content_type = "application/yaml", description = "OSD spec YAML (cephadm format)"),
    responses((status = 200, description = "dry-run", body = Object), (status = 201, description = "applied", body = Object),
        (status = 400, body = ErrorBody), (status = 422, description = "invalid documents", body = Object)))]
pub async fn apply(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<ApplyQuery>,
    RawBody(body): RawBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let text =
        std::str::from_utf8(&body).map_err(|e| ApiError::bad_request(format!("the body is not UTF-8 text: {e}")))?;
    let outcome = d.apply(text, q.dry_run, q.refresh).await?;
    let status = if q.dry_run { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(outcome.body)))
}

#[utoipa::path(get, path = "/api/v1/specs", tag = "specs", responses((status = 200, body = [SpecRecord])))]
pub async fn list(State(d): State<Arc<Daemon>>) -> Result<Json<Vec<SpecRecord>>, ApiError> {
    Ok(Json(d.store.specs().await?))
}

#[utoipa::path(get, path = "/api/v1/specs/{service_name}", tag = "specs", params(("service_name" = String, Path)),
    responses((status = 200, body = SpecDetail), (status = 404, body = ErrorBody)))]
pub async fn get(State(d): State<Arc<Daemon>>, Path(name): Path<String>) -> Result<Json<SpecDetail>, ApiError> {
    let spec = d.store.spec(&name).await?;
    let history = d.store.spec_history(&name).await?;
    Ok(Json(SpecDetail { spec, history }))
}

#[utoipa::path(delete, path = "/api/v1/specs/{service_name}", tag = "specs", params(("service_name" = String, Path)),
    responses((status = 200, body = SpecRecord), (status = 404, body = ErrorBody)))]
pub async fn remove(State(d): State<Arc<Daemon>>, Path(name): Path<String>) -> Result<Json<SpecRecord>, ApiError> {
    Ok(Json(d.remove_spec(&name).await?))
}
