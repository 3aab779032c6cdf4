//! Removals on the operation kernel. Each round reads the cluster once
//! (`osd dump`, `osd df`, `osd tree`, `pg stat`; with a removal queued,
//! what the pacing weighs too), then for each active removal asks what its
//! phase needs (ok-to-stop, safe-to-destroy, the daemon on its host, its
//! devices); `domain::removal::advance` decides, the executor writes the
//! step before its effect. An effect that went through is followed by a
//! fresh read of the cluster and the removal goes on within the round, so
//! that the next gate is taken as soon as the cluster shows it open.
//! A draining OSD's progress sample reads the PGs still on it (`pg
//! ls-by-osd`) for the bytes left. After a crash the kernel simply
//! observes again.

use std::sync::Arc;
use std::time::Duration;

use super::Removals;
use crate::agent_client::AgentError;
use crate::ceph::{CephError, ClusterState};
use crate::daemon::live::Live;
use crate::daemon::operations::{Executor, Flow, OperationKind};
use crate::daemon::{DaemonError, Pace};
use crate::domain::cluster::{format_weight, same_host};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{Outcome, Recorded};
use crate::domain::removal::{
    advance, after_step, apply, began_drain, cadence, clean_devices, may_start_drain, observe_cluster, questions,
    replaced_devices, shared_now, Drain, Effect, Observation, PacingFacts, Phase, Removal, RemovalRecord, Step,
    Verdict,
};
use crate::store::RemovalCodec;

mod samples;

/// What the round knows: the cluster as read once, for pacing the removals
/// waiting to drain, the drains under way (those it began included) and
/// what the pacing weighs, or why that could not be read.
#[derive(Clone)]
pub struct Round {
    state: Arc<ClusterState>,
    /// A read made right after an effect, for the removal that made it.
    fresh: Option<(i64, Arc<ClusterState>)>,
    queued: Vec<Drain>,
    draining: Vec<Drain>,
    facts: Result<PacingFacts, String>,
    /// `ok-to-stop` for a host's queued OSDs together, by host, asked once
    /// per round before any of them is reweighted (`ok_to_stop`).
    ok_to_stop: Vec<(String, Verdict)>,
}

impl Round {
    /// The cluster as this removal should see it.
    fn state_for(&self, id: i64) -> &ClusterState {
        match &self.fresh {
            Some((op, s)) if *op == id => s,
            _ => &self.state,
        }
    }
}

/// The removal kind, as the executor drives it.
pub struct RemovalKind {
    d: Arc<Removals>,
}

impl Removals {
    /// One round over all active removals.
    #[tracing::instrument(skip_all)]
    pub async fn round(self: &Arc<Self>) -> Result<Pace, DaemonError> {
        let kind = RemovalKind { d: self.clone() };
        Executor::new(kind, self.store.clone(), self.limits.backoff).round().await
    }
}

fn drain(r: &RemovalRecord) -> Drain {
    Drain { osd: r.state.osd_id, host: r.state.host.clone() }
}

impl OperationKind for RemovalKind {
    type Codec = RemovalCodec;
    type State = Removal;
    type Effect = Effect;
    type Output = String;
    type Round = Round;
    type Observation = Observation;

    async fn begin_round(&self, active: &[RemovalRecord]) -> Result<Round, DaemonError> {
        let state = match self.d.ceph.state().await {
            // Shared with the read model: the OSD list and summary show it.
            Ok(s) => Arc::new(s),
            Err(e) => return Err(DaemonError::CannotAct(format!("cannot read the cluster: {e}"))),
        };
        let draining = active.iter().filter(|r| r.state.phase.is_draining()).map(drain).collect();
        let queued: Vec<Drain> =
            active.iter().filter(|r| r.state.phase == Phase::Queued && !r.state.stop_requested).map(drain).collect();
        self.d.cluster.seen(state.clone());
        let facts = if queued.is_empty() { Ok(PacingFacts::default()) } else { self.pacing_facts(&state).await };
        Ok(Round { state, fresh: None, queued, draining, facts, ok_to_stop: Vec::new() })
    }

    fn round_failed(&self, error: &DaemonError) -> Option<String> {
        Some(error.to_string())
    }

    async fn observe(&self, rec: &RemovalRecord, round: &mut Round) -> Observation {
        let r = &rec.state;
        let pacing = match (&round.facts, r.phase) {
            (Err(why), Phase::Queued) => Verdict::no(why.clone()),
            (Ok(facts), Phase::Queued) => {
                let me = Drain { osd: r.osd_id, host: r.host.clone() };
                let state = round.state_for(rec.id);
                may_start_drain(&me, &round.queued, &round.draining, self.d.limits.max_draining, state, facts)
            }
            // Only a queued removal asks.
            _ => Verdict::yes(),
        };
        let mut obs = observe_cluster(r, round.state_for(rec.id), pacing);
        let ask = questions(r, &obs);
        if ask.ok_to_stop {
            obs.ok_to_stop = Some(self.ok_to_stop(r, round).await);
        }
        if ask.safe_to_destroy {
            obs.safe_to_destroy =
                Some(self.d.ceph.safe_to_destroy(&[r.osd_id]).await.unwrap_or_else(|e| Verdict::no(e.to_string())));
        }
        if ask.daemon || ask.devices {
            self.observe_host(r, ask.devices, &mut obs).await;
        }
        if ask.copies {
            obs.copies = Some(self.d.ceph.copies().await.map_err(|e| e.to_string()));
        }
        obs
    }

    fn advance(&self, rec: &RemovalRecord, obs: &Observation, _now: i64) -> Step {
        advance(&rec.state, obs)
    }

    fn record(
        &self,
        rec: &RemovalRecord,
        step: &Step,
        obs: &Observation,
        round: &mut Round,
        now: i64,
    ) -> Recorded<Removal> {
        let kb_used = round.state_for(rec.id).osd(rec.state.osd_id).and_then(|o| o.kb_used);
        let recorded = after_step(rec, step.clone(), obs, kb_used, now);
        if began_drain(&rec.state, &recorded.next.state) {
            round.queued.retain(|d| d.osd != rec.state.osd_id);
            round.draining.push(drain(rec));
        }
        recorded
    }

    async fn after_step(&self, before: &RemovalRecord, after: &RemovalRecord, step: &Step, obs: &Observation) {
        let outside = self.undone_by_someone_else(before, step, obs).await;
        self.record_sample(before, after, outside).await;
        self.d.announce_hold(before, after).await;
        if before.state.phase != after.state.phase {
            self.d.announce(after, before.state.phase).await;
        }
    }

    fn detail(&self, rec: &RemovalRecord, effect: &Effect) -> String {
        let r = &rec.state;
        let id = r.osd_id;
        match effect {
            Effect::Reweight { weight } => format!("ceph osd crush reweight osd.{id} {}", format_weight(*weight)),
            Effect::MarkOut => format!("ceph osd out {id}"),
            Effect::MarkIn => format!("ceph osd in {id}"),
            Effect::MarkDown => format!("ceph osd down {id}"),
            Effect::Destroy if r.in_place.is_some() => format!("ceph osd destroy {id} --yes-i-really-mean-it"),
            Effect::Destroy => format!("ceph osd destroy {id}"),
            Effect::Noout { on: true } => format!("ceph osd add-noout osd.{id}"),
            Effect::Noout { on: false } => format!("ceph osd rm-noout osd.{id}"),
            Effect::Purge => format!("ceph osd purge {id}"),
            Effect::StopDaemon => format!("stop osd.{id} on {}", r.host),
            Effect::Zap { path } => format!("zap {path} on {}", r.host),
            Effect::ZapLvs { fsid } => {
                format!("ceph-volume lvm zap --destroy --osd-id {id} --osd-fsid {fsid} on {}", r.host)
            }
        }
    }

    async fn perform(&self, rec: &RemovalRecord, effect: &Effect) -> Outcome<String> {
        self.carry_out(&rec.state, effect).await
    }

    fn done_detail(&self, text: &String) -> (String, Option<String>) {
        (text.clone(), None)
    }

    fn apply(&self, rec: &RemovalRecord, effect: &Effect, outcome: &Outcome<String>, _now: i64) -> Removal {
        apply(&rec.state, effect, outcome)
    }

    async fn after_effect(
        &self,
        before: &RemovalRecord,
        after: &RemovalRecord,
        effect: &Effect,
        outcome: &Outcome<String>,
        round: &mut Round,
    ) -> Flow {
        let r = &after.state;
        // A refusal ended it (another disk at the path, another OSD's daemon).
        if before.state.phase != r.phase {
            self.d.announce(after, before.state.phase).await;
        }
        let (id, subject) = (r.osd_id, format!("osd.{}", r.osd_id));
        match (outcome, effect) {
            (Outcome::Done(_), Effect::Zap { path }) => {
                let message = format!("Successfully zapped {path} for osd.{id} on {}", r.host);
                self.d.events.record(Level::Info, EventKind::Zapped, Some(&r.host), Some(&subject), message).await;
            }
            (Outcome::Done(_), Effect::ZapLvs { .. }) => {
                let kept = if r.shared_devices.is_empty() {
                    String::new()
                } else {
                    format!("; the other OSDs' LVs on {} stay", r.shared_devices.join(", "))
                };
                let message = format!("Successfully zapped the LVs of osd.{id} on {}{kept}", r.host);
                self.d.events.record(Level::Info, EventKind::Zapped, Some(&r.host), Some(&subject), message).await;
            }
            (Outcome::Done(_), _) => {}
            (Outcome::Refused(found), Effect::Zap { .. } | Effect::ZapLvs { .. }) => {
                let message = format!("osd.{id}: not zapped: {found}");
                self.d
                    .events
                    .record(Level::Warning, EventKind::DiskNotOurs, Some(&r.host), Some(&subject), message)
                    .await;
            }
            // The removal's end says it (`events.rs`).
            (Outcome::Refused(_), _) => {}
            (Outcome::Failed(text) | Outcome::Unknown(text), _) => {
                let message = format!("osd.{id}: {text}");
                self.d
                    .events
                    .record(Level::Error, EventKind::RemovalActionFailed, Some(&r.host), Some(&subject), message)
                    .await;
            }
        }
        if !cadence::goes_on_after_effect(after) {
            return Flow::Stop;
        }
        match self.d.ceph.state().await {
            Ok(now) => {
                // The daemon's view too: a spec planned right after a
                // destroy must see the id it frees for claims.
                let now = Arc::new(now);
                self.d.cluster.seen(now.clone());
                round.fresh = Some((after.id, now));
                Flow::Continue
            }
            Err(e) => {
                tracing::warn!("cannot read the cluster again after the {}: {e}", effect.name());
                Flow::Stop
            }
        }
    }

    fn interrupted(&self, state: &Removal, _effect: &Effect) -> Removal {
        // Every effect is safe to repeat and asked for again only when the
        // cluster shows it has not happened: observing again is enough.
        state.clone()
    }

    async fn after_interrupted(&self, _before: &RemovalRecord, _after: &RemovalRecord) {}

    fn next_look(&self, rec: &RemovalRecord, acted: bool) -> Option<Duration> {
        cadence::next_look(rec, acted)
    }

    async fn idle(&self) {
        // A boost a crash left behind is put back even with nothing to remove.
        self.d.pace_recovery(&[], None).await;
    }

    async fn end_round(&self, round: Option<Round>, active: &[RemovalRecord]) {
        if let Some(round) = round {
            match self.d.store.ops::<RemovalCodec>().active().await {
                Ok(now_active) => self.d.pace_recovery(&now_active, Some(&*round.state)).await,
                Err(e) => tracing::error!("cannot read the removals for the recovery boost: {e}"),
            }
        }
        let osds = active.iter().map(|r| r.state.osd_id).collect();
        self.d.read_model.notify_current(Live::Removals { osds }).await;
    }
}

impl RemovalKind {
    /// What the pacing weighs, read from an OSD that is up; an error is
    /// the reason every queued drain waits this round.
    async fn pacing_facts(&self, state: &ClusterState) -> Result<PacingFacts, String> {
        let Some(probe) = state.osds.iter().find(|o| o.up && !o.destroyed).map(|o| o.id) else {
            return Err("no OSD is up to read osd_max_backfills from".into());
        };
        self.d.ceph.pacing_facts(probe).await.map_err(|e| {
            tracing::warn!("cannot read what the drain pacing needs: {e}");
            format!("cannot read what the pacing needs: {e}")
        })
    }

    /// Whether the OSD may stop, asked for its host's queued OSDs together
    /// and once per round, before the first of them is reweighted: asked
    /// one by one, the second OSD of a host heard "no" while the PGs the
    /// first one's reweight remapped were peering, and began a round later,
    /// after CRUSH had moved some of the first one's PGs onto it (seen on
    /// the sandbox). When the host's OSDs together may not stop, each is
    /// asked alone, as before; when the question could not be asked, the
    /// host's OSDs all wait for the next round, still together.
    async fn ok_to_stop(&self, r: &Removal, round: &mut Round) -> Verdict {
        if let Some((_, v)) = round.ok_to_stop.iter().find(|(h, _)| same_host(h, &r.host)) {
            return v.clone();
        }
        let mut ids: Vec<u32> = round.queued.iter().filter(|d| same_host(&d.host, &r.host)).map(|d| d.osd).collect();
        if !ids.contains(&r.osd_id) {
            ids.push(r.osd_id);
        }
        let unasked = |e: CephError| Verdict::no(format!("cannot ask ok-to-stop: {e}"));
        // An error is no answer: the host's OSDs wait together (no "alone").
        let (together, asked) = match self.d.ceph.ok_to_stop(&ids).await {
            Ok(v) => (v, true),
            Err(e) => (unasked(e), false),
        };
        if together.ok || ids.len() == 1 || !asked {
            round.ok_to_stop.push((r.host.clone(), together.clone()));
            return together;
        }
        self.d.ceph.ok_to_stop(&[r.osd_id]).await.unwrap_or_else(unasked)
    }

    async fn observe_host(&self, r: &Removal, devices: bool, obs: &mut Observation) {
        let host = match self.d.store.host(&r.host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("host {} of osd.{} is not known: {e}", r.host, r.osd_id);
                obs.host_reachable = false;
                return;
            }
        };
        match self.d.agents.osd_status(&host, r.osd_id).await {
            Ok(s) => obs.daemon_running = Some(s.running),
            Err(AgentError::Unreachable { .. } | AgentError::Timeout { .. }) => obs.host_reachable = false,
            // The agent answered but could not tell: the stop gate waits for Ceph instead.
            Err(e) => tracing::warn!("cannot ask {} about osd.{}: {e}", r.host, r.osd_id),
        }
        if devices && obs.host_reachable {
            if let Err(e) = self.d.inventory.poll_host(&host).await {
                tracing::warn!("cannot refresh the inventory of {}: {e}", r.host);
            }
            match self.d.store.inventory(&r.host).await {
                Ok(Some(inv)) => match self.d.inventory.parsed(&inv) {
                    Ok(devices) => {
                        obs.clean_devices = clean_devices(r, &devices);
                        obs.replaced_devices = replaced_devices(r, &devices);
                        obs.shared_now = shared_now(r, &devices);
                    }
                    Err(e) => tracing::error!("{e}"),
                },
                Ok(None) => {}
                Err(e) => tracing::error!("cannot read the inventory of {}: {e}", r.host),
            }
        }
    }

    /// The effect itself, and what became of it.
    async fn carry_out(&self, r: &Removal, effect: &Effect) -> Outcome<String> {
        let id = r.osd_id;
        let ceph = &self.d.ceph;
        let on_cluster = match effect {
            Effect::Reweight { weight } => {
                ceph.reweight(id, *weight).await.map(|_| format!("reweighted osd.{id} to {}", format_weight(*weight)))
            }
            Effect::MarkOut => ceph.mark_out(id).await.map(|_| format!("marked osd.{id} out")),
            Effect::MarkIn => ceph.mark_in(id).await.map(|_| format!("marked osd.{id} in")),
            Effect::MarkDown => ceph.mark_down(id).await.map(|_| format!("marked osd.{id} down")),
            // In place, past the mgr's safe-to-destroy check (which would
            // refuse: the OSD's PGs were never drained).
            Effect::Destroy if r.in_place.is_some() => {
                ceph.destroy_unchecked(id).await.map(|_| format!("destroyed osd.{id} (in place)"))
            }
            Effect::Destroy => ceph.destroy(id).await.map(|_| format!("destroyed osd.{id}")),
            Effect::Noout { on } => ceph
                .set_noout(id, *on)
                .await
                .map(|_| format!("{} osd.{id}", if *on { "set noout on" } else { "lifted noout from" })),
            Effect::Purge => ceph.purge(id).await.map(|_| format!("purged osd.{id}")),
            Effect::StopDaemon | Effect::Zap { .. } | Effect::ZapLvs { .. } => {
                return self.d.carry_out_on_host(r, effect).await
            }
        };
        match on_cluster {
            Ok(text) => Outcome::Done(text),
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }
}
