//! `/api/v1/devices`: every host's devices as its agent last reported them,
//! with the inventory's age, and devices held back from specs.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ApiError, ErrorBody};
use super::json_body::{JsonBody, QueryParams};
use crate::clock::now_ms;
use crate::daemon::Daemon;
use crate::store::Hold;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct DeviceQuery {
    /// Only this host.
    pub host: Option<String>,
    /// Poll the host(s) first (waits for their agents, within the poll timeout).
    #[serde(default)]
    pub refresh: bool,
    /// Only hosts whose name contains this text.
    pub q: Option<String>,
    /// Page through hosts (in the order they were added): skip this many...
    pub offset: Option<usize>,
    /// ...and return at most this many (default: all).
    pub limit: Option<usize>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct InventoryInfo {
    pub taken_at: i64,
    pub age_s: f64,
    /// ceph-volume, kernel or file.
    pub source: String,
    pub can_create_osds: bool,
    pub note: Option<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DeviceRow {
    pub path: String,
    /// hdd, ssd or unknown (cephadm's human_readable_type).
    #[serde(rename = "type")]
    pub kind: String,
    pub device_id: String,
    pub size_bytes: Option<f64>,
    pub human_readable_size: Option<String>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub available: bool,
    pub rejected_reasons: Vec<String>,
    /// Why osdkeeper holds this device back from every spec, if it does.
    pub held: Option<String>,
    pub transport: Option<String>,
    pub rpm: Option<String>,
    pub health: Option<String>,
    pub ident: Option<String>,
    pub fault: Option<String>,
    /// OSD ids with volumes on this device.
    pub osd_ids: Vec<String>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HostDevices {
    pub host: String,
    pub addr: String,
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub inventory: Option<InventoryInfo>,
    pub devices: Vec<DeviceRow>,
    /// Set when --refresh could not reach the host.
    pub refresh_error: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceRef {
    pub host: String,
    pub path: String,
}

fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn led(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?;
    Some(match s {
        "On" | "on" => "On".into(),
        "Off" | "off" => "Off".into(),
        _ => "N/A".into(),
    })
}

/// One device of a stored inventory, as the listing shows it.
pub fn device_row(v: &Value, host: &str, holds: &[Hold]) -> DeviceRow {
    let sys = v.get("sys_api").cloned().unwrap_or(Value::Null);
    let lsm = v.get("lsm_data").cloned().unwrap_or(Value::Null);
    let path = text(v, "path").unwrap_or_default();
    let device_id = text(v, "device_id").unwrap_or_default();
    let kind = match sys.get("rotational").and_then(Value::as_str) {
        None => "unknown",
        Some("1") => "hdd",
        Some(_) => "ssd",
    };
    let mut reasons: Vec<String> = v
        .get("rejected_reasons")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|r| r.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    reasons.sort();
    let osd_ids = v
        .get("lvs")
        .and_then(Value::as_array)
        .map(|lvs| lvs.iter().filter_map(|lv| text(lv, "osd_id")).collect())
        .unwrap_or_default();
    let led_support = lsm.get("ledSupport");
    DeviceRow {
        held: holds.iter().find(|h| h.covers(host, &path, &device_id)).map(|h| h.reason.clone()),
        path,
        kind: kind.into(),
        device_id,
        size_bytes: sys.get("size").and_then(Value::as_f64),
        human_readable_size: text(&sys, "human_readable_size"),
        model: text(&sys, "model"),
        vendor: text(&sys, "vendor"),
        available: v.get("available").and_then(Value::as_bool).unwrap_or(false),
        rejected_reasons: reasons,
        transport: text(&lsm, "transport"),
        rpm: text(&lsm, "rpm"),
        health: text(&lsm, "health"),
        ident: led(led_support.and_then(|l| l.get("IDENTstatus"))),
        fault: led(led_support.and_then(|l| l.get("FAILstatus"))),
        osd_ids,
    }
}

#[utoipa::path(get, path = "/api/v1/devices", tag = "devices", params(DeviceQuery),
    responses((status = 200, body = [HostDevices]), (status = 404, body = ErrorBody)))]
pub async fn list(
    State(d): State<Arc<Daemon>>,
    QueryParams(q): QueryParams<DeviceQuery>,
) -> Result<([(&'static str, String); 1], Json<Vec<HostDevices>>), ApiError> {
    let mut hosts = d.store.hosts().await?;
    if let Some(only) = &q.host {
        hosts.retain(|h| h.name == *only);
        if hosts.is_empty() {
            return Err(ApiError::Status(axum::http::StatusCode::NOT_FOUND, format!("unknown host {only}")));
        }
    }
    if let Some(text) = &q.q {
        hosts.retain(|h| h.name.contains(text.as_str()));
    }
    let total = hosts.len();
    let hosts: Vec<_> = hosts.into_iter().skip(q.offset.unwrap_or(0)).take(q.limit.unwrap_or(usize::MAX)).collect();
    let failures = if q.refresh {
        let names: Vec<String> = hosts.iter().map(|h| h.name.clone()).collect();
        d.refresh(&names, d.config.poll_timeout + Duration::from_secs(5)).await?
    } else {
        Vec::new()
    };
    let hosts = if q.refresh {
        let fresh = d.store.hosts().await?;
        fresh.into_iter().filter(|h| hosts.iter().any(|o| o.name == h.name)).collect()
    } else {
        hosts
    };
    let holds = d.store.holds().await?;
    let now = now_ms();
    let mut out = Vec::with_capacity(hosts.len());
    for h in hosts {
        let inv = d.store.inventory(&h.name).await?;
        let mut devices: Vec<DeviceRow> = match &inv {
            Some(i) => serde_json::from_str::<Vec<Value>>(&i.devices)
                .map_err(|e| {
                    ApiError::Status(axum::http::StatusCode::INTERNAL_SERVER_ERROR, format!("stored inventory: {e}"))
                })?
                .iter()
                .map(|v| device_row(v, &h.name, &holds))
                .collect(),
            None => Vec::new(),
        };
        devices.sort_by(|a, b| a.path.cmp(&b.path));
        out.push(HostDevices {
            refresh_error: failures.iter().find(|(n, _)| *n == h.name).map(|(_, e)| e.clone()),
            host: h.name,
            addr: h.addr,
            unreachable_since: h.unreachable_since,
            last_error: h.last_error,
            inventory: inv.map(|i| InventoryInfo {
                taken_at: i.taken_at,
                age_s: (now - i.taken_at) as f64 / 1000.0,
                source: i.source,
                can_create_osds: i.can_create_osds,
                note: i.note,
            }),
            devices,
        });
    }
    // The total before paging, so that a dashboard can page through thousands of hosts.
    Ok(([("x-total-count", total.to_string())], Json(out)))
}

#[utoipa::path(get, path = "/api/v1/devices/held", tag = "devices", responses((status = 200, body = [Hold])))]
pub async fn held(State(d): State<Arc<Daemon>>) -> Result<Json<Vec<Hold>>, ApiError> {
    Ok(Json(d.store.holds().await?))
}

#[utoipa::path(post, path = "/api/v1/devices/release", tag = "devices", request_body = DeviceRef,
    responses((status = 200, body = Hold), (status = 404, body = ErrorBody)))]
pub async fn release(
    State(d): State<Arc<Daemon>>,
    JsonBody(body): JsonBody<DeviceRef>,
) -> Result<Json<Hold>, ApiError> {
    let hold = d.store.release(&body.host, &body.path).await?;
    d.event(
        crate::store::Level::Info,
        "device-released",
        Some(&body.host),
        Some(&body.path),
        format!("Released {} on {}: specs may use it again", body.path, body.host),
    )
    .await;
    d.reconcile_now.notify_one();
    Ok(Json(hold))
}
