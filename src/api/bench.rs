//! `/api/v1/benchmarks`: queue per-OSD benches and read their results with
//! the outliers among comparable OSDs.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::ApiError;
use super::json_body::{JsonBody, QueryParams};
use crate::daemon::{Daemon, OsdBenchRequest};
use crate::wire::api::bench::{OsdBench, OsdBenchBody, OsdBenchQuery};
use crate::wire::api::error::ErrorBody;

#[utoipa::path(post, path = "/api/v1/benchmarks/osds", tag = "benchmarks", request_body = OsdBenchBody,
    responses((status = 202, body = [OsdBench]), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn bench_osds(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<OsdBenchBody>,
) -> Result<(StatusCode, Json<Vec<OsdBench>>), ApiError> {
    let req = OsdBenchRequest { ids: b.ids, all: b.all, bytes: b.bytes, block_size: b.block_size };
    Ok((StatusCode::ACCEPTED, Json(d.schedule_osd_benches(&req).await?)))
}

#[utoipa::path(get, path = "/api/v1/benchmarks/osds", tag = "benchmarks", params(OsdBenchQuery),
    responses((status = 200, body = [OsdBench])))]
pub async fn osd_results(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<OsdBenchQuery>,
) -> Result<Json<Vec<OsdBench>>, ApiError> {
    Ok(Json(d.osd_benches(&q).await?))
}
