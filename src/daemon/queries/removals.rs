//! Removals as `osd rm status` shows them: state, gate, PGs, bytes, drain
//! rate and ETA over the recent window.

use crate::daemon::{Daemon, DaemonError};
use crate::domain::progress::progress;
use crate::domain::removal::RemovalRecord;
use crate::wire::api::osds::{DetailQuery, RemovalDetail, RemovalStatus, StatusQuery};

/// The window the drain rate is measured over.
const RATE_WINDOW_MS: i64 = 15 * 60 * 1000;

impl Daemon {
    pub async fn removal_status(&self, rec: &RemovalRecord) -> Result<RemovalStatus, DaemonError> {
        let samples = self.store.recent_samples(rec.id, RATE_WINDOW_MS).await?;
        let points: Vec<(i64, i64, Option<i64>)> = samples.iter().map(|s| (s.at, s.pgs, s.kb_used)).collect();
        let p = progress(rec.removal.pgs_at_start, &points, RATE_WINDOW_MS);
        let r = &rec.removal;
        let draining = r.phase.is_draining();
        Ok(RemovalStatus {
            removal_id: rec.id,
            osd_id: r.osd_id,
            host: r.host.clone(),
            state: r.phase,
            waiting_on: rec.waiting_on.clone(),
            last_error: rec.last_error.clone(),
            replace: r.replace,
            force: r.force,
            zap: r.zap,
            ignored_blockers: r.ignored_blockers.clone(),
            stop_requested: r.stop_requested,
            devices: r.devices.clone(),
            pgs_at_start: r.pgs_at_start,
            pgs_now: rec.pgs_now,
            pgs_per_min: if draining { p.pgs_per_min } else { None },
            eta_s: if draining { p.eta_s } else { None },
            bytes_now: rec.kb_used_now.map(|k| k as f64 * 1024.0),
            bytes_per_s: if draining { p.bytes_per_s } else { None },
            requested_at: rec.requested_at,
            drain_started_at: rec.drain_started_at,
            finished_at: rec.finished_at,
            note: r.note(),
        })
    }

    pub async fn removal_statuses(&self, records: &[RemovalRecord]) -> Result<Vec<RemovalStatus>, DaemonError> {
        let mut out = Vec::with_capacity(records.len());
        for r in records {
            out.push(self.removal_status(r).await?);
        }
        Ok(out)
    }

    /// Active removals and up to `history` finished ones (default 20).
    pub async fn removals(&self, q: &StatusQuery) -> Result<Vec<RemovalStatus>, DaemonError> {
        let recs = self.store.removals(q.history.unwrap_or(20).clamp(0, 1000)).await?;
        self.removal_statuses(&recs).await
    }

    pub async fn removal_detail(&self, id: i64, q: &DetailQuery) -> Result<RemovalDetail, DaemonError> {
        let rec = self.store.removal(id).await?;
        let samples = match q.samples_after {
            Some(after) => self.store.samples_after(id, after).await?,
            None => self.store.samples(id).await?,
        };
        Ok(RemovalDetail { status: self.removal_status(&rec).await?, samples, actions: self.store.actions(id).await? })
    }
}
