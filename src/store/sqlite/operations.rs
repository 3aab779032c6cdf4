//! Durable operations of every kind in one table, their state as the
//! kind's JSON (the codecs, outside the adapter, read and write it).

use async_trait::async_trait;
use sqlx::Row;

use super::actions::{action_from, ACTION_COLUMNS};
use super::{unique_violation, SqliteBackend};
use crate::domain::operation::{Action, Kind};
use crate::store::backend::{
    Added, Change, Fill, NewOperationRow, OperationQuery, OperationRow, OperationRows, SavedOperation,
};
use crate::store::Result;

const COLUMNS: &str = "o.id, o.number, o.subject, o.host, o.state, o.waiting_on, o.last_error, o.actor, \
                       o.created_at, o.updated_at, o.finished_at, o.failures, o.version";

fn row_from(row: &sqlx::sqlite::SqliteRow) -> Result<OperationRow> {
    Ok(OperationRow {
        id: row.try_get("id")?,
        number: row.try_get("number")?,
        subject: row.try_get("subject")?,
        host: row.try_get("host")?,
        state: row.try_get("state")?,
        waiting_on: row.try_get("waiting_on")?,
        last_error: row.try_get("last_error")?,
        actor: row.try_get("actor")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        finished_at: row.try_get("finished_at")?,
        failures: row.try_get("failures")?,
        version: row.try_get("version")?,
    })
}

/// A kind's operations that pass `filter` (the kind is a name of ours,
/// written in the statement as it was before the seam: the same plans).
fn select(kind: Kind, filter: &str) -> String {
    format!("SELECT {COLUMNS} FROM operations o WHERE o.kind = '{}' AND {filter}", kind.as_str())
}

/// The statement for a query and its one parameter, if any.
fn statement(kind: Kind, q: OperationQuery<'_>) -> (String, Option<Param<'_>>) {
    use OperationQuery as Q;
    match q {
        Q::Id(id) => (select(kind, "o.id = ?"), Some(Param::Int(id))),
        Q::Number(n) => (select(kind, "o.number = ?"), Some(Param::Int(n))),
        Q::Active => (select(kind, "o.active = 1 ORDER BY o.id"), None),
        Q::ActiveOn(s) => (select(kind, "o.active = 1 AND o.subject = ?"), Some(Param::Text(s))),
        Q::LatestOn(s) => (select(kind, "o.subject = ? ORDER BY o.id DESC LIMIT 1"), Some(Param::Text(s))),
        Q::InPhase(p) => (select(kind, "o.phase = ? ORDER BY o.id"), Some(Param::Text(p))),
        Q::WithFinished(limit) => {
            let kind = kind.as_str();
            let sql = format!(
                "SELECT {COLUMNS} FROM operations o WHERE o.kind = '{kind}' AND (o.active = 1 OR o.id IN
                   (SELECT id FROM operations WHERE kind = '{kind}' AND active = 0
                    ORDER BY finished_at DESC, id DESC LIMIT ?))
                 ORDER BY o.id"
            );
            (sql, Some(Param::Int(limit)))
        }
        Q::Finished(limit) => {
            (select(kind, "o.active = 0 ORDER BY o.finished_at DESC, o.id DESC LIMIT ?"), Some(Param::Int(limit)))
        }
        Q::Latest(limit) => (select(kind, "1 = 1 ORDER BY o.id DESC LIMIT ?"), Some(Param::Int(limit))),
        Q::LatestPerSubjectAndIn(phase) => {
            let k = kind.as_str();
            let filter = format!(
                "(o.id IN (SELECT MAX(id) FROM operations WHERE kind = '{k}' GROUP BY subject)
                  OR o.id IN (SELECT MAX(id) FROM operations WHERE kind = '{k}' AND phase = ? GROUP BY subject))
                 ORDER BY o.id"
            );
            (select(kind, &filter), Some(Param::Text(phase)))
        }
    }
}

enum Param<'a> {
    Int(i64),
    Text(&'a str),
}

#[async_trait]
impl OperationRows for SqliteBackend {
    async fn add_operations(&self, kind: Kind, new: &[NewOperationRow], now: i64, fill: Fill<'_>) -> Result<Added> {
        let mut tx = self.write().await?;
        let mut ids = Vec::with_capacity(new.len());
        for (i, n) in new.iter().enumerate() {
            // Numbered after the kind's highest number: unique, as this
            // transaction holds the write lock.
            let inserted = sqlx::query(
                "INSERT INTO operations (kind, number, subject, host, phase, active, state, actor, created_at,
                                         updated_at)
                 SELECT ?1, COALESCE(MAX(number), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8
                 FROM operations WHERE kind = ?1
                 RETURNING id, number",
            )
            .bind(kind.as_str())
            .bind(&n.subject)
            .bind(&n.host)
            .bind(n.phase)
            .bind(i64::from(n.active))
            .bind(&n.state)
            .bind(&n.actor)
            .bind(now)
            .fetch_one(&mut *tx)
            .await;
            let (id, number): (i64, i64) = match inserted {
                Ok(row) => (row.try_get(0)?, row.try_get(1)?),
                Err(e) if unique_violation(&e) => return Ok(Added::SubjectTaken(i)),
                Err(e) => return Err(e.into()),
            };
            if let Some(state) = fill(i, number) {
                sqlx::query("UPDATE operations SET state = ? WHERE id = ?")
                    .bind(state)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            ids.push(id);
        }
        tx.commit().await?;
        Ok(Added::All(ids))
    }

    async fn operations(&self, kind: Kind, q: OperationQuery<'_>) -> Result<Vec<OperationRow>> {
        let (sql, param) = statement(kind, q);
        let query = sqlx::query(&sql);
        let query = match param {
            Some(Param::Int(v)) => query.bind(v),
            Some(Param::Text(v)) => query.bind(v),
            None => query,
        };
        let rows = query.fetch_all(&self.reads).await?;
        rows.iter().map(row_from).collect()
    }

    async fn save_operation(&self, op: &SavedOperation<'_>, expected_version: i64) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE operations SET state = ?, phase = ?, active = ?, waiting_on = ?, last_error = ?, updated_at = ?,
                    finished_at = ?, failures = ?, version = version + 1
             WHERE id = ? AND version = ?",
        )
        .bind(&op.state)
        .bind(op.phase)
        .bind(i64::from(op.active))
        .bind(op.waiting_on)
        .bind(op.last_error)
        .bind(op.updated_at)
        .bind(op.finished_at)
        .bind(op.failures)
        .bind(op.id)
        .bind(expected_version)
        .execute(&self.writes)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn update_active_operations(
        &self,
        kind: Kind,
        subjects: &[String],
        now: i64,
        change: Change<'_>,
    ) -> Result<Vec<i64>> {
        let mut tx = self.write().await?;
        let mut changed = Vec::new();
        for subject in subjects {
            let row = sqlx::query(&select(kind, "o.active = 1 AND o.subject = ?"))
                .bind(subject)
                .fetch_optional(&mut *tx)
                .await?;
            let row = row.as_ref().map(row_from).transpose()?;
            let id = row.as_ref().map(|r| r.id);
            let (Some(id), Some(state)) = (id, change(subject, row)?) else { continue };
            sqlx::query("UPDATE operations SET state = ?, updated_at = ?, version = version + 1 WHERE id = ?")
                .bind(state)
                .bind(now)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            changed.push(id);
        }
        tx.commit().await?;
        Ok(changed)
    }

    async fn interrupted_operations(&self, kind: Kind) -> Result<Vec<(OperationRow, Action)>> {
        let rows = sqlx::query(
            "SELECT a.id AS action_id FROM operation_actions a JOIN operations o ON o.id = a.operation_id
             WHERE o.kind = ? AND o.active = 1 AND a.finished_at IS NULL
               AND a.id = (SELECT MAX(id) FROM operation_actions WHERE operation_id = o.id)
             ORDER BY a.id",
        )
        .bind(kind.as_str())
        .fetch_all(&self.reads)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let action_id: i64 = row.try_get("action_id")?;
            let action =
                sqlx::query(&format!("SELECT {ACTION_COLUMNS}, NULL AS output FROM operation_actions WHERE id = ?"))
                    .bind(action_id)
                    .fetch_one(&self.reads)
                    .await?;
            let action = action_from(&action)?;
            let op = sqlx::query(&select(kind, "o.id = ?")).bind(action.operation_id).fetch_one(&self.reads).await?;
            out.push((row_from(&op)?, action));
        }
        Ok(out)
    }

    async fn acting_operations(&self, ids: &[i64]) -> Result<Vec<i64>> {
        let marks = vec!["?"; ids.len()].join(", ");
        let sql = format!(
            "SELECT DISTINCT operation_id FROM operation_actions WHERE finished_at IS NULL AND operation_id IN ({marks})"
        );
        let mut q = sqlx::query_scalar::<_, i64>(&sql);
        for id in ids {
            q = q.bind(id);
        }
        Ok(q.fetch_all(&self.reads).await?)
    }
}
