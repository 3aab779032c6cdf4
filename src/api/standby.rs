//! The HTTP face of a daemon before it leads: a standby listens at once
//! and answers every request with 503 and where the leader is, until it
//! takes the database's lock; then the gate opens onto the full router.
//! A daemon on a local file opens the gate before it listens.

use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::{Json, Router};
use tower::ServiceExt;

use crate::wire::api::error::{ErrorBody, StandbyHealth};
use crate::wire::leader::LeaderRecord;

/// What every request goes through: the full router once it is set.
pub struct Gate {
    db: String,
    open: OnceLock<Router>,
    leader: Mutex<Option<LeaderRecord>>,
}

impl Gate {
    pub fn new(db: String) -> Arc<Gate> {
        Arc::new(Gate { db, open: OnceLock::new(), leader: Mutex::new(None) })
    }

    /// From now on every request reaches `router`.
    pub fn open(&self, router: Router) {
        if self.open.set(router).is_err() {
            tracing::error!("the API was opened twice; the first router stays");
        }
    }

    pub fn is_open(&self) -> bool {
        self.open.get().is_some()
    }

    /// The leader's record, as last read.
    pub fn set_leader(&self, record: Option<LeaderRecord>) {
        *self.leader.lock().unwrap_or_else(|p| p.into_inner()) = record;
    }

    pub fn leader(&self) -> Option<LeaderRecord> {
        self.leader.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// One line: where to go instead.
    fn message(&self) -> String {
        match self.leader() {
            Some(l) => format!(
                "this osdkeeper daemon is a standby for {}: the leader serves at {} ({} pid {}); \
                 point OSDKEEPER_URL there",
                self.db, l.url, l.host, l.pid
            ),
            None => format!(
                "this osdkeeper daemon is a standby for {}: another daemon holds the database (it has not said \
                 where it serves)",
                self.db
            ),
        }
    }

    /// The router to serve: the gate in front of everything.
    pub fn router(self: &Arc<Gate>) -> Router {
        Router::new().fallback(through).with_state(self.clone())
    }
}

async fn through(State(gate): State<Arc<Gate>>, req: Request) -> Response {
    if let Some(router) = gate.open.get() {
        return match router.clone().oneshot(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        };
    }
    let message = gate.message();
    if wants_page(&req) {
        return (StatusCode::SERVICE_UNAVAILABLE, Html(standby_page(&message, gate.leader().as_ref()))).into_response();
    }
    if req.uri().path() == "/healthz" {
        let body = StandbyHealth { status: "standby".into(), db: gate.db.clone(), leader: gate.leader(), message };
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    (StatusCode::SERVICE_UNAVAILABLE, Json(ErrorBody { error: message, errors: Vec::new() })).into_response()
}

/// A browser opening the dashboard (a GET for HTML outside the API): it
/// gets a page saying where the leader is, not a JSON error.
fn wants_page(req: &Request) -> bool {
    let path = req.uri().path();
    let html = req
        .headers()
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    req.method() == axum::http::Method::GET && html && !path.starts_with("/api/") && path != "/healthz"
}

/// The standby's page: the message, and a link to the leader's dashboard
/// when its address is known. It reloads itself, so that a page left open
/// on a standby shows the dashboard once this daemon leads.
fn standby_page(message: &str, leader: Option<&LeaderRecord>) -> String {
    let link = leader
        .map(|l| format!("<p><a href=\"{0}/\">Open the leader's dashboard at {0}</a></p>", escape(&l.url)))
        .unwrap_or_default();
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"10\">\
         <title>osdkeeper: standby</title></head><body><h1>osdkeeper: standby</h1>\
         <p data-testid=\"standby-message\">{}</p>{link}</body></html>",
        escape(message)
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    fn leader() -> LeaderRecord {
        LeaderRecord { url: "https://admin-2:8740".into(), host: "admin-2".into(), pid: 4242, since_ms: 1 }
    }

    async fn answer(gate: &Arc<Gate>, path: &str, accept: &str) -> (StatusCode, String, String) {
        let req = Request::builder().uri(path).header("accept", accept).body(Body::empty()).unwrap();
        let res = gate.router().oneshot(req).await.unwrap();
        let status = res.status();
        let kind = res.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let body = axum::body::to_bytes(res.into_body(), 1 << 20).await.unwrap();
        (status, kind, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_browser_on_a_standby_gets_a_page_naming_the_leader_and_the_api_gets_json() {
        let gate = Gate::new("ceph:osdkeeper/prod/osdkeeper.db".into());
        gate.set_leader(Some(leader()));
        let (status, kind, body) = answer(&gate, "/", "text/html,application/xhtml+xml").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(kind.starts_with("text/html"), "{kind}");
        assert!(body.contains("a standby for ceph:osdkeeper/prod/osdkeeper.db"), "{body}");
        assert!(body.contains("<a href=\"https://admin-2:8740/\">"), "{body}");
        let (status, kind, body) = answer(&gate, "/api/v1/osds", "text/html").await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(kind.starts_with("application/json"), "the API answers JSON even to a browser: {kind}");
        assert!(body.contains("the leader serves at https://admin-2:8740"), "{body}");
        let (_, kind, _) = answer(&gate, "/", "application/json").await;
        assert!(kind.starts_with("application/json"), "{kind}");
    }

    #[tokio::test]
    async fn the_page_escapes_what_it_shows_and_says_so_when_no_leader_is_known() {
        let gate = Gate::new("ceph:p/n/<db>.db".into());
        let (_, _, body) = answer(&gate, "/", "text/html").await;
        assert!(body.contains("ceph:p/n/&lt;db&gt;.db") && !body.contains("<db>"), "{body}");
        assert!(body.contains("has not said where it serves") && !body.contains("<a href"), "{body}");
    }
}
