//! Named API tokens: each stored as the digest of its secret with its role.
//! Revoked tokens keep their row (and so their name) for the event log.

use super::{Result, Store, StoreError};
use crate::domain::auth::Role;

/// A token as stored: the digest, never the secret.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredToken {
    pub name: String,
    pub role: Role,
    pub digest: [u8; 32],
    pub created_at: i64,
    pub created_by: Option<String>,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

impl Store {
    pub async fn add_token(
        &self,
        name: &str,
        role: Role,
        digest: &[u8; 32],
        created_by: Option<&str>,
        now: i64,
    ) -> Result<StoredToken> {
        self.backend.add_token(name, role, digest, created_by, now).await?.ok_or_else(|| {
            StoreError::Conflict(format!(
                "a token named {name} exists or existed (names of revoked tokens are not reused, so that the \
                 event log stays unambiguous)"
            ))
        })
    }

    /// Tokens not revoked, by name.
    pub async fn active_tokens(&self) -> Result<Vec<StoredToken>> {
        self.backend.active_tokens().await
    }

    /// Whether any token was ever created (revoked ones count).
    pub async fn any_token_ever(&self) -> Result<bool> {
        self.backend.any_token_ever().await
    }

    /// Revokes a token; one alone (not already revoked) can be.
    pub async fn revoke_token(&self, name: &str, now: i64) -> Result<StoredToken> {
        self.backend
            .revoke_token(name, now)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("no token named {name} (see `osdkeeper token ls`)")))
    }

    pub async fn token_used(&self, name: &str, at: i64) -> Result<()> {
        self.backend.token_used(name, at).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_are_created_listed_and_revoked_and_names_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("t.db")).await.unwrap();
        assert!(!s.any_token_ever().await.unwrap());
        let d = crate::domain::auth::digest("secret");
        let t = s.add_token("ops", Role::Operate, &d, Some("bootstrap"), 5).await.unwrap();
        assert_eq!((t.role, t.digest, t.created_by.as_deref()), (Role::Operate, d, Some("bootstrap")));
        s.token_used("ops", 9).await.unwrap();
        assert_eq!(s.active_tokens().await.unwrap()[0].last_used_at, Some(9));
        assert!(matches!(s.revoke_token("nope", 1).await, Err(StoreError::NotFound(_))));
        assert_eq!(s.revoke_token("ops", 10).await.unwrap().revoked_at, Some(10));
        assert!(s.active_tokens().await.unwrap().is_empty());
        assert!(s.any_token_ever().await.unwrap(), "a revoked token still counts");
        assert!(matches!(s.revoke_token("ops", 11).await, Err(StoreError::NotFound(_))), "revoked once");
        let again = s.add_token("ops", Role::Read, &crate::domain::auth::digest("other"), None, 12).await;
        assert!(matches!(again, Err(StoreError::Conflict(_))));
    }
}
