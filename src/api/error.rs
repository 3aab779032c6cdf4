//! The API's one error type: every failure becomes JSON `{"error": "..."}`
//! with a status that says whose fault it is; internals are logged, never sent.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::daemon::{invalid_specs_message, DaemonError};
use crate::domain::spec::SpecError;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::preview::SpecErrorJson;

#[derive(Debug)]
pub enum ApiError {
    Status(StatusCode, String),
    /// Invalid spec documents: 422 with each error.
    InvalidSpecs(String, Vec<SpecError>),
}

impl ApiError {
    pub fn bad_request(msg: impl Into<String>) -> Self {
        ApiError::Status(StatusCode::BAD_REQUEST, msg.into())
    }
}

impl From<DaemonError> for ApiError {
    fn from(e: DaemonError) -> Self {
        match e {
            DaemonError::Invalid(m) => ApiError::Status(StatusCode::BAD_REQUEST, m),
            DaemonError::NotFound(m) => ApiError::Status(StatusCode::NOT_FOUND, m),
            DaemonError::Conflict(m) | DaemonError::RefusedUnsafe(m) => ApiError::Status(StatusCode::CONFLICT, m),
            DaemonError::CannotAct(m) => ApiError::Status(StatusCode::UNPROCESSABLE_ENTITY, m),
            DaemonError::InvalidSpecs(errors) => ApiError::InvalidSpecs(invalid_specs_message(&errors), errors),
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            ApiError::Status(s, error) => (s, ErrorBody { error, errors: Vec::new() }),
            ApiError::InvalidSpecs(error, errors) => {
                let errors = errors.iter().map(SpecErrorJson::from).collect();
                (StatusCode::UNPROCESSABLE_ENTITY, ErrorBody { error, errors })
            }
        };
        (status, Json(body)).into_response()
    }
}
