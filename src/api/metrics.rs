//! `/metrics` in Prometheus' text format: removals by state, PGs left, drain
//! rate and ETA per OSD being removed, inventory age and poll errors per
//! host, and API request latency. Written by hand: a few gauges and one
//! histogram do not need a metrics framework. The fleet's series are
//! rendered at most once a second (`FLEET_KEPT_FOR`); every label comes
//! from a closed set or from the fleet, never from what a client sent.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Extension;

use crate::daemon::Daemon;
use crate::domain::removal::Phase;
use crate::text::put;

const BUCKETS: [f64; 11] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Request latency by method and route, and the fleet's series as last
/// rendered.
#[derive(Default)]
pub struct HttpMetrics {
    by_route: Mutex<BTreeMap<(&'static str, String), Histogram>>,
    fleet: tokio::sync::Mutex<Option<(Instant, Arc<str>)>>,
}

/// How long the fleet's series (removals, hosts, workers) are kept once
/// rendered: they grow with the fleet (300 KB and about a millisecond at
/// 2000 hosts), and `/metrics` needs no token, so any number of scrapes
/// costs at most one rendering a second; a scrape comes every 15 s or more.
const FLEET_KEPT_FOR: Duration = Duration::from_secs(1);

impl HttpMetrics {
    fn observe(&self, method: &'static str, route: &str, seconds: f64) {
        let mut m = self.by_route.lock().expect("metrics lock");
        let h = m.entry((method, route.to_string())).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                h.counts[i] += 1;
            }
        }
        h.count += 1;
        h.sum += seconds;
    }
}

/// The methods a series is kept for; any other is counted as `other`.
const METHODS: [Method; 9] = [
    Method::GET,
    Method::HEAD,
    Method::POST,
    Method::PUT,
    Method::DELETE,
    Method::CONNECT,
    Method::OPTIONS,
    Method::TRACE,
    Method::PATCH,
];

/// A request's method as a label, from a closed set: a method is any token
/// the client makes up, and each new label would be a series kept forever.
fn method_label(method: &Method) -> &'static str {
    METHODS.iter().find(|m| *m == method).map_or("other", Method::as_str)
}

/// Middleware: times every request by its method (`method_label`) and its
/// route template (not its raw path, which would make a series per host
/// name; a path no route matches is `unmatched`).
pub async fn track(State(m): State<Arc<HttpMetrics>>, req: Request, next: Next) -> Response {
    let route =
        req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_else(|| "unmatched".into());
    let method = method_label(req.method());
    let start = Instant::now();
    let resp = next.run(req).await;
    m.observe(method, &route, start.elapsed().as_secs_f64());
    resp
}

fn esc(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

pub async fn metrics(State(d): State<Arc<Daemon>>, Extension(http): Extension<Arc<HttpMetrics>>) -> Response {
    match render(&d, &http).await {
        Ok(text) => ([("content-type", "text/plain; version=0.0.4")], text).into_response(),
        Err(e) => {
            (axum::http::StatusCode::INTERNAL_SERVER_ERROR, format!("# cannot render metrics: {e}\n")).into_response()
        }
    }
}

async fn render(d: &Daemon, http: &HttpMetrics) -> Result<String, String> {
    let fleet = {
        // Held while rendering: scrapes that come meanwhile wait for it.
        let mut kept = http.fleet.lock().await;
        match &*kept {
            Some((at, text)) if at.elapsed() < FLEET_KEPT_FOR => text.clone(),
            _ => {
                let text: Arc<str> = render_fleet(d).await?.into();
                *kept = Some((Instant::now(), text.clone()));
                text
            }
        }
    };
    let mut out = String::with_capacity(fleet.len() + 16 * 1024);
    out.push_str(&fleet);
    render_requests(http, &mut out);
    Ok(out)
}

/// The removals', hosts' and workers' series.
async fn render_fleet(d: &Daemon) -> Result<String, String> {
    let view = d.metrics_view().await.map_err(|e| e.to_string())?;
    let mut out = String::new();
    put!(out, "# HELP osdkeeper_removals Active OSD removals by state.\n# TYPE osdkeeper_removals gauge\n");
    let mut by_state: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &view.removals {
        *by_state.entry(r.state.as_str()).or_default() += 1;
    }
    for phase in Phase::ALL.iter().filter(|p| !p.is_finished()) {
        let state = phase.as_str();
        put!(out, "osdkeeper_removals{{state=\"{state}\"}} {}\n", by_state.get(state).copied().unwrap_or(0));
    }
    let mut pgs = String::new();
    let mut rate = String::new();
    let mut eta = String::new();
    for st in &view.removals {
        let labels = format!("osd=\"{}\",host=\"{}\",state=\"{}\"", st.osd_id, esc(&st.host), st.state.as_str());
        if let Some(p) = st.pgs_now {
            put!(pgs, "osdkeeper_removal_pgs_left{{{labels}}} {p}\n");
        }
        if let Some(x) = st.pgs_per_min {
            put!(rate, "osdkeeper_removal_drain_rate_pgs_per_minute{{{labels}}} {x}\n");
        }
        if let Some(x) = st.eta_s {
            put!(eta, "osdkeeper_removal_eta_seconds{{{labels}}} {x}\n");
        }
    }
    put!(out, "# HELP osdkeeper_removal_pgs_left Placement groups left on each OSD being removed.\n# TYPE osdkeeper_removal_pgs_left gauge\n{pgs}");
    put!(out, "# HELP osdkeeper_removal_drain_rate_pgs_per_minute PGs moved off per minute, recent window.\n# TYPE osdkeeper_removal_drain_rate_pgs_per_minute gauge\n{rate}");
    put!(out, "# HELP osdkeeper_removal_eta_seconds Time left for the drain at the current rate.\n# TYPE osdkeeper_removal_eta_seconds gauge\n{eta}");

    put!(out, "# HELP osdkeeper_inventory_age_seconds Age of each host's latest inventory.\n# TYPE osdkeeper_inventory_age_seconds gauge\n");
    for h in &view.hosts {
        if let Some(age) = h.inventory_age_s {
            put!(out, "osdkeeper_inventory_age_seconds{{host=\"{}\"}} {age}\n", esc(&h.name));
        }
    }
    put!(out, "# HELP osdkeeper_host_unreachable 1 while polls of the host's agent fail.\n# TYPE osdkeeper_host_unreachable gauge\n");
    for h in &view.hosts {
        put!(out, "osdkeeper_host_unreachable{{host=\"{}\"}} {}\n", esc(&h.name), u8::from(h.unreachable));
    }
    put!(out, "# HELP osdkeeper_poll_errors_total Failed inventory polls per host since the daemon started.\n# TYPE osdkeeper_poll_errors_total counter\n");
    for h in &view.hosts {
        put!(out, "osdkeeper_poll_errors_total{{host=\"{}\"}} {}\n", esc(&h.name), h.poll_errors);
    }
    put!(out, "# HELP osdkeeper_worker_steps_total Steps each background worker ran since the daemon started.\n# TYPE osdkeeper_worker_steps_total counter\n");
    for w in &view.workers {
        put!(out, "osdkeeper_worker_steps_total{{worker=\"{}\"}} {}\n", w.name, w.steps);
    }
    put!(out, "# HELP osdkeeper_worker_consecutive_errors Failed steps in a row of each background worker.\n# TYPE osdkeeper_worker_consecutive_errors gauge\n");
    for w in &view.workers {
        put!(out, "osdkeeper_worker_consecutive_errors{{worker=\"{}\"}} {}\n", w.name, w.consecutive_errors);
    }
    put!(out, "# HELP osdkeeper_worker_last_success_timestamp_seconds When each worker last finished a step without error.\n# TYPE osdkeeper_worker_last_success_timestamp_seconds gauge\n");
    for w in &view.workers {
        if let Some(at) = w.last_success_at {
            put!(
                out,
                "osdkeeper_worker_last_success_timestamp_seconds{{worker=\"{}\"}} {}\n",
                w.name,
                at as f64 / 1000.0
            );
        }
    }
    Ok(out)
}

/// The request latency histogram, as it is now.
fn render_requests(http: &HttpMetrics, out: &mut String) {
    put!(out, "# HELP osdkeeper_http_request_duration_seconds API request latency.\n# TYPE osdkeeper_http_request_duration_seconds histogram\n");
    for ((method, route), h) in http.by_route.lock().expect("metrics lock").iter() {
        let l = format!("method=\"{method}\",route=\"{}\"", esc(route));
        for (i, b) in BUCKETS.iter().enumerate() {
            put!(out, "osdkeeper_http_request_duration_seconds_bucket{{{l},le=\"{b}\"}} {}\n", h.counts[i]);
        }
        put!(out, "osdkeeper_http_request_duration_seconds_bucket{{{l},le=\"+Inf\"}} {}\n", h.count);
        put!(out, "osdkeeper_http_request_duration_seconds_sum{{{l}}} {}\n", h.sum);
        put!(out, "osdkeeper_http_request_duration_seconds_count{{{l}}} {}\n", h.count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_labelled_from_a_closed_set() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        for made_up in ["FOO", "get", "M0001", "PROPFIND"] {
            assert_eq!(method_label(&Method::from_bytes(made_up.as_bytes()).unwrap()), "other", "{made_up}");
        }
    }
}
