//! Named API tokens: each stored as the digest of its secret with its role.
//! Revoked tokens keep their row (and so their name) for the event log.

use sqlx::Row;

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

const COLUMNS: &str = "name, role, digest, created_at, created_by, last_used_at, revoked_at";

fn hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

fn token_from(row: &sqlx::sqlite::SqliteRow) -> Result<StoredToken> {
    let name: String = row.try_get("name")?;
    let role: String = row.try_get("role")?;
    let digest: String = row.try_get("digest")?;
    Ok(StoredToken {
        role: Role::parse(&role).ok_or_else(|| StoreError::Corrupt(format!("token {name}: role {role:?}")))?,
        digest: unhex(&digest).ok_or_else(|| StoreError::Corrupt(format!("token {name}: digest")))?,
        created_at: row.try_get("created_at")?,
        created_by: row.try_get("created_by")?,
        last_used_at: row.try_get("last_used_at")?,
        revoked_at: row.try_get("revoked_at")?,
        name,
    })
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
        let inserted = sqlx::query(&format!(
            "INSERT INTO api_tokens (name, role, digest, created_at, created_by) VALUES (?, ?, ?, ?, ?)
             RETURNING {COLUMNS}"
        ))
        .bind(name)
        .bind(role.as_str())
        .bind(hex(digest))
        .bind(now)
        .bind(created_by)
        .fetch_one(&self.pool)
        .await;
        match inserted {
            Ok(row) => token_from(&row),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(StoreError::Conflict(format!(
                "a token named {name} exists or existed (names of revoked tokens are not reused, so that the \
                 event log stays unambiguous)"
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// Tokens not revoked, by name.
    pub async fn active_tokens(&self) -> Result<Vec<StoredToken>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM api_tokens WHERE revoked_at IS NULL ORDER BY name"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(token_from).collect()
    }

    /// Whether any token was ever created (revoked ones count).
    pub async fn any_token_ever(&self) -> Result<bool> {
        Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM api_tokens)").fetch_one(&self.pool).await?)
    }

    /// Revokes a token; one alone (not already revoked) can be.
    pub async fn revoke_token(&self, name: &str, now: i64) -> Result<StoredToken> {
        let row = sqlx::query(&format!(
            "UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL RETURNING {COLUMNS}"
        ))
        .bind(now)
        .bind(name)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("no token named {name} (see `osdkeeper token ls`)")))?;
        token_from(&row)
    }

    pub async fn token_used(&self, name: &str, at: i64) -> Result<()> {
        sqlx::query("UPDATE api_tokens SET last_used_at = ? WHERE name = ?")
            .bind(at)
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_round_trip_as_hex() {
        let d = crate::domain::auth::digest("x");
        assert_eq!(unhex(&hex(&d)), Some(d));
        assert_eq!(unhex("zz"), None);
        assert_eq!(unhex(&"é".repeat(32)), None);
    }

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
