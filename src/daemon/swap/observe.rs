//! What a swap's next decision needs to see, asked only in the phases
//! that need it: the round's cluster state for its OSDs and the health
//! rule; the balancer and the PG map with the final map
//! beside it (`swap_input`: osdmaptool on the real cluster); the config
//! database; the deployment and removals it stored; for the in-place way
//! the host's disks.

use super::effects::clear_sections;
use super::{deployment_subject, Swaps};
use crate::ceph::ClusterState;
use crate::domain::deploy::DeployPhase;
use crate::domain::inventory::Device;
use crate::domain::removal::{unhealthy, Ending, RemovalRecord};
use crate::domain::swap::{
    initial_weight_sections, short_pgs, DeploymentSeen, DiskNow, Observation, OsdSeen, Phase, RemovalSeen, SwapRecord,
    Way,
};
use crate::store::{DeploymentCodec, RemovalCodec, StoreError};

/// What each phase asks beyond the round's cluster state.
#[derive(Default)]
struct Asks {
    input: bool,
    config: bool,
    deployment: bool,
    removals: bool,
    disks: bool,
}

fn asks(rec: &SwapRecord) -> Asks {
    let s = &rec.state;
    let unwinding = s.stop_requested && s.can_stop();
    match (s.way, s.phase) {
        (_, p) if p.is_finished() => Asks::default(),
        (Way::FreeBay, _) if unwinding => Asks { input: true, config: true, deployment: true, ..Asks::default() },
        (Way::FreeBay, Phase::Queued | Phase::Preparing | Phase::Finishing | Phase::Unwinding) => {
            Asks { input: true, config: true, deployment: s.phase == Phase::Unwinding, ..Asks::default() }
        }
        (Way::FreeBay, Phase::Deploying) => Asks { config: true, deployment: true, ..Asks::default() },
        (Way::FreeBay, Phase::HandingOver | Phase::Settling) => Asks { input: true, ..Asks::default() },
        (Way::FreeBay, Phase::Retiring) => Asks { removals: true, input: true, config: true, ..Asks::default() },
        (Way::InPlace, Phase::Retiring | Phase::Recovering) => Asks { removals: true, ..Asks::default() },
        (Way::InPlace, Phase::AwaitingDisk) => Asks { disks: true, ..Asks::default() },
        (Way::InPlace, Phase::Deploying) => Asks { deployment: true, ..Asks::default() },
        _ => Asks::default(),
    }
}

impl Swaps {
    pub(super) async fn observe(&self, rec: &SwapRecord, state: &ClusterState) -> Observation {
        let s = &rec.state;
        let ask = asks(rec);
        let mut ids = s.old_ids();
        ids.extend(s.new_ids());
        let mut obs = Observation {
            healthy: unhealthy(state),
            short_pgs: Some(short_pgs(&state.pg_states)),
            ..Observation::default()
        };
        obs.osds = ids
            .iter()
            .filter_map(|id| state.osd(*id))
            .map(|o| OsdSeen {
                id: o.id,
                uuid: o.uuid.clone(),
                up: o.up,
                is_in: o.is_in,
                destroyed: o.destroyed,
                crush_weight: o.crush_weight,
            })
            .collect();
        if ask.input {
            self.observe_input(rec, state, &mut obs).await;
        }
        obs.taken_ids = state.osds.iter().map(|o| o.id).collect();
        if ask.config {
            obs.initial_weight_set = match self.ceph.config_dump().await {
                Ok(db) => {
                    let set =
                        |section: &str| db.iter().any(|e| e.section == section && e.name == "osd_crush_initial_weight");
                    let planned = initial_weight_sections(s);
                    obs.initial_weight_complete = !planned.is_empty() && planned.iter().all(|sec| set(sec));
                    Some(clear_sections(rec).iter().any(|sec| set(sec)))
                }
                Err(e) => {
                    tracing::warn!("cannot read the config database: {e}");
                    None
                }
            };
        }
        if ask.deployment {
            obs.deployment = self.deployment_seen(rec).await;
        }
        if ask.removals {
            obs.removals = match self.removals_of(rec).await {
                Ok(rs) => Some(rs.iter().map(removal_seen).collect()),
                Err(e) => {
                    tracing::error!("cannot read the removals of swap {}: {e}", rec.number);
                    None
                }
            };
        }
        if ask.disks {
            self.observe_disks(rec, &mut obs).await;
        }
        obs
    }

    async fn observe_input(&self, rec: &SwapRecord, state: &ClusterState, obs: &mut Observation) {
        let s = &rec.state;
        // An old OSD already purged is not in the map osdmaptool edits.
        let mut weights: Vec<(u32, f64)> =
            s.olds.iter().filter(|o| state.osd(o.id).is_some()).map(|o| (o.id, 0.0)).collect();
        weights.extend(s.news.iter().filter_map(|n| n.osd.map(|id| (id, n.weight))));
        let probe = state.osds.iter().find(|o| o.up && !o.destroyed).map_or(0, |o| o.id);
        match self.ceph.swap_input(&weights, probe).await {
            Ok(input) => {
                obs.balancer_on = Some(input.balancer_on);
                obs.max_backfills = input.max_backfills;
                obs.pgs = Some(input.pgs);
            }
            Err(e) => {
                tracing::warn!("cannot read the PG map for swap {}: {e}", rec.number);
                obs.input_error = Some(e.to_string());
            }
        }
    }

    async fn deployment_seen(&self, rec: &SwapRecord) -> Option<DeploymentSeen> {
        let subject = deployment_subject(&rec.state.host, rec.number);
        match self.store.ops::<DeploymentCodec>().latest_on(&subject).await {
            Ok(Some(d)) => Some(DeploymentSeen {
                number: d.number,
                finished: d.state.phase.is_finished(),
                gave_up: (d.state.phase == DeployPhase::GaveUp)
                    .then(|| d.state.failure.clone().unwrap_or_else(|| "no reason recorded".into())),
                osds: d.state.osds.iter().map(|o| (o.id, o.device.clone())).collect(),
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::error!("cannot read the deployment of swap {}: {e}", rec.number);
                None
            }
        }
    }

    /// The swap's removals of its old OSDs, the latest of each: stored
    /// since the swap began (an id may have been removed before, by
    /// someone else), and in place, an in-place one (another removal of
    /// the id is not the swap's: its own is then refused).
    pub(super) async fn removals_of(&self, rec: &SwapRecord) -> Result<Vec<RemovalRecord>, StoreError> {
        let mut out = Vec::new();
        for id in rec.state.old_ids() {
            let latest = self.store.ops::<RemovalCodec>().latest_on(&crate::store::removal_subject(id)).await?;
            let ways_match = |r: &RemovalRecord| (rec.state.way == Way::InPlace) == r.state.in_place.is_some();
            out.extend(latest.filter(|r| r.created_at >= rec.created_at && ways_match(r)));
        }
        Ok(out)
    }

    /// The host's disks, from a fresh inventory.
    async fn observe_disks(&self, rec: &SwapRecord, obs: &mut Observation) {
        let s = &rec.state;
        let host = match self.store.host(&s.host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("host {} of swap {} is not known: {e}", s.host, rec.number);
                return;
            }
        };
        if let Err(e) = self.inventory.poll_host(&host).await {
            tracing::warn!("cannot refresh the inventory of {}: {e}", s.host);
        }
        match self.store.inventory(&s.host).await {
            Ok(Some(inv)) => match self.inventory.parsed(&inv) {
                Ok(devices) => obs.disks = devices.iter().map(disk_now).collect(),
                Err(e) => tracing::error!("{e}"),
            },
            Ok(None) => {}
            Err(e) => tracing::error!("cannot read the inventory of {}: {e}", s.host),
        }
    }
}

/// A removal of the swap's as its decisions see it.
fn removal_seen(r: &RemovalRecord) -> RemovalSeen {
    RemovalSeen {
        osd: r.state.osd_id,
        phase: r.state.phase,
        stop_requested: r.state.stop_requested,
        rejoined: r.state.ending == Some(Ending::Rejoined),
        waiting_on: r.waiting_on.clone(),
        note: r.state.note(),
    }
}

/// A disk of the host as the swap sees it: blank or not, the OSD fsids of
/// its LVs, and what is on it in words.
fn disk_now(d: &Device) -> DiskNow {
    let blank = d.available && d.lvs.is_empty();
    let mut holds: Vec<String> = d
        .lvs
        .iter()
        .map(|lv| match (lv.osd_id.as_deref(), lv.osd_fsid.as_deref()) {
            (Some(id), Some(fsid)) => format!("an LV of osd.{id} (fsid {fsid})"),
            (Some(id), None) => format!("an LV of osd.{id}"),
            _ => "an LV of no OSD".to_string(),
        })
        .collect();
    holds.extend(d.rejected_reasons.iter().map(|r| r.to_lowercase()));
    holds.dedup();
    DiskNow {
        path: d.path.to_string(),
        device_id: d.device_id.to_string(),
        blank,
        osd_fsids: d.lvs.iter().filter_map(|lv| lv.osd_fsid.as_deref().map(str::to_string)).collect(),
        holds: if holds.is_empty() { "something the inventory does not name".into() } else { holds.join(", ") },
    }
}
