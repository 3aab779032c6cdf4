//! Named API tokens: creating one (its secret made here from the OS's
//! random source and returned once), listing and revoking them, and finding
//! the token a presented secret is. The stored tokens are read once and
//! again after each change, so identifying a caller costs no query; a
//! revocation is in force once it has answered.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::events::Events;
use super::DaemonError;
use crate::clock::now_ms;
use crate::domain::auth::{self, Role};
use crate::domain::event::{EventKind, Level};
use crate::store::{Store, StoredToken};
use crate::wire::api::tokens::{CreatedToken, TokenInfo};

/// A use is written to the database at most this often per token.
const USE_RECORDED_EVERY_MS: i64 = 60_000;

pub struct Tokens {
    store: Store,
    events: Arc<Events>,
    /// Whether a bootstrap token (`OSDKEEPER_TOKEN`) is configured.
    bootstrap: bool,
    /// The stored tokens, read once and after each change.
    known: tokio::sync::RwLock<Option<Arc<Known>>>,
}

struct Known {
    active: Vec<Active>,
    /// A token was ever created: the daemon is no longer open, even with
    /// every token revoked (an operator who revokes a leaked last token
    /// means "nobody", not "anybody").
    ever: bool,
}

struct Active {
    name: String,
    role: Role,
    digest: [u8; 32],
    use_recorded_at: AtomicI64,
}

fn info(t: StoredToken) -> TokenInfo {
    TokenInfo {
        name: t.name,
        role: t.role,
        created_at: Some(t.created_at),
        created_by: t.created_by,
        last_used_at: t.last_used_at,
        configured: false,
    }
}

impl Tokens {
    pub fn new(store: Store, events: Arc<Events>, bootstrap: bool) -> Tokens {
        Tokens { store, events, bootstrap, known: Default::default() }
    }

    async fn known_tokens(&self) -> Result<Arc<Known>, DaemonError> {
        if let Some(k) = self.known.read().await.as_ref() {
            return Ok(k.clone());
        }
        let mut slot = self.known.write().await;
        if let Some(k) = slot.as_ref() {
            return Ok(k.clone());
        }
        let active = self
            .store
            .active_tokens()
            .await?
            .into_iter()
            .map(|t| Active {
                name: t.name,
                role: t.role,
                digest: t.digest,
                use_recorded_at: AtomicI64::new(t.last_used_at.unwrap_or(0)),
            })
            .collect();
        let known = Arc::new(Known { active, ever: self.store.any_token_ever().await? });
        *slot = Some(known.clone());
        Ok(known)
    }

    async fn forget_known_tokens(&self) {
        *self.known.write().await = None;
    }

    /// Whether any token was ever created here (besides the configured one).
    pub async fn has_stored_tokens(&self) -> Result<bool, DaemonError> {
        Ok(self.known_tokens().await?.ever)
    }

    /// The name and role of the stored token whose secret this is.
    pub async fn identify_token(&self, secret: &str) -> Result<Option<(String, Role)>, DaemonError> {
        let known = self.known_tokens().await?;
        let Some(t) = auth::find_by_digest(&known.active, |t| &t.digest, &auth::digest(secret)) else {
            return Ok(None);
        };
        let now = now_ms();
        let before = t.use_recorded_at.load(Ordering::Relaxed);
        let due = now - before >= USE_RECORDED_EVERY_MS;
        if due && t.use_recorded_at.compare_exchange(before, now, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            if let Err(e) = self.store.token_used(&t.name, now).await {
                // Only `token ls` shows it; the request itself is fine.
                tracing::warn!(token = t.name, "cannot record the token's use: {e}");
            }
        }
        Ok(Some((t.name.clone(), t.role)))
    }

    /// `token create NAME --role ROLE`: the secret is in the answer and nowhere else.
    pub async fn create_token(&self, name: &str, role: Role) -> Result<CreatedToken, DaemonError> {
        auth::check_name(name).map_err(DaemonError::Invalid)?;
        let mut random = [0u8; 32];
        getrandom::getrandom(&mut random)
            .map_err(|e| DaemonError::Internal(format!("no randomness from the OS for a token: {e}")))?;
        let secret = auth::secret_from(&random);
        let by = super::audit::actor();
        let t = self.store.add_token(name, role, &auth::digest(&secret), by.as_deref(), now_ms()).await?;
        self.forget_known_tokens().await;
        self.events
            .record(
                Level::Info,
                EventKind::TokenCreated,
                None,
                Some(name),
                format!("Created API token {name} ({role})"),
            )
            .await;
        Ok(CreatedToken { token: info(t), secret })
    }

    /// `token ls`: the configured bootstrap token first, then the stored ones by name.
    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, DaemonError> {
        let bootstrap = self.bootstrap.then(|| TokenInfo {
            name: auth::BOOTSTRAP.into(),
            role: Role::Admin,
            created_at: None,
            created_by: None,
            last_used_at: None,
            configured: true,
        });
        let stored = self.store.active_tokens().await?.into_iter().map(info);
        Ok(bootstrap.into_iter().chain(stored).collect())
    }

    /// `token revoke NAME`: refused from the moment this answers.
    pub async fn revoke_token(&self, name: &str) -> Result<(), DaemonError> {
        if name == auth::BOOTSTRAP && self.bootstrap {
            return Err(DaemonError::Conflict(
                "the bootstrap token is the daemon's configured OSDKEEPER_TOKEN (or token_file): change it there \
                 and restart the daemon"
                    .into(),
            ));
        }
        self.store.revoke_token(name, now_ms()).await?;
        self.forget_known_tokens().await;
        self.events
            .record(Level::Info, EventKind::TokenRevoked, None, Some(name), format!("Revoked API token {name}"))
            .await;
        Ok(())
    }

    /// A token asked for a change its role does not allow: recorded, so the
    /// log shows attempts as well as changes.
    pub async fn record_denied(&self, name: &str, role: Role, needed: Role, what: &str) {
        let message = format!("Refused {what} to token {name} ({role}): it needs the {needed} role");
        super::audit::acting_as(
            name,
            self.events.record(Level::Warning, EventKind::AccessDenied, None, Some(name), message),
        )
        .await;
    }
}
