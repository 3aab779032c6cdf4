//! API tokens: the digest of each secret, as hex, with its role.

use async_trait::async_trait;
use sqlx::Row;

use super::{unique_violation, SqliteBackend};
use crate::domain::auth::Role;
use crate::store::backend::TokenRows;
use crate::store::{Result, StoreError, StoredToken};

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

#[async_trait]
impl TokenRows for SqliteBackend {
    async fn add_token(
        &self,
        name: &str,
        role: Role,
        digest: &[u8; 32],
        created_by: Option<&str>,
        now: i64,
    ) -> Result<Option<StoredToken>> {
        let inserted = sqlx::query(&format!(
            "INSERT INTO api_tokens (name, role, digest, created_at, created_by) VALUES (?, ?, ?, ?, ?)
             RETURNING {COLUMNS}"
        ))
        .bind(name)
        .bind(role.as_str())
        .bind(hex(digest))
        .bind(now)
        .bind(created_by)
        .fetch_one(&self.writes)
        .await;
        match inserted {
            Ok(row) => token_from(&row).map(Some),
            Err(e) if unique_violation(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn active_tokens(&self) -> Result<Vec<StoredToken>> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM api_tokens WHERE revoked_at IS NULL ORDER BY name"))
            .fetch_all(&self.reads)
            .await?;
        rows.iter().map(token_from).collect()
    }

    async fn any_token_ever(&self) -> Result<bool> {
        Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM api_tokens)").fetch_one(&self.reads).await?)
    }

    async fn revoke_token(&self, name: &str, now: i64) -> Result<Option<StoredToken>> {
        let row = sqlx::query(&format!(
            "UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL RETURNING {COLUMNS}"
        ))
        .bind(now)
        .bind(name)
        .fetch_optional(&self.writes)
        .await?;
        row.as_ref().map(token_from).transpose()
    }

    async fn token_used(&self, name: &str, at: i64) -> Result<()> {
        sqlx::query("UPDATE api_tokens SET last_used_at = ? WHERE name = ?")
            .bind(at)
            .bind(name)
            .execute(&self.writes)
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
}
