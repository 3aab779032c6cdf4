//! `/api/v1/hosts`: add, list, remove and label hosts.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::error::{ApiError, ErrorBody};
use super::json_body::{JsonBody, QueryParams};
use crate::daemon::Daemon;
use crate::store::Host;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddHost {
    /// Host name (letters, digits, '-' and '.').
    pub name: String,
    /// HOST:PORT of the host's agent.
    pub addr: String,
    #[serde(default)]
    pub labels: Vec<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LabelBody {
    pub label: String,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct HostQuery {
    /// true: only the hosts whose agent does not answer; false: only the others.
    pub unreachable: Option<bool>,
    /// Page through the hosts (in the order they were added): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

#[utoipa::path(get, path = "/api/v1/hosts", tag = "hosts", params(HostQuery),
    responses((status = 200, body = [Host],
        headers(("x-total-count" = usize, description = "hosts matching the filter, before offset and limit")))))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<HostQuery>,
) -> Result<([(&'static str, String); 1], Json<Vec<Host>>), ApiError> {
    let mut hosts = d.store.hosts().await?;
    if let Some(down) = q.unreachable {
        hosts.retain(|h| h.unreachable_since.is_some() == down);
    }
    let total = hosts.len();
    let hosts = hosts.into_iter().skip(q.offset.unwrap_or(0)).take(q.limit.unwrap_or(usize::MAX)).collect();
    Ok(([("x-total-count", total.to_string())], Json(hosts)))
}

#[utoipa::path(post, path = "/api/v1/hosts", tag = "hosts", request_body = AddHost,
    responses((status = 201, body = Host), (status = 400, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn add(
    State(d): State<Arc<Daemon>>,
    JsonBody(body): JsonBody<AddHost>,
) -> Result<(StatusCode, Json<Host>), ApiError> {
    let host = d.add_host(&body.name, &body.addr, &body.labels).await?;
    // Fetch its inventory right away rather than at the next poll.
    let daemon = d.clone();
    let h = host.clone();
    tokio::spawn(async move {
        let _ = daemon.poll_host(&h).await;
    });
    Ok((StatusCode::CREATED, Json(host)))
}

#[utoipa::path(delete, path = "/api/v1/hosts/{name}", tag = "hosts", params(("name" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn remove(State(d): State<Arc<Daemon>>, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    d.remove_host(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/api/v1/hosts/{name}/labels", tag = "hosts", params(("name" = String, Path)),
    request_body = LabelBody, responses((status = 200, body = Host), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn add_label(
    State(d): State<Arc<Daemon>>,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<LabelBody>,
) -> Result<Json<Host>, ApiError> {
    Ok(Json(d.label(&name, &body.label, true).await?))
}

#[utoipa::path(delete, path = "/api/v1/hosts/{name}/labels/{label}", tag = "hosts",
    params(("name" = String, Path), ("label" = String, Path)),
    responses((status = 200, body = Host), (status = 404, body = ErrorBody)))]
pub async fn remove_label(
    State(d): State<Arc<Daemon>>,
    Path((name, label)): Path<(String, String)>,
) -> Result<Json<Host>, ApiError> {
    Ok(Json(d.label(&name, &label, false).await?))
}
