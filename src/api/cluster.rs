//! `GET /api/v1/cluster/status`: health, checks, PG states and rates.

use std::sync::Arc;

use axum::extract::State;
use axum::Json;

use crate::daemon::Daemon;
use crate::wire::api::cluster::ClusterStatus;

/// Always 200: a cluster that cannot be read is reported in `error`, since
/// the strip shows that too.
#[utoipa::path(get, path = "/api/v1/cluster/status", tag = "cluster", responses((status = 200, body = ClusterStatus)))]
pub async fn status(State(d): State<Arc<Daemon>>) -> Json<ClusterStatus> {
    Json(d.cluster_status().await)
}
