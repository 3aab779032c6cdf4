//! `/api/v1/devices`: every host's devices as its agent last reported them,
//! with the inventory's age; devices held back from specs; zap; disk probes.

use std::sync::Arc;

use axum::extract::State;
use axum::Json;

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam, QueryParams};
use super::{paged, Paged};
use crate::daemon::Daemon;
use crate::wire::api::devices::{
    DeviceQuery, DeviceRef, Hold, HostDevices, ReplaceBody, Replacement, ReplacementCleared, ZapBody,
};
use crate::wire::api::error::ErrorBody;
use crate::wire::api::probes::{DiskProbe, ProbeBody, ProbeQuery};

#[utoipa::path(get, path = "/api/v1/devices", tag = "devices", params(DeviceQuery),
    responses((status = 200, body = [HostDevices],
        headers(("x-total-count" = usize, description = "hosts matching the filters, before offset and limit"))),
        (status = 404, body = ErrorBody)))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<DeviceQuery>,
) -> Result<Paged<HostDevices>, ApiError> {
    Ok(paged(d.inventory.devices(&q).await?))
}

#[utoipa::path(get, path = "/api/v1/devices/held", tag = "devices", responses((status = 200, body = [Hold])))]
pub async fn held(State(d): State<Arc<Daemon>>) -> Result<Json<Vec<Hold>>, ApiError> {
    Ok(Json(d.inventory.held_devices().await?))
}

#[utoipa::path(post, path = "/api/v1/devices/release", tag = "devices", request_body = DeviceRef,
    responses((status = 200, body = Hold), (status = 404, body = ErrorBody)))]
pub async fn release(State(d): State<Arc<Daemon>>, JsonBody(b): JsonBody<DeviceRef>) -> Result<Json<Hold>, ApiError> {
    Ok(Json(d.inventory.release_device(&b.host, &b.path).await?))
}

#[utoipa::path(post, path = "/api/v1/devices/zap", tag = "devices", request_body = ZapBody,
    responses((status = 200, description = "what the agent did", body = [String]), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn zap(State(d): State<Arc<Daemon>>, JsonBody(b): JsonBody<ZapBody>) -> Result<Json<Vec<String>>, ApiError> {
    Ok(Json(d.inventory.zap_device(&b.host, &b.path, b.force).await?))
}

/// Every OSD with a volume on the disk removed with `--replace --zap`, the
/// slot (and the OSDs' disks no other OSD uses) held until a new disk is in
/// it; refused without `yes_i_really_mean_it` unless `dry_run`.
#[utoipa::path(post, path = "/api/v1/devices/replace", tag = "devices", request_body = ReplaceBody,
    responses((status = 200, body = Replacement), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn replace(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<ReplaceBody>,
) -> Result<Json<Replacement>, ApiError> {
    Ok(Json(d.removals.replace_device(&b).await?))
}

/// Undoes `replace`: its removals stopped where they can be, its holds lifted.
#[utoipa::path(post, path = "/api/v1/devices/replace/clear", tag = "devices", request_body = DeviceRef,
    responses((status = 200, body = ReplacementCleared), (status = 404, body = ErrorBody)))]
pub async fn replace_clear(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<DeviceRef>,
) -> Result<Json<ReplacementCleared>, ApiError> {
    Ok(Json(d.removals.clear_device_replacement(&b.host, &b.path).await?))
}

/// Queues fio on a blank disk; refused without `yes_i_really_mean_it`, for
/// a disk that is not blank or holds an OSD, and while the disk has a probe
/// queued or running. The answer is the probe as stored (`queued`).
#[utoipa::path(post, path = "/api/v1/devices/probe", tag = "devices", request_body = ProbeBody,
    responses((status = 200, body = DiskProbe), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody)))]
pub async fn probe(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<ProbeBody>,
) -> Result<Json<DiskProbe>, ApiError> {
    Ok(Json(d.benchmarks.schedule_probe(&b.host, &b.path, b.mode, b.yes_i_really_mean_it).await?))
}

#[utoipa::path(get, path = "/api/v1/devices/probes", tag = "devices", params(ProbeQuery),
    responses((status = 200, body = [DiskProbe])))]
pub async fn probes(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<ProbeQuery>,
) -> Result<Json<Vec<DiskProbe>>, ApiError> {
    Ok(Json(d.benchmarks.disk_probes(&q).await?))
}

#[utoipa::path(get, path = "/api/v1/devices/probes/{probe_id}", tag = "devices",
    params(("probe_id" = i64, Path)), responses((status = 200, body = DiskProbe), (status = 404, body = ErrorBody)))]
pub async fn probe_detail(
    State(d): State<Arc<Daemon>>,
    PathParam(id): PathParam<i64>,
) -> Result<Json<DiskProbe>, ApiError> {
    Ok(Json(d.benchmarks.disk_probe(id).await?))
}
