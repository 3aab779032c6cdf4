//! What a swap's next decision needs to see, asked only in the phases
//! that need it: the round's cluster state for its OSDs and the health
//! rule; the balancer, the OSDs' flags and the PG map with the final map
//! beside it (`swap_input`: osdmaptool on the real cluster); the config
//! database; the deployment and removals it stored; for the in-place way
//! `ok-to-stop`, the OSD's daemon on its host, the host's blank disks and,
//! right before a stop, destroy or zap, every PG's copies.

use super::effects::clear_sections;
use super::{deployment_subject, Swaps};
use crate::agent_client::AgentError;
use crate::ceph::ClusterState;
use crate::domain::deploy::DeployPhase;
use crate::domain::inventory::Device;
use crate::domain::removal::{unhealthy, Phase as RemovalPhase};
use crate::domain::swap::{
    initial_weight_sections, short_pgs, DeploymentSeen, DiskNow, Observation, OsdSeen, Phase, RemovalSeen, SwapRecord,
    Way,
};
use crate::store::{DeploymentCodec, RemovalCodec};

/// What each phase asks beyond the round's cluster state.
#[derive(Default)]
struct Asks {
    input: bool,
    config: bool,
    deployment: bool,
    removals: bool,
    ok_to_stop: bool,
    host: bool,
    disks: bool,
    /// Every PG's copies, for the last-copy gate (`domain::copies`).
    copies: bool,
}

fn asks(rec: &SwapRecord) -> Asks {
    let s = &rec.state;
    let unwinding = s.stop_requested && s.phase.can_stop();
    match (s.way, s.phase) {
        (_, p) if p.is_finished() => Asks::default(),
        (Way::FreeBay, _) if unwinding => Asks { input: true, config: true, deployment: true, ..Asks::default() },
        (Way::FreeBay, Phase::Queued | Phase::Preparing | Phase::Finishing | Phase::Unwinding) => {
            Asks { input: true, config: true, deployment: s.phase == Phase::Unwinding, ..Asks::default() }
        }
        (Way::FreeBay, Phase::Deploying) => Asks { config: true, deployment: true, ..Asks::default() },
        (Way::FreeBay, Phase::HandingOver | Phase::Settling) => Asks { input: true, ..Asks::default() },
        (Way::FreeBay, Phase::Retiring) => Asks { removals: true, input: true, config: true, ..Asks::default() },
        (Way::InPlace, Phase::Queued) => Asks { ok_to_stop: true, input: true, ..Asks::default() },
        (Way::InPlace, Phase::Stopping | Phase::Destroying) => {
            Asks { host: true, input: true, copies: true, ..Asks::default() }
        }
        (Way::InPlace, Phase::Zapping) => Asks { host: true, disks: true, copies: true, ..Asks::default() },
        (Way::InPlace, Phase::AwaitingDisk) => Asks { host: true, disks: true, ..Asks::default() },
        (Way::InPlace, Phase::Deploying) => Asks { deployment: true, ..Asks::default() },
        (Way::InPlace, _) => Asks { input: true, ..Asks::default() },
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
            host_reachable: true,
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
                // From the round's own read of the OSD map: an advance that
                // goes through several phases on one observation (deployed,
                // recovered, finishing) must not take a missing question for
                // "noout is off" and end with the flag still set.
                noout: o.noout,
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
            obs.removals = self.removals_seen(rec).await;
        }
        if ask.ok_to_stop {
            obs.ok_to_stop = match self.ceph.ok_to_stop(&s.old_ids()).await {
                Ok(v) => Some(v),
                Err(e) => Some(crate::ceph::Verdict::no(e.to_string())),
            };
        }
        if ask.host || ask.disks {
            self.observe_host(rec, ask.disks, &mut obs).await;
        }
        if ask.copies {
            obs.copies = Some(self.ceph.copies().await.map_err(|e| e.to_string()));
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
                for o in &mut obs.osds {
                    o.noout = input.noout.contains(&o.id);
                }
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

    /// The removals of the old OSDs stored since the swap began (an id
    /// may have been removed before, by someone else).
    async fn removals_seen(&self, rec: &SwapRecord) -> Vec<RemovalSeen> {
        let mut out = Vec::new();
        for id in rec.state.old_ids() {
            match self.store.ops::<RemovalCodec>().latest_on(&crate::store::removal_subject(id)).await {
                Ok(Some(r)) if r.created_at >= rec.created_at => out.push(RemovalSeen {
                    osd: id,
                    finished: r.state.phase.is_finished(),
                    cancelled: r.state.phase == RemovalPhase::Cancelled,
                }),
                Ok(_) => {}
                Err(e) => tracing::error!("cannot read the removal of osd.{id}: {e}"),
            }
        }
        out
    }

    async fn observe_host(&self, rec: &SwapRecord, disks: bool, obs: &mut Observation) {
        let s = &rec.state;
        let host = match self.store.host(&s.host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("host {} of swap {} is not known: {e}", s.host, rec.number);
                obs.host_reachable = false;
                return;
            }
        };
        if let Some(old) = s.olds.first() {
            match self.agents.osd_status(&host, old.id).await {
                Ok(st) => obs.daemon_running = Some(st.running),
                Err(AgentError::Unreachable { .. } | AgentError::Timeout { .. }) => obs.host_reachable = false,
                Err(e) => tracing::warn!("cannot ask {} about osd.{}: {e}", s.host, old.id),
            }
        }
        if !(disks && obs.host_reachable) {
            return;
        }
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
