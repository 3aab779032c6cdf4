//! The agent's HTTP API (`wire::agent` has the types): routes, handlers and
//! the JSON error answer. Handlers stay thin; the policy lives in
//! `ceph_volume_args`, the scanning in `inventory`.

use std::time::Instant;

use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Json, Router};
use tower_http::trace::TraceLayer;

use super::auth::require_token;
use super::ceph_volume_args::{self, Refusal};
use super::config::is_loop_device;
use super::inventory::{device_paths, InventoryError};
use super::process::RunError;
use super::state::AgentState;
use crate::wire::agent::{AgentErrorBody, CephVolumeRequest, CommandResult, InventoryReport};

/// Requests are small JSON documents; anything bigger is a mistake.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

pub fn build_router(state: AgentState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/v1/inventory", get(inventory))
        .route("/v1/ceph-volume", post(ceph_volume))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.token.clone(), require_token))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Every refusal and failure: a status and a message saying what was wrong.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into() }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(status = self.status.as_u16(), "{}", self.message);
        }
        let mut resp = (self.status, Json(AgentErrorBody { error: self.message })).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> Self {
        ApiError::bad_request(r.to_string())
    }
}

impl From<InventoryError> for ApiError {
    fn from(e: InventoryError) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        ApiError::new(r.status(), format!("bad request body: {}", r.body_text()))
    }
}

async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no such endpoint: {method} {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not allowed on {}", uri.path()))
}

async fn inventory(State(s): State<AgentState>) -> Result<Json<InventoryReport>, ApiError> {
    Ok(Json(s.inventory.take().await?))
}

async fn ceph_volume(
    State(s): State<AgentState>,
    body: Result<Json<CephVolumeRequest>, JsonRejection>,
) -> Result<Json<CommandResult>, ApiError> {
    let Json(req) = body?;
    if let Some(why) = s.inventory.refusal() {
        return Err(ApiError::conflict(why));
    }
    ceph_volume_args::check_shape(&req.args)?;
    let busy = s.busy.clone().try_lock_owned().map_err(|_| {
        ApiError::conflict("another ceph-volume command is still running on this host; retry when it has finished")
    })?;
    let report = s.inventory.take().await?;
    let devices = ceph_volume_args::check_devices(&req.args, &device_paths(&report), s.inventory.allowed.as_ref())?;

    let mut env = Vec::new();
    if let Some(affinity) = req.osdspec_affinity.filter(|a| !a.is_empty()) {
        env.push(("CEPH_VOLUME_OSDSPEC_AFFINITY".to_string(), affinity));
    }
    // Only named loop devices pass the checks above; ceph-volume refuses
    // loop devices unless told to take them.
    if devices.iter().any(|d| is_loop_device(d)) {
        env.push(("CEPH_VOLUME_ALLOW_LOOP_DEVICES".to_string(), "1".to_string()));
    }
    let cv = s.ceph_volume.clone();
    let args = req.args;
    // Runs in its own task so that a client that gives up (or a restart of
    // the daemon) does not kill ceph-volume halfway through making an OSD.
    let job = tokio::spawn(async move {
        let _busy = busy;
        let shown = super::ceph_volume::command_line(&cv.program, &args, &env);
        tracing::info!(command = %shown, "running ceph-volume");
        let started = Instant::now();
        let result = cv.run(&args, &env).await;
        match &result {
            Ok(r) if r.exit_code == 0 => {
                tracing::info!(command = %shown, seconds = started.elapsed().as_secs(), "ceph-volume finished")
            }
            Ok(r) => tracing::warn!(
                command = %shown,
                exit_code = r.exit_code,
                stderr = %r.stderr.lines().next_back().unwrap_or(""),
                "ceph-volume failed"
            ),
            Err(e) => tracing::error!(command = %shown, "{e}"),
        }
        result
    });
    match job.await {
        Ok(Ok(result)) => Ok(Json(result)),
        Ok(Err(e @ RunError::TimedOut { .. })) => Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, e.to_string())),
        Ok(Err(e)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the ceph-volume run stopped: {e}"))),
    }
}
