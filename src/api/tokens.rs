//! `/api/v1/tokens`: named API tokens (admin only, see `domain::auth`), and
//! `/api/v1/whoami`: the caller's token, for the dashboard.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam};
use crate::daemon::Daemon;
use crate::wire::api::error::ErrorBody;
use crate::wire::api::tokens::{CreatedToken, Forbidden, NewToken, TokenInfo, WhoAmI};

#[utoipa::path(get, path = "/api/v1/tokens", tag = "tokens",
    responses((status = 200, description = "the tokens in force, never their secrets", body = [TokenInfo]),
        (status = 403, body = Forbidden)))]
pub async fn list(State(d): State<Arc<Daemon>>) -> Result<Json<Vec<TokenInfo>>, ApiError> {
    Ok(Json(d.tokens.tokens().await?))
}

#[utoipa::path(post, path = "/api/v1/tokens", tag = "tokens", request_body = NewToken,
    responses((status = 201, description = "the secret, sent this once", body = CreatedToken),
        (status = 400, body = ErrorBody), (status = 403, body = Forbidden), (status = 409, body = ErrorBody)))]
pub async fn create(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<NewToken>,
) -> Result<(StatusCode, Json<CreatedToken>), ApiError> {
    Ok((StatusCode::CREATED, Json(d.tokens.create_token(&b.name, b.role).await?)))
}

#[utoipa::path(delete, path = "/api/v1/tokens/{name}", tag = "tokens", params(("name" = String, Path)),
    responses((status = 204, description = "refused from now on"), (status = 403, body = Forbidden),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn revoke(State(d): State<Arc<Daemon>>, PathParam(name): PathParam<String>) -> Result<StatusCode, ApiError> {
    d.tokens.revoke_token(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Set by the authorization layer for every request it lets through.
#[utoipa::path(get, path = "/api/v1/whoami", tag = "tokens", responses((status = 200, body = WhoAmI)))]
pub async fn whoami(Extension(who): Extension<WhoAmI>) -> Json<WhoAmI> {
    Json(who)
}
