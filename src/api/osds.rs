//! `/api/v1/osds`: OSDs, their removal (drain, stop, destroy/purge, zap),
//! the removal status with progress, and stopping a removal.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorBody};
use super::json_body::{JsonBody, QueryParams};
use crate::daemon::removals::RemoveRequest;
use crate::daemon::Daemon;
use crate::domain::progress::progress;
use crate::store::{ActionRecord, RemovalRecord, Sample};

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct OsdRow {
    pub id: u32,
    pub host: Option<String>,
    pub crush_weight: Option<f64>,
    pub up: bool,
    #[serde(rename = "in")]
    pub is_in: bool,
    pub destroyed: bool,
    pub pgs: Option<i64>,
    pub devices: Vec<String>,
    /// The state of its removal, if one is under way.
    pub removal: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveBody {
    pub ids: Vec<u32>,
    /// Destroy instead of purge: the id is kept for the replacement disk.
    #[serde(default)]
    pub replace: bool,
    /// Do not wait for the OSD to hold no placement groups (safe-to-destroy is still required).
    #[serde(default)]
    pub force: bool,
    /// Wipe the OSD's devices afterwards.
    #[serde(default)]
    pub zap: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IdsBody {
    pub ids: Vec<u32>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ZapBody {
    pub host: String,
    pub path: String,
    /// Required.
    #[serde(default)]
    pub force: bool,
}

/// One removal as `osd rm status` shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RemovalStatus {
    pub removal_id: i64,
    pub osd_id: u32,
    pub host: String,
    pub state: String,
    /// The gate it waits on and why, in the cluster's words.
    pub waiting_on: Option<String>,
    pub last_error: Option<String>,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
    pub stop_requested: bool,
    pub devices: Vec<String>,
    pub pgs_at_start: Option<i64>,
    pub pgs_now: Option<i64>,
    pub pgs_per_min: Option<f64>,
    pub eta_s: Option<f64>,
    pub bytes_now: Option<f64>,
    pub bytes_per_s: Option<f64>,
    pub requested_at: i64,
    pub drain_started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub note: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RemovalDetail {
    #[serde(flatten)]
    pub status: RemovalStatus,
    /// (time, PGs left, KiB used), oldest first; with `samples_after`, only the newer ones.
    pub samples: Vec<Sample>,
    pub actions: Vec<ActionRecord>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct StatusQuery {
    /// How many finished removals to include (default 20).
    pub history: Option<i64>,
}

/// The window the drain rate is measured over.
const RATE_WINDOW_MS: i64 = 15 * 60 * 1000;

pub async fn status_of(d: &Daemon, rec: &RemovalRecord) -> Result<RemovalStatus, ApiError> {
    let samples = d.store.recent_samples(rec.id, RATE_WINDOW_MS).await?;
    let points: Vec<(i64, i64, Option<i64>)> = samples.iter().map(|s| (s.at, s.pgs, s.kb_used)).collect();
    let p = progress(rec.removal.pgs_at_start, &points, RATE_WINDOW_MS);
    let r = &rec.removal;
    let draining = r.phase.is_draining();
    Ok(RemovalStatus {
        removal_id: rec.id,
        osd_id: r.osd_id,
        host: r.host.clone(),
        state: r.phase.as_str().to_string(),
        waiting_on: rec.waiting_on.clone(),
        last_error: rec.last_error.clone(),
        replace: r.replace,
        force: r.force,
        zap: r.zap,
        stop_requested: r.stop_requested,
        devices: r.devices.clone(),
        pgs_at_start: r.pgs_at_start,
        pgs_now: rec.pgs_now,
        pgs_per_min: if draining { p.pgs_per_min } else { None },
        eta_s: if draining { p.eta_s } else { None },
        bytes_now: rec.kb_used_now.map(|k| k as f64 * 1024.0),
        bytes_per_s: if draining { p.bytes_per_s } else { None },
        requested_at: rec.requested_at,
        drain_started_at: rec.drain_started_at,
        finished_at: rec.finished_at,
        note: r.note.clone(),
    })
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct OsdQuery {
    /// Only OSDs matching this text (case-insensitive): `osd.N` or `N` is that
    /// OSD; any other text is part of its host name or of one of its device paths.
    pub q: Option<String>,
    /// Only the OSDs on this host (exact name).
    pub host: Option<String>,
    /// Page through the OSDs (by id): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

/// What `q` asks for, parsed once.
enum OsdFilter {
    Id(u32),
    Text(String),
}

impl OsdFilter {
    fn parse(q: &str) -> Option<OsdFilter> {
        let q = q.trim().to_lowercase();
        if q.is_empty() {
            return None;
        }
        let bare = q.strip_prefix("osd.").unwrap_or(&q);
        match bare.parse::<u32>() {
            Ok(id) if bare.bytes().all(|b| b.is_ascii_digit()) => Some(OsdFilter::Id(id)),
            _ => Some(OsdFilter::Text(q)),
        }
    }

    fn matches(&self, row: &OsdRow) -> bool {
        match self {
            OsdFilter::Id(id) => row.id == *id,
            OsdFilter::Text(t) => {
                row.host.as_deref().is_some_and(|h| h.to_lowercase().contains(t.as_str()))
                    || row.devices.iter().any(|d| d.to_lowercase().contains(t.as_str()))
            }
        }
    }
}

#[utoipa::path(get, path = "/api/v1/osds", tag = "osds", params(OsdQuery),
    responses((status = 200, body = [OsdRow],
        headers(("x-total-count" = usize, description = "OSDs matching the filters, before offset and limit"))),
        (status = 422, body = ErrorBody)))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<OsdQuery>,
) -> Result<([(&'static str, String); 1], Json<Vec<OsdRow>>), ApiError> {
    let unreadable = |e: crate::ceph::CephError| {
        ApiError::Status(StatusCode::UNPROCESSABLE_ENTITY, format!("cannot read the cluster: {e}"))
    };
    let state = d.ceph.state().await.map_err(unreadable)?;
    let meta: HashMap<u32, crate::ceph::OsdDevices> =
        d.ceph.all_osd_devices().await.unwrap_or_default().into_iter().collect();
    let active: HashMap<u32, String> = d
        .store
        .active_removals()
        .await?
        .into_iter()
        .map(|r| (r.removal.osd_id, r.removal.phase.as_str().to_string()))
        .collect();
    let filter = q.q.as_deref().and_then(OsdFilter::parse);
    let mut rows: Vec<OsdRow> = state
        .osds
        .iter()
        .map(|o| {
            let m = meta.get(&o.id);
            OsdRow {
                id: o.id,
                host: m.map(|m| m.hostname.clone()).filter(|h| !h.is_empty()).or_else(|| o.crush_host.clone()),
                crush_weight: o.crush_weight,
                up: o.up,
                is_in: o.is_in,
                destroyed: o.destroyed,
                pgs: o.pgs,
                devices: m.map(|m| m.dev_nodes.clone()).unwrap_or_default(),
                removal: active.get(&o.id).cloned(),
            }
        })
        .filter(|r| q.host.as_ref().is_none_or(|h| r.host.as_ref() == Some(h)))
        .filter(|r| filter.as_ref().is_none_or(|f| f.matches(r)))
        .collect();
    rows.sort_by_key(|r| r.id);
    // The total before paging, so that a picker can say "200 of 9000".
    let total = rows.len();
    let rows: Vec<OsdRow> = rows.into_iter().skip(q.offset.unwrap_or(0)).take(q.limit.unwrap_or(usize::MAX)).collect();
    Ok(([("x-total-count", total.to_string())], Json(rows)))
}

#[utoipa::path(post, path = "/api/v1/osds/removals", tag = "osds", request_body = RemoveBody,
    responses((status = 202, body = [RemovalStatus]), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn remove(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<RemoveBody>,
) -> Result<(StatusCode, Json<Vec<RemovalStatus>>), ApiError> {
    let recs =
        d.schedule_removals(&RemoveRequest { ids: b.ids, replace: b.replace, force: b.force, zap: b.zap }).await?;
    let mut out = Vec::new();
    for r in &recs {
        out.push(status_of(&d, r).await?);
    }
    Ok((StatusCode::ACCEPTED, Json(out)))
}

#[utoipa::path(get, path = "/api/v1/osds/removals", tag = "osds", params(StatusQuery), responses((status = 200, body = [RemovalStatus])))]
pub async fn status(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<StatusQuery>,
) -> Result<Json<Vec<RemovalStatus>>, ApiError> {
    let recs = d.store.removals(q.history.unwrap_or(20).clamp(0, 1000)).await?;
    let mut out = Vec::new();
    for r in &recs {
        out.push(status_of(&d, r).await?);
    }
    Ok(Json(out))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct DetailQuery {
    /// Only the samples taken after this time (ms since the epoch, exclusive):
    /// the `at` of the last sample a client holds.
    pub samples_after: Option<i64>,
}

#[utoipa::path(get, path = "/api/v1/osds/removals/{removal_id}", tag = "osds",
    params(("removal_id" = i64, Path), DetailQuery),
    responses((status = 200, body = RemovalDetail), (status = 404, body = ErrorBody)))]
pub async fn detail(
    State(d): State<Arc<Daemon>>,
    Path(id): Path<i64>,
    QueryParams(q): QueryParams<DetailQuery>,
) -> Result<Json<RemovalDetail>, ApiError> {
    let rec = d.store.removal(id).await?;
    let samples = match q.samples_after {
        Some(after) => d.store.samples_after(id, after).await?,
        None => d.store.samples(id).await?,
    };
    Ok(Json(RemovalDetail { status: status_of(&d, &rec).await?, samples, actions: d.store.actions(id).await? }))
}

#[utoipa::path(post, path = "/api/v1/osds/removals/stop", tag = "osds", request_body = IdsBody,
    responses((status = 200, body = [RemovalStatus]), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn stop(
    State(d): State<Arc<Daemon>>,
    JsonBody(b): JsonBody<IdsBody>,
) -> Result<Json<Vec<RemovalStatus>>, ApiError> {
    let recs = d.stop_removals(&b.ids).await?;
    let mut out = Vec::new();
    for r in &recs {
        out.push(status_of(&d, r).await?);
    }
    Ok(Json(out))
}

#[utoipa::path(post, path = "/api/v1/devices/zap", tag = "devices", request_body = ZapBody,
    responses((status = 200, description = "what the agent did", body = [String]), (status = 400, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn zap(State(d): State<Arc<Daemon>>, JsonBody(b): JsonBody<ZapBody>) -> Result<Json<Vec<String>>, ApiError> {
    Ok(Json(d.zap_device(&b.host, &b.path, b.force).await?))
}
