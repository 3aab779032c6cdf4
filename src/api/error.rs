//! The API's one error type: every failure becomes JSON `{"error": "..."}`
//! with a status that says whose fault it is; internals are logged, never sent.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::daemon::apply::{ApplyError, InvalidSpecs};
use crate::daemon::DaemonError;

#[derive(Debug)]
pub enum ApiError {
    Status(StatusCode, String),
    /// Invalid spec documents: 422 with each error.
    InvalidSpecs(InvalidSpecs),
}

/// The error body, for the OpenAPI document.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// What was wrong, naming the field and value where there is one.
    pub error: String,
}

impl ApiError {
    pub fn bad_request(msg: impl Into<String>) -> Self {
        ApiError::Status(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl From<DaemonError> for ApiError {
    fn from(e: DaemonError) -> Self {
        match e {
            DaemonError::BadRequest(m) => ApiError::Status(StatusCode::BAD_REQUEST, m),
            DaemonError::NotFound(m) => ApiError::Status(StatusCode::NOT_FOUND, m),
            DaemonError::Conflict(m) => ApiError::Status(StatusCode::CONFLICT, m),
            DaemonError::Unprocessable(m) => ApiError::Status(StatusCode::UNPROCESSABLE_ENTITY, m),
            DaemonError::Internal(m) => {
                tracing::error!("internal error: {m}");
                ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR, "internal error; see the daemon's log".into())
            }
            DaemonError::Store(e) => {
                tracing::error!("database error: {e}");
                ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR, "database error; see the daemon's log".into())
            }
        }
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        DaemonError::from(e).into()
    }
}

impl From<ApplyError> for ApiError {
    fn from(e: ApplyError) -> Self {
        match e {
            ApplyError::Invalid(i) => ApiError::InvalidSpecs(i),
            ApplyError::Other(d) => d.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body): (StatusCode, Value) = match self {
            ApiError::Status(s, m) => (s, json!({ "error": m })),
            ApiError::InvalidSpecs(i) => (StatusCode::UNPROCESSABLE_ENTITY, i.body()),
        };
        (status, Json(body)).into_response()
    }
}
