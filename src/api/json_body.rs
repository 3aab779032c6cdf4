//! Body and query-string extractors whose rejections are JSON errors that
//! say what was wrong (axum's default answers plain text).

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(JsonBody(v)),
            Err(rejection) => {
                let status = rejection.status();
                Err(ApiError::Status(status, format!("invalid request body: {}", rejection.body_text())))
            }
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
                let status = rejection.status();
                Err(ApiError::Status(status, format!("cannot read the request body: {}", rejection.body_text())))
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
            Err(rejection) => Err(ApiError::Status(rejection.status(), rejection.body_text())),
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
            Err(rejection) => Err(ApiError::Status(rejection.status(), rejection.body_text())),
        }
    }
}
