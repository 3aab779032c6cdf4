//! Bearer-token check for every request but `GET /healthz`. The agent
//! holds one token, its host's own (`wire::agent_token`: the daemon derives
//! it from its key), and takes no other.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::agent_server::config::Token;
use crate::agent_server::edge::error::ApiError;
use crate::agent_server::state::AgentState;

pub async fn require_token(State(s): State<AgentState>, req: Request, next: Next) -> Response {
    let Some(token) = s.token.as_ref() else {
        return next.run(req).await;
    };
    if req.method() == Method::GET && req.uri().path() == "/healthz" {
        return next.run(req).await;
    }
    let presented = req.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| {
        let (scheme, rest) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
    });
    match presented {
        Some(t) if token.matches(t.as_bytes()) => next.run(req).await,
        Some(_) => ApiError::unauthorized(format!(
            "wrong token: this agent takes only the token of host {host} (`osdkeeper agent-token {host}` on the \
             daemon's machine prints it)",
            host = s.inventory.host
        ))
        .into_response(),
        None => ApiError::unauthorized(
            "this agent needs a token: send the header `Authorization: Bearer <OSDKEEPER_AGENT_TOKEN>`",
        )
        .into_response(),
    }
}

/// Refuses what a web page could send cross-site, or through a rebound DNS
/// name to a token-less agent on loopback (`wire::browser_guard`).
pub async fn browser_guard(State(token): State<Option<Arc<Token>>>, req: Request, next: Next) -> Response {
    let verdict = {
        let header = |name: header::HeaderName| req.headers().get(name).and_then(|v| v.to_str().ok());
        crate::wire::browser_guard::check(
            req.method().as_str(),
            header(header::HOST),
            header(header::ORIGIN),
            header(header::CONTENT_TYPE),
            token.is_none(),
            crate::wire::browser_guard::JSON,
        )
    };
    match verdict {
        Ok(()) => next.run(req).await,
        Err(why) => ApiError::new(axum::http::StatusCode::FORBIDDEN, why).into_response(),
    }
}
