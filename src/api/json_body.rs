//! Body and query-string extractors whose rejections are JSON errors that
//! say what was wrong (axum's default answers plain text).

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::wire::json_stream::shorten_quoted;

/// The longest extractor message passed on; serde's are far shorter unless
/// they quote what was sent.
const MAX_MESSAGE_CHARS: usize = 500;

/// An extractor's rejection as an API error. serde quotes the value it did
/// not expect in full (`"..."`, and an unknown key in backticks), and a body
/// may hold a 1 MiB string: the message keeps an excerpt of each quoted
/// value, and is cut if still long.
fn rejected(status: axum::http::StatusCode, what: &str, text: String) -> ApiError {
    let mut message = shorten_quoted(&text);
    if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE_CHARS) {
        message.truncate(cut);
        message.push_str("… (cut)");
    }
    ApiError::Status(status, format!("{what}{message}"))
}

pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(rejection) => Err(rejected(rejection.status(), "invalid request body: ", rejection.body_text())),
        }
    }
}

/// The raw body, with JSON errors (too large: 413 naming the limit).
pub struct RawBody(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(RawBody(b)),
            Err(rejection) => {
                Err(rejected(rejection.status(), "cannot read the request body: ", rejection.body_text()))
            }
        }
    }
}

/// The query string, with JSON errors (`?limit=abc`: 400 naming the parameter).
pub struct QueryParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Query::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Query(v)) => Ok(QueryParams(v)),
            Err(rejection) => Err(rejected(rejection.status(), "", rejection.body_text())),
        }
    }
}

/// A path parameter, with JSON errors (`/api/v1/osds/removals/abc`: 400
/// naming what was wrong; axum's own answer is plain text).
pub struct PathParam<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParam<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<T>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(v)) => Ok(PathParam(v)),
            Err(rejection) => Err(rejected(rejection.status(), "", rejection.body_text())),
        }
    }
}
