//! Who is asking, and whether they may: finds the caller from the bearer
//! token (the configured bootstrap admin, or a stored token), asks the
//! core's role table (`domain::auth`) what the matched route needs, and
//! obeys its decision. A request let through runs as its token
//! (`daemon::audit`), so the events it records carry the token's name.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::error::ApiError;
use crate::daemon::audit::acting_as;
use crate::daemon::Daemon;
use crate::domain::auth::{self, Caller, Decision, Need, Role};
use crate::wire::api::tokens::{Forbidden, WhoAmI};

/// What the checks need: the daemon (stored tokens) and the digest of the
/// configured bootstrap token.
pub struct Auth {
    daemon: Arc<Daemon>,
    bootstrap: Option<[u8; 32]>,
}

impl Auth {
    pub fn new(daemon: Arc<Daemon>, bootstrap: Option<&str>) -> Auth {
        Auth { daemon, bootstrap: bootstrap.map(auth::digest) }
    }

    /// No token exists (none configured, none ever created): loopback only,
    /// as the configuration insists, and no request needs one.
    pub async fn is_open(&self) -> Result<bool, ApiError> {
        Ok(self.bootstrap.is_none() && !self.daemon.tokens.has_stored_tokens().await?)
    }

    /// Who presented `secret` (None: no Authorization header).
    async fn identify(&self, secret: Option<&str>) -> Result<Identity, ApiError> {
        if self.is_open().await? {
            return Ok(Identity::Known(WhoAmI { name: auth::ANONYMOUS.into(), role: Role::Admin, open: true }));
        }
        let Some(secret) = secret else { return Ok(Identity::Missing) };
        // Both compared in full whichever matches (see `auth::find_by_digest`).
        let bootstrap = self.bootstrap.is_some_and(|b| auth::constant_time_eq(&b, &auth::digest(secret)));
        let stored = self.daemon.tokens.identify_token(secret).await?;
        Ok(match (bootstrap, stored) {
            (true, _) => Identity::Known(WhoAmI { name: auth::BOOTSTRAP.into(), role: Role::Admin, open: false }),
            (false, Some((name, role))) => Identity::Known(WhoAmI { name, role, open: false }),
            (false, None) => Identity::Unknown,
        })
    }
}

enum Identity {
    Missing,
    Unknown,
    Known(WhoAmI),
}

fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// The route layer: runs after routing (it needs the matched route), before
/// the handler reads anything of the request.
pub async fn authorize(State(a): State<Arc<Auth>>, mut req: Request, next: Next) -> Response {
    let Some(route) = req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()) else {
        // Route layers run only on matched routes; nothing to decide otherwise.
        return next.run(req).await;
    };
    let method = req.method().as_str().to_string();
    let need = auth::need(&method, &route);
    if need == Need::Nothing {
        return next.run(req).await;
    }
    let identity = match a.identify(bearer(&req)).await {
        Ok(i) => i,
        Err(e) => return e.into_response(),
    };
    let (caller, who) = match &identity {
        Identity::Known(w) if w.open => (Caller::Open, Some(w)),
        Identity::Known(w) => (Caller::Token { name: &w.name, role: w.role }, Some(w)),
        Identity::Missing => (Caller::Missing, None),
        Identity::Unknown => (Caller::Unknown, None),
    };
    match (auth::decide(need, caller), who) {
        (Decision::Allow, Some(who)) => {
            let who = who.clone();
            let name = who.name.clone();
            req.extensions_mut().insert(who);
            acting_as(&name, next.run(req)).await
        }
        (Decision::Allow, None) => next.run(req).await,
        (Decision::Unauthenticated(why), _) => ApiError::Status(StatusCode::UNAUTHORIZED, why.into()).into_response(),
        (Decision::Forbidden { needed, has }, who) => {
            let name = who.map_or(auth::ANONYMOUS, |w| w.name.as_str());
            if auth::is_mutating(&method) {
                a.daemon.tokens.record_denied(name, has, needed, &format!("{method} {route}")).await;
            }
            let error = format!("{method} {route} needs a token with the {needed} role; token {name} has {has}");
            (StatusCode::FORBIDDEN, Json(Forbidden { error, required_role: needed, role: has })).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::auth::RULES;

    /// The router and the role table list the same routes: a new route
    /// without a rule, or a rule left behind by a removed route, fails here.
    #[test]
    fn every_route_has_a_rule_and_every_rule_a_route() {
        let routes = crate::api::routes();
        for (method, path) in &routes {
            assert!(RULES.iter().any(|r| r.method == *method && r.path == *path), "{method} {path} has no rule");
        }
        for r in RULES {
            assert!(routes.contains(&(r.method, r.path)), "{} {} has a rule but no route", r.method, r.path);
        }
    }
}
