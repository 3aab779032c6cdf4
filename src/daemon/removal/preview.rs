//! `osd rm ID... --dry-run`: the removal preview from the live cluster
//! (`domain::drain_preview` decides; the Ceph adapter gathers), and the
//! check `osd rm` makes with it before it queues anything.

use super::Removals;
use crate::daemon::read_model::drain_sample;
use crate::daemon::DaemonError;
use crate::domain::drain_preview::{self, DrainTrace, Preview};
use crate::domain::removal::zap_plan;
use crate::store::RemovalCodec;
use crate::wire::api::removal_preview::{OsdZap, RemovalPreview};

/// How many finished removals are searched for drains osdkeeper watched.
const HISTORY: i64 = 20;
/// How many of the latest drains the preview's throughput comes from: a
/// host's drains together, and a few before them, not last year's.
const RECENT_DRAINS: usize = 8;

impl Removals {
    /// The preview for removing `ids` together, as the API sends it; with
    /// `zap`, what zapping does to each OSD's devices.
    pub async fn preview_removal(&self, ids: &[u32], zap: bool) -> Result<RemovalPreview, DaemonError> {
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
        let mut preview = to_wire(&self.compute_preview(ids).await?);
        if zap {
            let hosts = self.store.hosts().await?;
            for &id in ids {
                let osd = state.osd(id).expect("checked above");
                preview.zaps.push(match self.locate(id, osd, &hosts, true).await {
                    Ok(l) => OsdZap {
                        osd: id,
                        text: zap_plan::describe(id, &l.zaps, ids),
                        host: l.host.name,
                        devices: l.zaps.iter().map(Into::into).collect(),
                    },
                    // What `osd rm --zap` would refuse with.
                    Err(e) => OsdZap {
                        osd: id,
                        host: osd.crush_host.clone().unwrap_or_default(),
                        devices: Vec::new(),
                        text: format!("cannot zap: {e}"),
                    },
                });
            }
        }
        Ok(preview)
    }

    /// The preview itself; the ids were checked by the caller.
    pub(super) async fn compute_preview(&self, ids: &[u32]) -> Result<Preview, DaemonError> {
        let mut input = self
            .ceph
            .preview_input(ids)
            .await
            .map_err(|e| DaemonError::CannotAct(format!("cannot compute the removal preview: {e}")))?;
        input.recent_drains = self.recent_drains().await?;
        Ok(drain_preview::preview(&input))
    }

    /// The latest drains osdkeeper watched, running ones included, newest
    /// first, with their progress samples (a swap's preview times its ways by them).
    pub(crate) async fn recent_drains(&self) -> Result<Vec<DrainTrace>, DaemonError> {
        let mut drained: Vec<_> = self
            .store
            .ops::<RemovalCodec>()
            .with_finished(HISTORY)
            .await?
            .into_iter()
            .filter(|r| r.state.drain_started_at.is_some())
            .collect();
        drained.sort_by_key(|r| std::cmp::Reverse(r.state.drain_started_at));
        let mut out = Vec::new();
        for rec in drained.into_iter().take(RECENT_DRAINS) {
            let samples = self.store.samples(rec.id).await?.into_iter().map(drain_sample).collect();
            out.push(DrainTrace { osd: rec.state.osd_id, samples });
        }
        Ok(out)
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
        eta_source: p.eta_source,
        eta_bytes_per_s: p.eta_bytes_per_s,
        eta_basis: p.eta_basis.clone(),
        receivers: p.receivers.iter().cloned().map(Into::into).collect(),
        pools: p.pools.iter().cloned().map(Into::into).collect(),
        blockers: p.blockers.clone(),
        warnings: p.warnings.clone(),
        ok_to_stop: p.ok_to_stop.ok,
        ok_to_stop_message: p.ok_to_stop.message.clone(),
        nearfull_ratio: p.ratios.nearfull,
        backfillfull_ratio: p.ratios.backfillfull,
        full_ratio: p.ratios.full,
        moves: p.moves.iter().cloned().map(Into::into).collect(),
        zaps: Vec::new(),
    }
}
