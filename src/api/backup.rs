//! `/api/v1/backup` (admin): the daemon copies its live database to a file
//! on its own machine. For a database in a file `osdkeeper backup` can also
//! copy it without the daemon; one kept in RADOS only this way.

use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::{Extension, Json};

use super::error::ApiError;
use super::json_body::JsonBody;
use crate::store::backup::BackupError;
use crate::store::Store;
use crate::wire::api::backup::{BackupDone, BackupRequest};
use crate::wire::api::error::ErrorBody;
use crate::wire::api::tokens::Forbidden;

#[utoipa::path(post, path = "/api/v1/backup", tag = "backup", request_body = BackupRequest,
    responses((status = 201, description = "the copy, checked", body = BackupDone),
        (status = 400, body = ErrorBody), (status = 403, body = Forbidden), (status = 500, body = ErrorBody)))]
pub async fn backup(
    Extension(store): Extension<Arc<Store>>,
    JsonBody(b): JsonBody<BackupRequest>,
) -> Result<(StatusCode, Json<BackupDone>), ApiError> {
    let facts = store.backup_to(Path::new(&b.file)).await.map_err(|e| match e {
        BackupError::Refused { .. } => ApiError::Status(StatusCode::BAD_REQUEST, e.to_string()),
        other => {
            tracing::error!("backup to {}: {other}", b.file);
            ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR, other.to_string())
        }
    })?;
    tracing::info!(file = b.file, hosts = facts.hosts, bytes = facts.bytes, "backed the database up");
    let done = BackupDone::new(b.file, facts);
    Ok((StatusCode::CREATED, Json(done)))
}
