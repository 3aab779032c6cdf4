//! `host drain HOST`: every OSD of a host removed in one request, the host
//! marked `_no_schedule` first so that no spec puts new OSDs on it
//! meanwhile; `host drain stop HOST` stops what can still be undone; and
//! `host rm`'s check that a host it forgets holds no OSDs.

use super::Removals;
use super::RemoveRequest;
use crate::clock::now_ms;
use crate::daemon::DaemonError;
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::RemovalRecord;
use crate::domain::spec::NO_SCHEDULE;
use crate::store::RemovalCodec;
use crate::wire::api::hosts::{HostDrainBody, HostDrainStatus, HostDrainStop, HostDrainTotals};
use crate::wire::api::removal_preview::RemovalPreview;

impl Removals {
    async fn host_removals(&self, host: &str) -> Result<Vec<RemovalRecord>, DaemonError> {
        let mut recs = self.store.ops::<RemovalCodec>().active().await?;
        recs.retain(|r| r.state.host == host);
        Ok(recs)
    }

    /// What draining the host would do (`host drain HOST --dry-run`).
    pub async fn preview_host_drain(&self, host: &str, zap: bool) -> Result<RemovalPreview, DaemonError> {
        self.store.host(host).await?;
        let ids = self.inventory.osds_of_host(host).await?;
        if ids.is_empty() {
            return Err(DaemonError::NotFound(format!("Ceph has no OSDs on host {host}")));
        }
        self.preview_removal(&ids, zap).await
    }

    /// Marks the host `_no_schedule`, then queues the removal of each of its
    /// OSDs not being removed already: asked twice, it queues nothing twice.
    pub async fn drain_host(&self, host: &str, body: &HostDrainBody) -> Result<HostDrainStatus, DaemonError> {
        self.store.host(host).await?;
        let ids = self.inventory.osds_of_host(host).await?;
        let queued: Vec<u32> = self.host_removals(host).await?.iter().map(|r| r.state.osd_id).collect();
        let todo: Vec<u32> = ids.iter().copied().filter(|id| !queued.contains(id)).collect();
        // The label comes first: a spec applied while the drain is queued must not choose this host.
        self.inventory.label(host, NO_SCHEDULE, true).await?;
        if body.fast && !queued.is_empty() {
            self.speed_up(host, &queued).await?;
        }
        if !todo.is_empty() {
            let req = RemoveRequest {
                ids: todo,
                zap: body.zap_osd_devices,
                fast: body.fast,
                ignore_preview_blockers: body.ignore_preview_blockers,
                ..RemoveRequest::default()
            };
            if let Err(e) = self.schedule_removals(&req).await {
                tracing::warn!("the drain of {host} was refused; it stays _no_schedule until `host drain stop`: {e}");
                return Err(e);
            }
        }
        self.host_drain_status(host).await
    }

    /// `host drain HOST --fast` on a host already draining: its removals
    /// become fast; the removal worker raises recovery on its next round.
    async fn speed_up(&self, host: &str, queued: &[u32]) -> Result<(), DaemonError> {
        if self.store.ops::<RemovalCodec>().make_fast(queued, now_ms()).await? == 0 {
            return Ok(());
        }
        let names: Vec<String> = queued.iter().map(|i| format!("osd.{i}")).collect();
        let message = format!("Draining host {host} fast from now on: {}", names.join(", "));
        self.events.record(Level::Info, EventKind::RemovalScheduled, Some(host), None, message).await;
        self.worker.wake();
        Ok(())
    }

    /// Stops the host's removals that can still be undone (their weights
    /// come back); the ones past the point of no return finish. Once none
    /// of its removals is left running, the host loses `_no_schedule`.
    pub async fn stop_host_drain(&self, host: &str) -> Result<HostDrainStop, DaemonError> {
        self.store.host(host).await?;
        let recs = self.host_removals(host).await?;
        let (undo, continuing): (Vec<&RemovalRecord>, Vec<&RemovalRecord>) =
            recs.iter().partition(|r| r.state.phase.can_stop());
        let stop: Vec<u32> = undo.iter().filter(|r| !r.state.stop_requested).map(|r| r.state.osd_id).collect();
        if !stop.is_empty() {
            self.stop_removals(&stop).await?;
        }
        let no_schedule_removed = continuing.is_empty();
        if no_schedule_removed {
            self.inventory.label(host, NO_SCHEDULE, false).await?;
        }
        Ok(HostDrainStop {
            host: host.to_string(),
            stopped: undo.iter().map(|r| r.state.osd_id).collect(),
            continuing: continuing.iter().map(|r| r.state.osd_id).collect(),
            no_schedule_removed,
        })
    }

    pub async fn host_drain_status(&self, host: &str) -> Result<HostDrainStatus, DaemonError> {
        let h = self.store.host(host).await?;
        let osds_in_cluster = self.inventory.osds_of_host(host).await?;
        let removals = self.read_model.removal_statuses(&self.host_removals(host).await?).await?;
        let mut totals = HostDrainTotals { removals: removals.len(), ..HostDrainTotals::default() };
        for r in &removals {
            if r.state.is_draining() || r.state == crate::domain::removal::Phase::Queued {
                totals.draining += 1;
            }
            if let Some(start) = r.pgs_at_start {
                totals.pgs_at_start += start;
                totals.pgs_left += r.pgs_now.unwrap_or(start);
            }
            totals.bytes_left += r.bytes_left.unwrap_or(0.0);
            totals.eta_s = match (totals.eta_s, r.eta_s) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(HostDrainStatus {
            host: h.name.clone(),
            no_schedule: h.labels.iter().any(|l| l == NO_SCHEDULE),
            osds_in_cluster,
            removals,
            totals,
        })
    }
}
