//! `osd rm ID... --dry-run`: the removal preview from the live cluster
//! (`domain::drain_preview` decides; the Ceph adapter gathers), and the
//! check `osd rm` makes with it before it queues anything.

use super::super::{Daemon, DaemonError};
use crate::domain::drain_preview::{self, drain_throughput, Preview, Throughput};
use crate::domain::progress::format_duration;
use crate::domain::removal::Phase;
use crate::wire::api::removal_preview::RemovalPreview;

/// How many finished removals are searched for an observed drain throughput.
const HISTORY: i64 = 20;

impl Daemon {
    /// The preview for removing `ids` together, as the API sends it.
    pub async fn preview_removal(&self, ids: &[u32]) -> Result<RemovalPreview, DaemonError> {
        check_ids(ids)?;
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        for &id in ids {
            match state.osd(id) {
                None => return Err(DaemonError::NotFound(format!("osd.{id} does not exist in the cluster"))),
                Some(o) if o.destroyed => {
                    return Err(DaemonError::Conflict(format!(
                        "osd.{id} is already destroyed (waiting for a replacement disk)"
                    )))
                }
                Some(_) => {}
            }
        }
        Ok(to_wire(&self.compute_preview(ids).await?))
    }

    /// The preview itself; the ids were checked by the caller.
    pub(super) async fn compute_preview(&self, ids: &[u32]) -> Result<Preview, DaemonError> {
        let mut input = self
            .ceph
            .preview_input(ids)
            .await
            .map_err(|e| DaemonError::CannotAct(format!("cannot compute the removal preview: {e}")))?;
        if input.throughput.is_none() {
            input.throughput = self.observed_throughput().await?;
        }
        Ok(drain_preview::preview(&input))
    }

    /// The drain throughput of the latest finished removal osdkeeper drained.
    async fn observed_throughput(&self) -> Result<Option<Throughput>, DaemonError> {
        let mut done: Vec<_> = self
            .store
            .removals(HISTORY)
            .await?
            .into_iter()
            .filter(|r| r.removal.phase == Phase::Done && r.drain_started_at.is_some())
            .collect();
        done.sort_by_key(|r| std::cmp::Reverse(r.finished_at));
        for rec in done {
            let samples = self.store.samples(rec.id).await?;
            let points: Vec<(i64, i64, Option<i64>)> = samples.iter().map(|s| (s.at, s.pgs, s.kb_used)).collect();
            if let Some(bytes_per_s) = drain_throughput(&points) {
                let took = (points.last().map_or(0, |p| p.0) - points.first().map_or(0, |p| p.0)) as f64 / 1000.0;
                return Ok(Some(Throughput {
                    bytes_per_s,
                    source: format!(
                        "the drain of osd.{} (removal {}, {} long), the latest osdkeeper saw",
                        rec.removal.osd_id,
                        rec.id,
                        format_duration(took)
                    ),
                }));
            }
        }
        Ok(None)
    }
}

pub(super) fn check_ids(ids: &[u32]) -> Result<(), DaemonError> {
    if ids.is_empty() {
        return Err(DaemonError::Invalid("give at least one OSD id".into()));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(DaemonError::Invalid(format!("osd.{id} is listed twice")));
        }
    }
    Ok(())
}

fn to_wire(p: &Preview) -> RemovalPreview {
    RemovalPreview {
        osds: p.osds.clone(),
        pgs_to_move: p.pgs_to_move,
        bytes_to_move: p.bytes_to_move,
        eta_s: p.eta_s,
        eta_basis: p.eta_basis.clone(),
        receivers: p.receivers.clone(),
        pools: p.pools.clone(),
        blockers: p.blockers.clone(),
        warnings: p.warnings.clone(),
        ok_to_stop: p.ok_to_stop.ok,
        ok_to_stop_message: p.ok_to_stop.message.clone(),
        nearfull_ratio: p.ratios.nearfull,
        backfillfull_ratio: p.ratios.backfillfull,
        full_ratio: p.ratios.full,
        moves: p.moves.clone(),
    }
}
