//! Removals as `osd rm status` shows them: state, gate, PGs, bytes, and
//! while draining the smoothed rate, the ETA and whether it stalled
//! (`domain::progress`). The status of all of them is served from the
//! read model (`read_model/removals.rs`), which builds it with these.

use crate::daemon::{Daemon, DaemonError};
use crate::domain::progress::{estimate, window_ms, DrainSample, Estimate, Settings, SMOOTHING_MS};
use crate::domain::removal::RemovalRecord;
use crate::wire::api::osds::{DetailQuery, RemovalDetail, RemovalStatus, Stalled, StatusQuery};

impl Daemon {
    fn progress_settings(&self) -> Settings {
        Settings { smoothing_ms: SMOOTHING_MS, stall_after_ms: self.config.stall_after.as_millis() as i64 }
    }

    /// The estimate while the OSD drains; nothing to estimate otherwise.
    async fn drain_estimate(&self, rec: &RemovalRecord) -> Result<Estimate, DaemonError> {
        if !rec.removal.phase.is_draining() {
            return Ok(Estimate::default());
        }
        let settings = self.progress_settings();
        let samples: Vec<DrainSample> =
            self.store.recent_samples(rec.id, window_ms(settings)).await?.into_iter().map(DrainSample::from).collect();
        Ok(estimate(&samples, settings))
    }

    pub async fn removal_status(&self, rec: &RemovalRecord) -> Result<RemovalStatus, DaemonError> {
        let p = self.drain_estimate(rec).await?;
        let r = &rec.removal;
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
            fast: r.fast,
            ignored_blockers: r.ignored_blockers.clone(),
            stop_requested: r.stop_requested,
            devices: r.devices.clone(),
            pgs_at_start: r.pgs_at_start,
            pgs_now: rec.pgs_now,
            pgs_per_min: p.pgs_per_min,
            eta_s: p.eta_s,
            eta_basis: p.basis.map(|b| b.as_str().to_string()),
            bytes_now: rec.kb_used_now.map(|k| k as f64 * 1024.0),
            bytes_left: p.bytes_left.map(|b| b as f64),
            bytes_per_s: p.bytes_per_s,
            stalled: p.stalled.map(|s| Stalled { since: s.since, reason: s.reason }),
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

    /// Active removals and up to `history` finished ones (default 20), as
    /// of the read model's last refresh.
    pub async fn removals(&self, q: &StatusQuery) -> Result<Vec<RemovalStatus>, DaemonError> {
        Ok(self.removals_view().await?.snapshot.value.select(q))
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
