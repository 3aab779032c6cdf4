//! The agent's HTTP API (`wire::agent` has the types): routes and handlers
//! (the JSON error answer is `error`'s). Handlers stay thin; the policy lives in
//! `ceph_volume_args` and `zap`, the scanning in `inventory` and
//! `osd_status`, the stopping in `osd_stop`.

use std::time::Instant;

use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Json, Router};
use tower_http::trace::TraceLayer;

use crate::agent_server::ceph_volume::args;
use crate::agent_server::disks::probe::{self as disk_probe, ProbeError};
use crate::agent_server::disks::replace_header::{self as replace_header_rules, HeaderError};
use crate::agent_server::disks::zap::{check_request, ZapError};
use crate::agent_server::edge::auth::{browser_guard, require_token};
use crate::agent_server::edge::error::ApiError;
use crate::agent_server::inventory::device_list::is_loop_device;
use crate::agent_server::inventory::{View, PATHS_KEPT_FOR};
use crate::agent_server::osd::argv::parse_id;
use crate::agent_server::osd::list;
use crate::agent_server::osd::listing_cache::{Stale, KEPT_FOR};
use crate::agent_server::osd::stop::nothing_to_stop;
use crate::agent_server::process::RunError;
use crate::agent_server::state::AgentState;
use crate::wire::agent::{
    etag_matches, ActivateRequest, AgentIdentity, CephVolumeRequest, CommandResult, HostOsds, OsdDaemonStatus,
    ProbeRequest, ProbeResult, ReplaceHeaderRequest, ReplaceHeaderResult, StopRequest, ZapOsdRequest, ZapOsdResult,
    ZapRequest, ZapResult,
};

/// Requests are small JSON documents; anything bigger is a mistake.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

pub fn build_router(state: AgentState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/v1/identity", get(identity))
        .route("/v1/inventory", get(inventory))
        .route("/v1/ceph-volume", post(ceph_volume))
        .route("/v1/osd/{id}", get(osd_status))
        .route("/v1/osd/{id}/stop", post(osd_stop))
        .route("/v1/osd/{id}/start", post(osd_start))
        .route("/v1/osd/{id}/activate", post(osd_activate))
        .route("/v1/osds", get(osds))
        .route("/v1/zap", post(zap))
        .route("/v1/zap-osd", post(zap_osd))
        .route("/v1/probe", post(probe))
        .route("/v1/replace-header", post(replace_header))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .layer(middleware::from_fn_with_state(state.token.clone(), browser_guard))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

async fn identity(State(s): State<AgentState>) -> Json<AgentIdentity> {
    Json(AgentIdentity { host: s.inventory.host.clone(), version: env!("CARGO_PKG_VERSION").to_string() })
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no such endpoint: {method} {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("{method} is not allowed on {}", uri.path()))
}

#[derive(Debug, serde::Deserialize)]
struct InventoryQuery {
    /// Only the devices `ceph-volume inventory --filter-for-batch` lists.
    #[serde(default)]
    filter_for_batch: bool,
}

/// A fresh inventory with its ETag, or `304 Not Modified` when the client
/// named that ETag: the scan is made either way, but an unchanged
/// inventory is neither sent nor read again by the daemon.
async fn inventory(
    State(s): State<AgentState>,
    headers: HeaderMap,
    query: Result<Query<InventoryQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = query?;
    let view = if q.filter_for_batch { View::ForBatch } else { View::All };
    let report = s.inventory.take_with(view).await?.report.into_raw();
    let etag = report.etag(&report.fingerprint());
    let tag = header::HeaderValue::from_str(&format!("\"{etag}\"")).expect("hex digits and a dash");
    let known = headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    if known.is_some_and(|k| etag_matches(k, &etag)) {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, tag)]).into_response());
    }
    Ok(([(header::ETAG, tag)], Json(report)).into_response())
}

/// The `{id}` of `/v1/osd/{id}`: decimal digits, as Ceph writes OSD ids.
fn osd_id(path: Result<Path<String>, PathRejection>) -> Result<u32, ApiError> {
    let Path(text) = path.map_err(|r| ApiError::bad_request(r.body_text()))?;
    parse_id(&text).ok_or_else(|| ApiError::bad_request(format!("{text:?} is not an OSD id (a number such as 4)")))
}

async fn osd_status(
    State(s): State<AgentState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<OsdDaemonStatus>, ApiError> {
    let id = osd_id(id)?;
    Ok(Json(s.osd.status(id).await?))
}

async fn osd_stop(
    State(s): State<AgentState>,
    id: Result<Path<String>, PathRejection>,
    body: Result<Json<StopRequest>, JsonRejection>,
) -> Result<Json<OsdDaemonStatus>, ApiError> {
    let id = osd_id(id)?;
    let Json(req) = body?;
    // A stopped daemon stays stopped without waiting for the lock, which a
    // long ceph-volume run may hold.
    if !s.osd.status(id).await?.running {
        return Ok(Json(nothing_to_stop(id)));
    }
    // An agent limited to some devices stops only the OSDs served from them.
    if let Some(allowed) = s.inventory.allowed.clone() {
        let roots = s.zapper.roots.clone();
        let ours =
            tokio::task::spawn_blocking(move || crate::agent_server::osd::devices::serves_from(&roots, id, &allowed))
                .await
                .map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the process scan stopped: {e}"))
                })?
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("cannot list processes: {e}")))?;
        if !ours {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("osd.{id} is not served from this agent's devices (--devices); it stops only those OSDs"),
            ));
        }
    }
    let busy = s.busy.clone().try_lock_owned().map_err(|_| ApiError::busy())?;
    let osd = s.osd.clone();
    // Its own task: a client that gives up must not leave a stop half
    // done with the lock released.
    let job = tokio::spawn(async move {
        let _busy = busy;
        osd.stop(id, req.osd_fsid.as_deref()).await
    });
    match job.await {
        Ok(result) => Ok(Json(result?)),
        Err(e) => {
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the stop task ended unexpectedly: {e}")))
        }
    }
}

async fn zap(
    State(s): State<AgentState>,
    body: Result<Json<ZapRequest>, JsonRejection>,
) -> Result<Json<ZapResult>, ApiError> {
    let Json(req) = body?;
    let checked = check_request(&req, s.inventory.allowed.as_ref(), s.inventory.fixed_file());
    let (device, reason) = (req.path.clone(), req.reason.clone());
    let zapper = s.zapper.clone();
    let run = async move { zapper.zap(&req).await };
    disk_command(&s, "zap", device, reason, checked, ZapError::AgentBusy, run).await
}

async fn zap_osd(
    State(s): State<AgentState>,
    body: Result<Json<ZapOsdRequest>, JsonRejection>,
) -> Result<Json<ZapOsdResult>, ApiError> {
    let Json(req) = body?;
    let checked = if !req.force {
        Err(ZapError::NoForce(format!("osd.{}", req.osd_id)))
    } else if let Some(file) = s.inventory.fixed_file() {
        Err(ZapError::FixedInventory(file.display().to_string()))
    } else {
        Ok(())
    };
    let (what, reason) = (format!("osd.{} ({})", req.osd_id, req.osd_fsid), req.reason.clone());
    let zapper = s.osd_zapper.clone();
    let run = async move { zapper.zap(&req).await };
    disk_command(&s, "zap-osd", what, reason, checked, ZapError::AgentBusy, run).await
}

async fn probe(
    State(s): State<AgentState>,
    body: Result<Json<ProbeRequest>, JsonRejection>,
) -> Result<Json<ProbeResult>, ApiError> {
    let Json(req) = body?;
    let checked = disk_probe::check_request(&req, s.inventory.allowed.as_ref(), s.inventory.fixed_file());
    let (device, reason) = (req.path.clone(), req.reason.clone());
    let prober = s.prober.clone();
    let run = async move { prober.probe(&req).await };
    disk_command(&s, "probe", device, reason, checked, ProbeError::AgentBusy, run).await
}

async fn replace_header(
    State(s): State<AgentState>,
    body: Result<Json<ReplaceHeaderRequest>, JsonRejection>,
) -> Result<Json<ReplaceHeaderResult>, ApiError> {
    let Json(req) = body?;
    let checked = replace_header_rules::check_request(&req, s.inventory.allowed.as_ref(), s.inventory.fixed_file());
    let (device, reason) = (req.path.clone(), req.reason.clone());
    let marker = s.header.clone();
    let run = async move { marker.set(&req).await };
    disk_command(&s, "replace-header", device, reason, checked, HeaderError::AgentBusy, run).await
}

/// Runs a command that writes on one device (a zap, a probe) once its
/// request passed `checked`, holding the one-command-at-a-time lock, in its
/// own task: it is never left halfway (a wipe half done, fio running, a
/// probed disk not zeroed) because the client went away.
async fn disk_command<T, E>(
    s: &AgentState,
    what: &'static str,
    device: String,
    reason: Option<String>,
    checked: Result<(), E>,
    busy: E,
    run: impl std::future::Future<Output = Result<T, E>> + Send + 'static,
) -> Result<Json<T>, ApiError>
where
    T: Send + 'static,
    E: std::fmt::Display + Send + 'static,
    ApiError: From<E>,
{
    let reason = reason.unwrap_or_else(|| "no reason given".into());
    let lock = match checked.and_then(|()| s.busy.clone().try_lock_owned().map_err(|_| busy)) {
        Ok(lock) => lock,
        Err(e) => {
            tracing::warn!(%device, %reason, "{what} refused: {e}");
            return Err(e.into());
        }
    };
    let stale = Stale(s.listings.clone());
    let job = tokio::spawn(async move {
        let _busy = lock;
        let _stale = stale;
        let result = run.await;
        if let Err(e) = &result {
            tracing::warn!(%device, %reason, "{what} refused or failed: {e}");
        }
        result
    });
    match job.await {
        Ok(result) => Ok(Json(result?)),
        Err(e) => {
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the {what} task ended unexpectedly: {e}")))
        }
    }
}

async fn ceph_volume(
    State(s): State<AgentState>,
    body: Result<Json<CephVolumeRequest>, JsonRejection>,
) -> Result<Json<CommandResult>, ApiError> {
    let Json(req) = body?;
    if let Some(why) = s.inventory.refusal() {
        return Err(ApiError::conflict(why));
    }
    args::check_shape(&req.args)?;
    let busy = s.busy.clone().try_lock_owned().map_err(|_| ApiError::busy())?;
    let taken = s.inventory.take().await?;
    // The flags this host's ceph-volume has; 16.2's, the fewest, while its release is unknown.
    let release = taken
        .report
        .ceph_release
        .as_deref()
        .and_then(|r| crate::wire::ceph_volume::CephRelease::parse(r).ok())
        .map_or(crate::wire::ceph_volume::Release::Pacific, |r| r.release);
    let devices = args::check_devices(&req.args, &taken.paths(), s.inventory.allowed.as_ref(), release)?;

    let mut env = Vec::new();
    if let Some(affinity) = req.osdspec_affinity.filter(|a| !a.is_empty()) {
        env.push(("CEPH_VOLUME_OSDSPEC_AFFINITY".to_string(), affinity));
    }
    // Only named loop devices pass the checks above; ceph-volume refuses
    // loop devices unless told to take them.
    if devices.iter().any(|d| is_loop_device(d)) {
        env.push(("CEPH_VOLUME_ALLOW_LOOP_DEVICES".to_string(), "1".to_string()));
    }
    let cv = s.ceph_volume.clone();
    let args = req.args;
    // Runs in its own task so that a client that gives up (or a restart of
    // the daemon) does not kill ceph-volume halfway through making an OSD.
    let stale = Stale(s.listings.clone());
    let job = tokio::spawn(async move {
        let _busy = busy;
        let _stale = stale;
        let shown = crate::agent_server::process::command_line(&cv.program, &args, &env);
        tracing::info!(command = %shown, "running ceph-volume");
        let started = Instant::now();
        let result = cv.run(&args, &env).await;
        match &result {
            Ok(r) if r.exit_code == 0 => {
                tracing::info!(command = %shown, seconds = started.elapsed().as_secs(), "ceph-volume finished")
            }
            Ok(r) => tracing::warn!(
                command = %shown,
                exit_code = r.exit_code,
                stderr = %r.stderr.lines().next_back().unwrap_or(""),
                "ceph-volume failed"
            ),
            Err(e) => tracing::error!(command = %shown, "{e}"),
        }
        result
    });
    match job.await {
        Ok(Ok(result)) => Ok(Json(result)),
        Ok(Err(e @ RunError::TimedOut { .. })) => Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, e.to_string())),
        Ok(Err(e)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the ceph-volume run stopped: {e}"))),
    }
}

/// The devices this agent may list and touch: `--devices`, else those of
/// a recent inventory (a command that writes takes its own, fresh).
async fn own_devices(s: &AgentState) -> Result<std::collections::BTreeSet<String>, ApiError> {
    match &s.inventory.allowed {
        Some(allowed) => Ok(allowed.clone()),
        None => Ok(s.inventory.recent_paths(PATHS_KEPT_FOR).await?),
    }
}

/// The OSDs ceph-volume lists on `devices`: the kept listing while no
/// command here changed the disks and it is younger than `KEPT_FOR`.
async fn listing(s: &AgentState, devices: &std::collections::BTreeSet<String>) -> Result<HostOsds, ApiError> {
    if let Some(kept) = s.listings.get(devices, KEPT_FOR, Instant::now()) {
        return Ok(kept);
    }
    let ticket = s.listings.ticket(Instant::now());
    let listed = list::list(&s.ceph_volume, devices).await?;
    for note in &listed.notes {
        tracing::debug!("{note}");
    }
    s.listings.put(ticket, devices.clone(), listed.clone());
    Ok(listed)
}

async fn osds(State(s): State<AgentState>) -> Result<Json<HostOsds>, ApiError> {
    if let Some(why) = s.inventory.refusal() {
        return Err(ApiError::conflict(why));
    }
    let devices = own_devices(&s).await?;
    Ok(Json(listing(&s, &devices).await?))
}

async fn osd_activate(
    State(s): State<AgentState>,
    id: Result<Path<String>, PathRejection>,
    body: Result<Json<ActivateRequest>, JsonRejection>,
) -> Result<Json<CommandResult>, ApiError> {
    let id = osd_id(id)?;
    let Json(req) = body?;
    if let Some(why) = s.inventory.refusal() {
        return Err(ApiError::conflict(why));
    }
    let busy = s.busy.clone().try_lock_owned().map_err(|_| ApiError::busy())?;
    // Only an OSD that is on this host's devices, with this id and fsid, is
    // activated (an activation changes no disk: a kept listing will do).
    let devices = own_devices(&s).await?;
    let listed = listing(&s, &devices).await?;
    // How a raw OSD's DB is found depends on it; asked again every few
    // minutes, as packages may be upgraded under a running agent.
    let release = s.release.get(&s.ceph_volume).await.map(|r| r.release);
    if release.is_none() {
        tracing::warn!("activating osd.{id} without knowing ceph-volume's release");
    }
    let osd = list::check_activation(&req, id, &listed, release).map_err(ApiError::conflict)?;
    let with_systemd = matches!(s.starter.method, crate::agent_server::osd::stop::ControlMethod::Systemd { .. });
    let cv = s.ceph_volume.clone();
    let job = tokio::spawn(async move {
        let _busy = busy;
        list::activate(&cv, &osd, with_systemd, &devices).await
    });
    match job.await {
        Ok(Ok(result)) => Ok(Json(result)),
        Ok(Err(e @ RunError::TimedOut { .. })) => Err(ApiError::new(StatusCode::GATEWAY_TIMEOUT, e.to_string())),
        Ok(Err(e)) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the activation stopped: {e}"))),
    }
}

async fn osd_start(
    State(s): State<AgentState>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<OsdDaemonStatus>, ApiError> {
    let id = osd_id(id)?;
    if let Some(why) = s.inventory.refusal() {
        return Err(ApiError::conflict(why));
    }
    // Only an OSD ceph-volume made on this host's own devices is started.
    let devices = own_devices(&s).await?;
    let listed = listing(&s, &devices).await?;
    if !listed.osds.iter().any(|o| o.osd_id == id) {
        return Err(ApiError::conflict(format!("ceph-volume lists no osd.{id} on this host's devices")));
    }
    let busy = s.busy.clone().try_lock_owned().map_err(|_| ApiError::busy())?;
    let starter = s.starter.clone();
    let job = tokio::spawn(async move {
        let _busy = busy;
        starter.start(id).await
    });
    match job.await {
        Ok(result) => Ok(Json(result?)),
        Err(e) => {
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("the start task ended unexpectedly: {e}")))
        }
    }
}
