//! The agent's JSON error answer (`wire::agent::AgentErrorBody`): a status,
//! the code the daemon acts on, and what went wrong in words; and which
//! answer each module's errors make.

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::agent_server::ceph_volume::args::Refusal;
use crate::agent_server::disks::probe::ProbeError;
use crate::agent_server::disks::replace_header::HeaderError;
use crate::agent_server::disks::zap::ZapError;
use crate::agent_server::host_lock::BUSY;
use crate::agent_server::inventory::InventoryError;
use crate::agent_server::osd::list::ListError;
use crate::agent_server::osd::start::StartError;
use crate::agent_server::osd::stop::StopError;
use crate::agent_server::process::RunError;
use crate::wire::agent::{AgentErrorBody, AgentErrorCode};

/// Every refusal and failure: a status, a code the daemon acts on, and a
/// message saying what was wrong.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: AgentErrorCode,
    pub message: String,
}

impl ApiError {
    /// An answer whose code is its status's.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError { status, code: AgentErrorCode::of_status(status.as_u16()), message: message.into() }
    }

    /// Another command that changes the host's disks or daemons runs.
    pub fn busy() -> Self {
        ApiError { status: StatusCode::CONFLICT, code: AgentErrorCode::Busy, message: BUSY.to_string() }
    }

    /// What the request named is not what is on the host (another disk,
    /// another OSD's volumes or daemon): refused for good.
    pub fn mismatch(message: impl Into<String>) -> Self {
        ApiError { status: StatusCode::CONFLICT, code: AgentErrorCode::IdentityMismatch, message: message.into() }
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
        let body = AgentErrorBody { error: self.message, code: Some(self.code) };
        let mut resp = (self.status, Json(body)).into_response();
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

impl From<StopError> for ApiError {
    fn from(e: StopError) -> Self {
        if matches!(e, StopError::OtherOsd { .. }) {
            return ApiError::mismatch(e.to_string());
        }
        let status = match &e {
            StopError::StillRunning { .. } | StopError::Run { source: RunError::TimedOut { .. }, .. } => {
                StatusCode::GATEWAY_TIMEOUT
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<StartError> for ApiError {
    fn from(e: StartError) -> Self {
        let status = match &e {
            StartError::NotRunning { .. } | StartError::Run { source: RunError::TimedOut { .. }, .. } => {
                StatusCode::GATEWAY_TIMEOUT
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<ListError> for ApiError {
    fn from(e: ListError) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl From<ZapError> for ApiError {
    fn from(e: ZapError) -> Self {
        match e {
            ZapError::AgentBusy => ApiError::busy(),
            e @ (ZapError::NotExpected { .. } | ZapError::LvsElsewhere { .. }) => ApiError::mismatch(e.to_string()),
            e => ApiError::new(e.status(), e.to_string()),
        }
    }
}

impl From<ProbeError> for ApiError {
    fn from(e: ProbeError) -> Self {
        match e {
            ProbeError::AgentBusy => ApiError::busy(),
            e => ApiError::new(e.status(), e.to_string()),
        }
    }
}

impl From<HeaderError> for ApiError {
    fn from(e: HeaderError) -> Self {
        match e {
            HeaderError::AgentBusy => ApiError::busy(),
            e => ApiError::new(e.status(), e.to_string()),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::bad_request(format!("bad query: {}", r.body_text()))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        ApiError::new(r.status(), format!("bad request body: {}", r.body_text()))
    }
}
