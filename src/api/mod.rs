//! The daemon's HTTP API: JSON under `/api/v1/`, `/healthz`, `/metrics`,
//! the dashboard, and the OpenAPI document at `/api/v1/openapi.json`
//! (generated from the handlers' annotations). Handlers are thin: they
//! parse, call one daemon operation or query, and send what it returns
//! (the types of `wire::api`). Only this module knows HTTP status codes.

pub mod deployments;
pub mod devices;
pub mod error;
pub mod events;
pub mod hosts;
pub mod json_body;
pub mod metrics;
pub mod osds;
pub mod raw_errors;
pub mod specs;
pub mod stream;
pub mod summary;
pub mod web;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
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
    /// Every request but `/healthz`, `/metrics` and the page's assets needs it, when set.
    pub token: Option<String>,
    pub max_body_bytes: usize,
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
        devices::list, devices::held, devices::release,
        specs::apply, specs::list, specs::get, specs::remove,
        osds::list, osds::remove, osds::status, osds::detail, osds::stop, devices::zap,
        deployments::list, deployments::detail,
        events::list, events::workers, stream::stream, summary::summary, healthz,
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
#[utoipa::path(get, path = "/healthz", tag = "health", security(()), responses((status = 200, description = "the daemon runs", body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into() })
}

async fn openapi() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

async fn not_found() -> ApiError {
    ApiError::Status(StatusCode::NOT_FOUND, "no such API endpoint (see /api/v1/openapi.json)".into())
}

/// With a token configured, everything but /healthz and /metrics needs
/// `Authorization: Bearer <token>`.
async fn require_token(State(settings): State<Arc<ApiSettings>>, req: Request, next: Next) -> Response {
    let Some(token) = settings.token.as_deref() else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    // The page and its assets hold no data; the page asks for the token.
    if path == "/healthz" || path == "/metrics" || path == "/" || path.starts_with("/assets/") {
        return next.run(req).await;
    }
    let given =
        req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(g) if constant_time_eq(g.as_bytes(), token.as_bytes()) => next.run(req).await,
        Some(_) => ApiError::Status(StatusCode::UNAUTHORIZED, "wrong API token".into()).into_response(),
        None => ApiError::Status(
            StatusCode::UNAUTHORIZED,
            "this daemon needs a token: send Authorization: Bearer <token> (the CLI reads OSDKEEPER_TOKEN)".into(),
        )
        .into_response(),
    }
}

/// Compares without returning early, also when the lengths differ (the
/// time taken says nothing about how much of a guess was right).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().max(b.len());
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..n {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

/// Refuses what a web page could send cross-site (`wire::browser_guard`).
async fn browser_guard(State(settings): State<Arc<ApiSettings>>, req: Request, next: Next) -> Response {
    let verdict = {
        let header = |name: header::HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
        let accepts = if req.uri().path() == "/api/v1/specs" { guard::YAML_OR_JSON } else { guard::JSON };
        guard::check(
            req.method().as_str(),
            header(header::HOST),
            header(header::ORIGIN),
            header(header::CONTENT_TYPE),
            settings.token.is_none(),
            accepts,
        )
    };
    match verdict {
        Ok(()) => next.run(req).await,
        Err(why) => ApiError::Status(StatusCode::FORBIDDEN, why).into_response(),
    }
}

pub fn router(daemon: Arc<Daemon>, settings: ApiSettings) -> Router {
    let api = Router::new()
        .route("/api/v1/hosts", get(hosts::list).post(hosts::add))
        .route("/api/v1/hosts/{name}", delete(hosts::remove))
        .route("/api/v1/hosts/{name}/labels", post(hosts::add_label))
        .route("/api/v1/hosts/{name}/labels/{label}", delete(hosts::remove_label))
        .route("/api/v1/devices", get(devices::list))
        .route("/api/v1/devices/held", get(devices::held))
        .route("/api/v1/devices/release", post(devices::release))
        .route("/api/v1/specs", get(specs::list).post(specs::apply))
        .route("/api/v1/specs/{service_name}", get(specs::get).delete(specs::remove))
        .route("/api/v1/events", get(events::list))
        .route("/api/v1/osds", get(osds::list))
        .route("/api/v1/osds/removals", get(osds::status).post(osds::remove))
        .route("/api/v1/osds/removals/stop", post(osds::stop))
        .route("/api/v1/osds/removals/{removal_id}", get(osds::detail))
        .route("/api/v1/devices/zap", post(devices::zap))
        .route("/api/v1/workers", get(events::workers))
        .route("/api/v1/deployments", get(deployments::list))
        .route("/api/v1/deployments/{deployment_id}", get(deployments::detail))
        .route("/api/v1/openapi.json", get(openapi))
        .route("/api/v1/stream", get(stream::stream))
        .route("/api/v1/summary", get(summary::summary))
        .route("/metrics", get(metrics::metrics))
        .route("/healthz", get(healthz))
        .route("/", get(web::index))
        .route("/assets/{name}", get(web::asset))
        .fallback(not_found)
        .method_not_allowed_fallback(|| async {
            ApiError::Status(StatusCode::METHOD_NOT_ALLOWED, "method not allowed here".into())
        });
    let http_metrics = Arc::new(metrics::HttpMetrics::default());
    let max_body = settings.max_body_bytes;
    let settings = Arc::new(settings);
    api.layer(middleware::from_fn_with_state(settings.clone(), require_token))
        .layer(middleware::from_fn_with_state(settings, browser_guard))
        .layer(middleware::from_fn_with_state(http_metrics.clone(), metrics::track))
        .layer(axum::Extension(http_metrics))
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(daemon)
}

#[cfg(test)]
mod tests;
