//! `/api/v1/benchmarks`: queue per-OSD benches and read their results with
//! the outliers among comparable OSDs; run cluster benchmarks and read
//! them back, one or two side by side.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::error::ApiError;
use super::json_body::{JsonBody, PathParam, QueryParams};
use crate::daemon::{Daemon, OsdBenchRequest};
use crate::wire::api::bench::{
    ClusterBenchBody, ClusterComparison, ClusterRun, ClusterRunQuery, CompareQuery, OsdBench, OsdBenchBody,
    OsdBenchQuery,
};
use crate::wire::api::error::ErrorBody;

#[utoipa::path(post, path = "/api/v1/benchmarks/osds", tag = "benchmarks", request_body = OsdBenchBody,
    responses((status = 202, body = [OsdBench]), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn bench_osds(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<OsdBenchBody>,
) -> Result<(StatusCode, Json<Vec<OsdBench>>), ApiError> {
    let req = OsdBenchRequest { ids: b.ids, all: b.all, bytes: b.bytes, block_size: b.block_size };
    Ok((StatusCode::ACCEPTED, Json(d.benchmarks.schedule_osd_benches(&req).await?)))
}

#[utoipa::path(get, path = "/api/v1/benchmarks/osds", tag = "benchmarks", params(OsdBenchQuery),
    responses((status = 200, body = [OsdBench])))]
pub async fn osd_results(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<OsdBenchQuery>,
) -> Result<Json<Vec<OsdBench>>, ApiError> {
    Ok(Json(d.benchmarks.osd_benches(&q).await?))
}

#[utoipa::path(post, path = "/api/v1/benchmarks/cluster", tag = "benchmarks", request_body = ClusterBenchBody,
    responses((status = 202, body = ClusterRun), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn bench_cluster(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<ClusterBenchBody>,
) -> Result<(StatusCode, Json<ClusterRun>), ApiError> {
    Ok((StatusCode::ACCEPTED, Json(d.benchmarks.schedule_cluster_bench(&b).await?)))
}

#[utoipa::path(get, path = "/api/v1/benchmarks/cluster", tag = "benchmarks", params(ClusterRunQuery),
    responses((status = 200, body = [ClusterRun])))]
pub async fn cluster_runs(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<ClusterRunQuery>,
) -> Result<Json<Vec<ClusterRun>>, ApiError> {
    Ok(Json(d.benchmarks.cluster_runs(&q).await?))
}

#[utoipa::path(get, path = "/api/v1/benchmarks/cluster/{bench_id}", tag = "benchmarks",
    params(("bench_id" = i64, Path)), responses((status = 200, body = ClusterRun), (status = 404, body = ErrorBody)))]
pub async fn cluster_run(
    State(d): State<Arc<Daemon>>,
    PathParam(id): PathParam<i64>,
) -> Result<Json<ClusterRun>, ApiError> {
    Ok(Json(d.benchmarks.cluster_run(id).await?))
}

#[utoipa::path(get, path = "/api/v1/benchmarks/compare", tag = "benchmarks", params(CompareQuery),
    responses((status = 200, body = ClusterComparison), (status = 404, body = ErrorBody)))]
pub async fn compare(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<CompareQuery>,
) -> Result<Json<ClusterComparison>, ApiError> {
    Ok(Json(d.benchmarks.compare_cluster_runs(q.a, q.b).await?))
}
