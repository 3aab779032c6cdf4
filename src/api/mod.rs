//! The daemon's HTTP API: JSON under `/api/v1/`, `/healthz`, `/metrics`,
//! the dashboard, and the OpenAPI document at `/api/v1/openapi.json`
//! (generated from the handlers' annotations). Handlers are thin: they
//! parse, call one daemon operation or query, and send what it returns
//! (the types of `wire::api`). Only this module knows HTTP status codes.
//! Who may call which route is decided in `domain::auth` (`auth.rs` obeys it).
//!
//! The router is built from one list of endpoints (`endpoints`), which a
//! test holds to the role table both ways. One file per noun for the
//! handlers; around them: `standby` (the gate in front of the router: a
//! standby's 503 with where the leader is), `auth` (finds the caller,
//! obeys the role table as a route layer, runs the request as its token),
//! `error` (`DaemonError` to a status and JSON),
//! `json_body` (extractors whose rejections are JSON), `raw_errors`
//! (JSON bodies for hyper's own 400/414/431), `snapshot` (read-model
//! answers serialized once per snapshot and query), `stream` (server-sent
//! events), `metrics` (Prometheus text; its labels from closed sets), `web`
//! (the dashboard, and `kinds.js`, generated from the core's enums).

pub mod auth;
pub mod backup;
pub mod bench;
pub mod cluster;
pub mod deployments;
pub mod devices;
pub mod error;
pub mod events;
pub mod hosts;
pub mod json_body;
pub mod metrics;
pub mod osds;
pub mod raw_errors;
pub mod snapshot;
pub mod specs;
pub mod standby;
pub mod stream;
pub mod summary;
pub mod swaps;
pub mod tokens;
pub mod web;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::handler::Handler;
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{on, MethodFilter, MethodRouter};
use axum::{Json, Router};
use utoipa::OpenApi;

use crate::daemon::Daemon;
use crate::wire::api::error::Health;
use crate::wire::api::Page;
use crate::wire::browser_guard as guard;
use error::ApiError;

/// What the API needs to know besides the daemon: set by the composition root.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    /// The bootstrap admin token (`OSDKEEPER_TOKEN`), named `bootstrap`;
    /// tokens created through the API are in the store.
    pub token: Option<String>,
    pub max_body_bytes: usize,
    /// The daemon's store, for the one route that is about the database
    /// itself rather than the cluster (`backup.rs`).
    pub store: crate::store::Store,
}

/// A page of a list: the items as the body, the total before paging in `x-total-count`.
pub type Paged<T> = ([(&'static str, String); 1], Json<Vec<T>>);

pub fn paged<T>(page: Page<T>) -> Paged<T> {
    ([("x-total-count", page.total.to_string())], Json(page.items))
}

#[derive(OpenApi)]
#[openapi(
    info(title = "osdkeeper", description = "Ceph OSD lifecycle daemon: hosts, inventories, specs, removals"),
    paths(
        hosts::list, hosts::add, hosts::remove, hosts::add_label, hosts::remove_label,
        hosts::drain, hosts::drain_preview, hosts::drain_stop, hosts::drain_status,
        devices::list, devices::held, devices::release, devices::probe, devices::probes, devices::probe_detail,
        specs::apply, specs::list, specs::get, specs::remove,
        osds::list, osds::remove, osds::status, osds::detail, osds::stop, osds::preview, devices::zap,
        devices::replace, devices::replace_clear,
        deployments::list, deployments::detail,
        swaps::create, swaps::preview, swaps::list, swaps::detail, swaps::stop,
        events::list, events::workers, stream::stream, summary::summary, cluster::status, healthz,
        tokens::list, tokens::create, tokens::revoke, tokens::whoami, backup::backup,
        bench::bench_osds, bench::osd_results, bench::bench_cluster, bench::cluster_runs, bench::cluster_run,
        bench::compare,
    ),
    components(schemas(crate::wire::api::error::ErrorBody)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        doc.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
    }
}

/// Liveness: answers without a token.
#[utoipa::path(get, path = "/healthz", tag = "health", security(()),
    responses((status = 200, description = "the daemon runs; whether the Ceph cluster answered", body = Health)))]
pub async fn healthz(State(d): State<Arc<Daemon>>) -> Json<Health> {
    Json(d.health())
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

async fn not_found() -> ApiError {
    ApiError::Status(StatusCode::NOT_FOUND, "no such API endpoint (see /api/v1/openapi.json)".into())
}

/// Refuses what a web page could send cross-site (`wire::browser_guard`).
async fn browser_guard(State(a): State<Arc<auth::Auth>>, req: Request, next: Next) -> Response {
    let open = match a.is_open().await {
        Ok(open) => open,
        Err(e) => return e.into_response(),
    };
    let verdict = {
        let header = |name: header::HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
        let accepts = if req.uri().path() == "/api/v1/specs" { guard::YAML_OR_JSON } else { guard::JSON };
        guard::check(
            req.method().as_str(),
            header(header::HOST),
            header(header::ORIGIN),
            header(header::CONTENT_TYPE),
            open,
            accepts,
        )
    };
    match verdict {
        Ok(()) => next.run(req).await,
        Err(why) => ApiError::Status(StatusCode::FORBIDDEN, why).into_response(),
    }
}

/// One route of the router: its method and path, as the role table
/// (`domain::auth::RULES`) names them.
struct Endpoint {
    method: &'static str,
    path: &'static str,
    handler: MethodRouter<Arc<Daemon>>,
}

fn at<H, T>(method: &'static str, path: &'static str, handler: H) -> Endpoint
where
    H: Handler<T, Arc<Daemon>>,
    T: 'static,
{
    let filter = match method {
        "GET" => MethodFilter::GET,
        "POST" => MethodFilter::POST,
        "DELETE" => MethodFilter::DELETE,
        other => unreachable!("the API has no {other} routes"),
    };
    Endpoint { method, path, handler: on(filter, handler) }
}

/// Every route and its handler: the router is built from this list, and
/// `routes()` lists it for the tests that hold it to the role table.
fn endpoints() -> Vec<Endpoint> {
    vec![
        at("GET", "/api/v1/hosts", hosts::list),
        at("POST", "/api/v1/hosts", hosts::add),
        at("DELETE", "/api/v1/hosts/{name}", hosts::remove),
        at("POST", "/api/v1/hosts/{name}/labels", hosts::add_label),
        at("DELETE", "/api/v1/hosts/{name}/labels/{label}", hosts::remove_label),
        at("GET", "/api/v1/hosts/{name}/drain", hosts::drain_status),
        at("POST", "/api/v1/hosts/{name}/drain", hosts::drain),
        at("POST", "/api/v1/hosts/{name}/drain/preview", hosts::drain_preview),
        at("POST", "/api/v1/hosts/{name}/drain/stop", hosts::drain_stop),
        at("GET", "/api/v1/devices", devices::list),
        at("GET", "/api/v1/devices/held", devices::held),
        at("POST", "/api/v1/devices/release", devices::release),
        at("POST", "/api/v1/devices/zap", devices::zap),
        at("POST", "/api/v1/devices/replace", devices::replace),
        at("POST", "/api/v1/devices/replace/clear", devices::replace_clear),
        at("POST", "/api/v1/devices/probe", devices::probe),
        at("GET", "/api/v1/devices/probes", devices::probes),
        at("GET", "/api/v1/devices/probes/{probe_id}", devices::probe_detail),
        at("GET", "/api/v1/specs", specs::list),
        at("POST", "/api/v1/specs", specs::apply),
        at("GET", "/api/v1/specs/{service_name}", specs::get),
        at("DELETE", "/api/v1/specs/{service_name}", specs::remove),
        at("GET", "/api/v1/events", events::list),
        at("GET", "/api/v1/osds", osds::list),
        at("GET", "/api/v1/osds/removals", osds::status),
        at("POST", "/api/v1/osds/removals", osds::remove),
        at("POST", "/api/v1/osds/removals/stop", osds::stop),
        at("POST", "/api/v1/osds/removals/preview", osds::preview),
        at("GET", "/api/v1/osds/removals/{removal_id}", osds::detail),
        at("GET", "/api/v1/workers", events::workers),
        at("GET", "/api/v1/benchmarks/osds", bench::osd_results),
        at("POST", "/api/v1/benchmarks/osds", bench::bench_osds),
        at("GET", "/api/v1/benchmarks/cluster", bench::cluster_runs),
        at("POST", "/api/v1/benchmarks/cluster", bench::bench_cluster),
        at("GET", "/api/v1/benchmarks/cluster/{bench_id}", bench::cluster_run),
        at("GET", "/api/v1/benchmarks/compare", bench::compare),
        at("GET", "/api/v1/deployments", deployments::list),
        at("GET", "/api/v1/deployments/{deployment_id}", deployments::detail),
        at("GET", "/api/v1/swaps", swaps::list),
        at("POST", "/api/v1/swaps", swaps::create),
        at("POST", "/api/v1/swaps/preview", swaps::preview),
        at("GET", "/api/v1/swaps/{swap_id}", swaps::detail),
        at("POST", "/api/v1/swaps/{swap_id}/stop", swaps::stop),
        at("GET", "/api/v1/tokens", tokens::list),
        at("POST", "/api/v1/tokens", tokens::create),
        at("DELETE", "/api/v1/tokens/{name}", tokens::revoke),
        at("GET", "/api/v1/whoami", tokens::whoami),
        at("POST", "/api/v1/backup", backup::backup),
        at("GET", "/api/v1/openapi.json", openapi),
        at("GET", "/api/v1/stream", stream::stream),
        at("GET", "/api/v1/summary", summary::summary),
        at("GET", "/api/v1/cluster/status", cluster::status),
        at("GET", "/metrics", metrics::metrics),
        at("GET", "/healthz", healthz),
        at("GET", "/", web::index),
        at("GET", "/assets/{name}", web::asset),
    ]
}

/// Every route of the router as (method, path pattern).
pub fn routes() -> Vec<(&'static str, &'static str)> {
    endpoints().iter().map(|e| (e.method, e.path)).collect()
}

pub fn router(daemon: Arc<Daemon>, settings: ApiSettings) -> Router {
    let auth = Arc::new(auth::Auth::new(daemon.clone(), settings.token.as_deref()));
    let api = endpoints()
        .into_iter()
        .fold(Router::new(), |r, e| r.route(e.path, e.handler))
        // After the routes: it applies to those already added, and runs
        // once the route is known.
        .route_layer(middleware::from_fn_with_state(auth.clone(), auth::authorize))
        .fallback(not_found)
        .method_not_allowed_fallback(|| async {
            ApiError::Status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed here".into())
        });
    let http_metrics = Arc::new(metrics::HttpMetrics::default());
    let max_body = settings.max_body_bytes;
    api.layer(axum::Extension(Arc::new(snapshot::SnapshotCache::default())))
        .layer(axum::Extension(Arc::new(settings.store)))
        .layer(middleware::from_fn_with_state(auth, browser_guard))
        .layer(middleware::from_fn_with_state(http_metrics.clone(), metrics::track))
        .layer(axum::Extension(http_metrics))
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(daemon)
}

#[cfg(test)]
mod tests;
