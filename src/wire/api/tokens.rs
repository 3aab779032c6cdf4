//! `/api/v1/tokens` (named API tokens, admin only) and `/api/v1/whoami`
//! (who the caller's token is, so the dashboard shows only what it may do).

use serde::{Deserialize, Serialize};

pub use crate::domain::auth::Role;

/// `POST /api/v1/tokens`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    pub name: String,
    pub role: Role,
}

/// A token as `token ls` shows it: never its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TokenInfo {
    pub name: String,
    pub role: Role,
    /// ms since the epoch; none for the bootstrap token (it lives in the daemon's configuration).
    pub created_at: Option<i64>,
    /// The token that created it.
    pub created_by: Option<String>,
    /// ms since the epoch, to the minute (a use is recorded at most once a minute).
    pub last_used_at: Option<i64>,
    /// True for the bootstrap admin from `OSDKEEPER_TOKEN` (or `token_file`), which cannot be revoked here.
    #[serde(default)]
    pub configured: bool,
}

/// The answer to a creation: the only time the secret is ever sent.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CreatedToken {
    #[serde(flatten)]
    pub token: TokenInfo,
    pub secret: String,
}

/// `GET /api/v1/whoami`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WhoAmI {
    /// The token's name (`anonymous` on a daemon without tokens).
    pub name: String,
    pub role: Role,
    /// No token exists: loopback only, anyone is an admin.
    pub open: bool,
}

/// A 403: the token is known but its role is too small. The `error` is
/// what every error body has; the roles say what would do.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Forbidden {
    pub error: String,
    pub required_role: Role,
    pub role: Role,
}
