//! Removals as `osd rm status` shows them: state, gate, PGs, bytes, and
//! while draining the smoothed rate, the ETA and whether it stalled
//! (`domain::progress`). The status of all of them is served from the
//! read model (`removals.rs`), which builds it with these.

use super::ReadModel;
use crate::daemon::DaemonError;
use crate::domain::operation::Action;
use crate::domain::progress::{estimate, window_ms, DrainSample, Estimate, Settings, SMOOTHING_MS};
use crate::domain::removal::RemovalRecord;
use crate::store::{DrainSampleRow, RemovalCodec};
use crate::wire::api::osds::{ActionRecord, DetailQuery, RemovalDetail, RemovalStatus, Sample, Stalled, StatusQuery};

impl ReadModel {
    fn progress_settings(&self) -> Settings {
        Settings { smoothing_ms: SMOOTHING_MS, stall_after_ms: self.stall_after.as_millis() as i64 }
    }

    /// The estimate while the OSD drains; nothing to estimate otherwise.
    async fn drain_estimate(&self, rec: &RemovalRecord) -> Result<Estimate, DaemonError> {
        if !rec.state.phase.is_draining() {
            return Ok(Estimate::default());
        }
        let settings = self.progress_settings();
        let samples: Vec<DrainSample> =
            self.store.recent_samples(rec.id, window_ms(settings)).await?.into_iter().map(drain_sample).collect();
        Ok(estimate(&samples, settings))
    }

    pub async fn removal_status(&self, rec: &RemovalRecord) -> Result<RemovalStatus, DaemonError> {
        let p = self.drain_estimate(rec).await?;
        let r = &rec.state;
        Ok(RemovalStatus {
            removal_id: rec.number,
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
            pgs_now: r.pgs_now,
            pgs_per_min: p.pgs_per_min,
            eta_s: p.eta_s,
            eta_basis: p.basis.map(|b| b.as_str().to_string()),
            bytes_now: r.kb_used_now.map(|k| k as f64 * 1024.0),
            bytes_left: p.bytes_left.map(|b| b as f64),
            bytes_per_s: p.bytes_per_s,
            stalled: p.stalled.map(|s| Stalled { since: s.since, reason: s.reason }),
            requested_at: rec.created_at,
            drain_started_at: r.drain_started_at,
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

    pub async fn removal_detail(&self, number: i64, q: &DetailQuery) -> Result<RemovalDetail, DaemonError> {
        let rec = self.store.ops::<RemovalCodec>().get(number).await?;
        let samples = match q.samples_after {
            Some(after) => self.store.samples_after(rec.id, after).await?,
            None => self.store.samples(rec.id).await?,
        };
        let samples = samples.into_iter().map(sample).collect();
        let osd = i64::from(rec.state.osd_id);
        let actions = self.store.actions(rec.id).await?.iter().map(|a| action_record(a, number, osd)).collect();
        Ok(RemovalDetail { status: self.removal_status(&rec).await?, samples, actions })
    }
}

/// A stored sample as the progress estimate reads it.
pub(crate) fn drain_sample(s: DrainSampleRow) -> DrainSample {
    DrainSample { at: s.at, pgs: s.pgs, bytes_left: s.bytes_left.map(|b| b.max(0) as u64), blocked: s.blocked }
}

/// A stored sample as the API shows it.
fn sample(s: DrainSampleRow) -> Sample {
    Sample { at: s.at, pgs: s.pgs, kb_used: s.kb_used, bytes_left: s.bytes_left, blocked: s.blocked }
}

/// An action's outcome in the words the API has always shown: "ok: what it
/// did", "failed: why", "unknown: why".
pub(crate) fn outcome_text(a: &Action) -> Option<String> {
    a.outcome.map(|o| format!("{}: {}", o.as_str(), a.outcome_detail.as_deref().unwrap_or("")))
}

fn action_record(a: &Action, removal_id: i64, osd_id: i64) -> ActionRecord {
    ActionRecord {
        id: a.id,
        removal_id,
        osd_id,
        effect: a.args.clone(),
        destructive: a.destructive,
        issued_at: a.issued_at,
        finished_at: a.finished_at,
        outcome: outcome_text(a),
    }
}
