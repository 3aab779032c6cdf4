//! The HTTP face of a daemon before it leads: a standby listens at once
//! and answers every request with 503 and where the leader is, until it
//! takes the database's lock; then the gate opens onto the full router.
//! A daemon on a local file opens the gate before it listens.

use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
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

    fn leader(&self) -> Option<LeaderRecord> {
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
    if req.uri().path() == "/healthz" {
        let body = StandbyHealth { status: "standby".into(), db: gate.db.clone(), leader: gate.leader(), message };
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    (StatusCode::SERVICE_UNAVAILABLE, Json(ErrorBody { error: message, errors: Vec::new() })).into_response()
}
