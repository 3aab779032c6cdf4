//! The removal worker. Each round reads the cluster once (`osd dump`,
//! `osd df`, `osd tree`, `pg stat`; with a removal queued, what the pacing
//! weighs too), then for each active removal: asks what its phase needs
//! (ok-to-stop, safe-to-destroy, the daemon on its host, its devices), asks
//! `advance` for the next step, **writes that step to SQLite**, and only
//! then performs the step's effect, logging the action before issuing it;
//! an effect that went through is followed by a fresh read of the cluster
//! and the removal goes on within the round, so that the next gate is
//! taken as soon as the cluster shows it open.
//! A draining OSD's progress sample reads the PGs still on it (`pg
//! ls-by-osd`) for the bytes left. After a crash the worker simply
//! observes again.

use std::time::Duration;

use crate::agent_client::AgentError;
use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::live::Live;
use crate::daemon::{Daemon, DaemonError, Pace};
use crate::domain::cluster::{format_weight, same_host};
use crate::domain::event::{EventKind, Level};
use crate::domain::removal::{
    advance, after_step, bytes_to_move, cadence, clean_devices, held_back, may_start_drain, observe_cluster, questions,
    sample_due, undone_outside, Drain, Effect, Observation, PacingFacts, Phase, Removal, RemovalRecord, Step, Verdict,
};
use crate::wire::agent::ZapRequest;
use crate::wire::api::osds::Sample;

/// What the round knows for pacing: the removals waiting to drain, the
/// drains under way (those it began included) and what the pacing weighs,
/// or why that could not be read.
struct Round {
    queued: Vec<Drain>,
    draining: Vec<Drain>,
    facts: Result<PacingFacts, String>,
    /// `ok-to-stop` for a host's queued OSDs together, by host, asked once
    /// per round before any of them is reweighted (`ok_to_stop`).
    ok_to_stop: Vec<(String, Verdict)>,
}

/// A phase change without an effect leads straight to the next phase; this
/// bounds how many one round may walk through (there are fewer phases).
const MAX_STEPS_PER_ROUND: usize = 8;

impl Daemon {
    /// One round over all active removals.
    #[tracing::instrument(skip_all)]
    pub async fn removal_round(&self) -> Result<Pace, DaemonError> {
        let active = self.store.active_removals().await?;
        if active.is_empty() {
            // A boost a crash left behind is put back even with nothing to remove.
            self.pace_recovery(&[], None).await;
            return Ok(Pace::Interval);
        }
        let osds: Vec<u32> = active.iter().map(|r| r.removal.osd_id).collect();
        let state = match self.ceph.state().await {
            // Shared with the read model: the OSD list and summary show it.
            Ok(s) => std::sync::Arc::new(s),
            Err(e) => {
                let error = format!("cannot read the cluster: {e}");
                for mut rec in active {
                    rec.last_error = Some(error.clone());
                    rec.updated_at = now_ms();
                    let v = rec.version;
                    if let Err(e) = self.store.save_removal(&rec, v).await {
                        tracing::error!(osd = rec.removal.osd_id, "cannot record the error of a removal: {e}");
                    }
                }
                self.notify_current(Live::Removals { osds }).await;
                return Err(DaemonError::CannotAct(error));
            }
        };
        let drain = |r: &RemovalRecord| Drain { osd: r.removal.osd_id, host: r.removal.host.clone() };
        let draining = active.iter().filter(|r| r.removal.phase.is_draining()).map(drain).collect();
        let queued: Vec<Drain> = active
            .iter()
            .filter(|r| r.removal.phase == Phase::Queued && !r.removal.stop_requested)
            .map(drain)
            .collect();
        self.cluster_seen(state.clone()).await;
        let facts = if queued.is_empty() { Ok(PacingFacts::default()) } else { self.pacing_facts(&state).await };
        let mut round = Round { queued, draining, facts, ok_to_stop: Vec::new() };
        let mut looks = Vec::new();
        for rec in active {
            let osd = rec.removal.osd_id;
            let host = rec.removal.host.clone();
            let span = tracing::info_span!("removal", osd, host = %host);
            match tracing::Instrument::instrument(self.drive(rec, &state, &mut round), span).await {
                Ok(look) => looks.push(look),
                Err(e) => tracing::error!(osd, host = %host, "removal step failed: {e}"),
            }
        }
        match self.store.active_removals().await {
            Ok(now_active) => self.pace_recovery(&now_active, Some(&*state)).await,
            Err(e) => tracing::error!("cannot read the removals for the recovery boost: {e}"),
        }
        self.notify_current(Live::Removals { osds }).await;
        Ok(cadence::soonest(looks).map_or(Pace::Interval, Pace::Within))
    }

    /// What the pacing weighs, read from an OSD that is up; an error is
    /// the reason every queued drain waits this round.
    async fn pacing_facts(&self, state: &ClusterState) -> Result<PacingFacts, String> {
        let Some(probe) = state.osds.iter().find(|o| o.up && !o.destroyed).map(|o| o.id) else {
            return Err("no OSD is up to read osd_max_backfills from".into());
        };
        self.ceph.pacing_facts(probe).await.map_err(|e| {
            tracing::warn!("cannot read what the drain pacing needs: {e}");
            format!("cannot read what the pacing needs: {e}")
        })
    }

    /// What the removal's phase needs to know, beyond the round's cluster state.
    async fn observe(&self, rec: &RemovalRecord, state: &ClusterState, round: &mut Round) -> Observation {
        let r = &rec.removal;
        let pacing = match (&round.facts, r.phase) {
            (Err(why), Phase::Queued) => Verdict::no(why.clone()),
            (Ok(facts), Phase::Queued) => {
                let me = Drain { osd: r.osd_id, host: r.host.clone() };
                may_start_drain(&me, &round.queued, &round.draining, self.config.max_draining, state, facts)
            }
            // Only a queued removal asks.
            _ => Verdict::yes(),
        };
        let mut obs = observe_cluster(r, state, pacing);
        let ask = questions(r, &obs);
        if ask.ok_to_stop {
            obs.ok_to_stop = Some(self.ok_to_stop(r, round).await);
        }
        if ask.safe_to_destroy {
            obs.safe_to_destroy =
                Some(self.ceph.safe_to_destroy(&[r.osd_id]).await.unwrap_or_else(|e| Verdict::no(e.to_string())));
        }
        if ask.daemon || ask.devices {
            self.observe_host(rec, ask.devices, &mut obs).await;
        }
        obs
    }

    /// Whether the OSD may stop, asked for its host's queued OSDs together
    /// and once per round, before the first of them is reweighted: asked
    /// one by one, the second OSD of a host heard "no" while the PGs the
    /// first one's reweight remapped were peering, and began a round later,
    /// after CRUSH had moved some of the first one's PGs onto it (seen on
    /// the sandbox). When the host's OSDs together may not stop, each is
    /// asked alone, as before.
    async fn ok_to_stop(&self, r: &Removal, round: &mut Round) -> Verdict {
        let ask = |ids: Vec<u32>| async move {
            self.ceph.ok_to_stop(&ids).await.unwrap_or_else(|e| Verdict::no(e.to_string()))
        };
        if let Some((_, v)) = round.ok_to_stop.iter().find(|(h, _)| same_host(h, &r.host)) {
            return v.clone();
        }
        let mut ids: Vec<u32> = round.queued.iter().filter(|d| same_host(&d.host, &r.host)).map(|d| d.osd).collect();
        if !ids.contains(&r.osd_id) {
            ids.push(r.osd_id);
        }
        let alone = ids.len() == 1;
        let together = ask(ids).await;
        if together.ok || alone {
            round.ok_to_stop.push((r.host.clone(), together.clone()));
            return together;
        }
        ask(vec![r.osd_id]).await
    }

    async fn observe_host(&self, rec: &RemovalRecord, devices: bool, obs: &mut Observation) {
        let r = &rec.removal;
        let host = match self.store.host(&r.host).await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("host {} of osd.{} is not known: {e}", r.host, r.osd_id);
                obs.host_reachable = false;
                return;
            }
        };
        match self.agents.osd_status(&host, r.osd_id).await {
            Ok(s) => obs.daemon_running = Some(s.running),
            Err(AgentError::Unreachable { .. } | AgentError::Timeout { .. }) => obs.host_reachable = false,
            // The agent answered but could not tell: the stop gate waits for Ceph instead.
            Err(e) => tracing::warn!("cannot ask {} about osd.{}: {e}", r.host, r.osd_id),
        }
        if devices && obs.host_reachable {
            if let Err(e) = self.poll_host(&host).await {
                tracing::warn!("cannot refresh the inventory of {}: {e}", r.host);
            }
            match self.store.inventory(&r.host).await {
                Ok(Some(inv)) => match self.cache.devices(&inv) {
                    Ok(devices) => obs.clean_devices = clean_devices(r, &devices),
                    Err(e) => tracing::error!("{e}"),
                },
                Ok(None) => {}
                Err(e) => tracing::error!("cannot read the inventory of {}: {e}", r.host),
            }
        }
    }

    /// Advances one removal as far as it goes this round: phase changes
    /// without an effect follow each other at once; after an effect that
    /// went through (and did not begin a drain), the cluster is read again
    /// and the removal goes on, for most effects show at once (a purged OSD
    /// is gone from the next map). Returns how soon it wants to be looked at
    /// again.
    async fn drive(
        &self,
        mut rec: RemovalRecord,
        state: &ClusterState,
        round: &mut Round,
    ) -> Result<Option<Duration>, DaemonError> {
        let mut fresh: Option<ClusterState> = None;
        let mut done: Option<Effect> = None;
        for _ in 0..MAX_STEPS_PER_ROUND {
            let state = fresh.as_ref().unwrap_or(state);
            let obs = self.observe(&rec, state, round).await;
            let step = advance(&rec.removal, &obs);
            if step.effect.is_some() && step.effect == done {
                // Done a moment ago and not showing yet: the next round looks
                // again rather than repeating it at once.
                return Ok(cadence::next_look(&rec, true));
            }
            let kb_used = state.osd(rec.removal.osd_id).and_then(|o| o.kb_used);
            let mut recorded = after_step(&rec, &step, &obs, kb_used, now_ms());
            if recorded.began_drain {
                round.queued.retain(|d| d.osd != rec.removal.osd_id);
                round.draining.push(Drain { osd: rec.removal.osd_id, host: rec.removal.host.clone() });
            }
            let outside = self.undone_by_someone_else(&rec, &step, &obs).await;
            if recorded.save {
                recorded.next.version = self.store.save_removal(&recorded.next, rec.version).await?;
            }
            self.record_sample(&rec, &recorded.next, outside).await;
            let before = rec.removal.phase;
            if before != recorded.next.removal.phase {
                self.announce(&recorded.next, before).await;
            }
            rec = recorded.next;
            if let Some(effect) = step.effect {
                self.perform(&mut rec, &effect).await?;
                if !cadence::goes_on_after_effect(&rec) {
                    return Ok(cadence::next_look(&rec, true));
                }
                match self.ceph.state().await {
                    Ok(now) => fresh = Some(now),
                    Err(e) => {
                        tracing::warn!("cannot read the cluster again after the {}: {e}", effect.name());
                        return Ok(cadence::next_look(&rec, true));
                    }
                }
                done = Some(effect);
                continue;
            }
            if !recorded.go_on {
                break;
            }
        }
        Ok(cadence::next_look(&rec, false))
    }

    /// What someone else did to the drain that this step undoes, if the
    /// drain's own reweight (or mark-out) went through before.
    async fn undone_by_someone_else(&self, rec: &RemovalRecord, step: &Step, obs: &Observation) -> Option<String> {
        let name = step.effect.as_ref().map(Effect::name)?;
        if rec.removal.phase != Phase::Draining || !matches!(name, "reweight" | "mark-out") {
            return None;
        }
        let applied = match self.store.actions(rec.id).await {
            Ok(actions) => actions.iter().any(|a| {
                a.outcome.as_deref().is_some_and(|o| o.starts_with("ok"))
                    && serde_json::from_str::<Effect>(&a.effect).is_ok_and(|e| e.name() == name)
            }),
            Err(e) => {
                tracing::error!("cannot read the actions of removal {}: {e}", rec.id);
                false
            }
        };
        let what = undone_outside(&rec.removal, step, obs, applied);
        if let Some(w) = &what {
            tracing::warn!("{w}");
        }
        what
    }

    /// A progress sample when one is due (or when someone undid the drain):
    /// the PGs left, the space used, and the bytes still to move with what
    /// holds them, from the PGs still on the OSD.
    async fn record_sample(&self, before: &RemovalRecord, after: &RemovalRecord, outside: Option<String>) {
        if !(after.removal.phase.is_draining() || before.removal.phase.is_draining()) {
            return;
        }
        let last = match self.store.recent_samples(after.id, 0).await {
            Ok(s) => s.last().map(|x| x.at),
            Err(e) => {
                tracing::error!("cannot read the samples of removal {}: {e}", after.id);
                return;
            }
        };
        let Some(pgs) = sample_due(before, after, last).or(after.pgs_now.filter(|_| outside.is_some())) else {
            return;
        };
        let osd = after.removal.osd_id;
        let (bytes_left, held) = match self.ceph.pgs_on_osd(osd).await {
            Ok(on) => (Some(bytes_to_move(osd, &on) as i64), held_back(&on)),
            Err(e) => {
                tracing::warn!("cannot read the PGs still on osd.{osd}: {e}");
                (None, None)
            }
        };
        let blocked = match (outside, held) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
        let sample = Sample { at: after.updated_at, pgs, kb_used: after.kb_used_now, bytes_left, blocked };
        if let Err(e) = self.store.add_sample(after.id, &sample).await {
            tracing::error!("cannot record a progress sample of removal {}: {e}", after.id);
        }
    }

    /// Logs the action, performs it, records the outcome.
    #[tracing::instrument(skip_all, fields(effect = effect.name()))]
    async fn perform(&self, rec: &mut RemovalRecord, effect: &Effect) -> Result<(), DaemonError> {
        let r = rec.removal.clone();
        let id = r.osd_id;
        let action = self.store.log_action(rec.id, id, effect, now_ms()).await?;
        let outcome = self.carry_out(&r, effect).await;
        if outcome.is_ok() {
            crash_point(effect);
        }
        let now = now_ms();
        match outcome {
            Ok(text) => {
                self.store.finish_action(action, &format!("ok: {text}"), now).await?;
                if let Effect::Zap { path } = effect {
                    rec.removal.zapped.push(path.clone());
                    self.event(
                        Level::Info,
                        EventKind::Zapped,
                        Some(&r.host),
                        Some(&format!("osd.{id}")),
                        format!("Successfully zapped {path} for osd.{id} on {}", r.host),
                    )
                    .await;
                }
                rec.last_error = None;
            }
            Err(text) => {
                self.store.finish_action(action, &format!("failed: {text}"), now).await?;
                self.event(
                    Level::Error,
                    EventKind::RemovalActionFailed,
                    Some(&r.host),
                    Some(&format!("osd.{id}")),
                    format!("osd.{id}: {text}"),
                )
                .await;
                rec.last_error = Some(text);
            }
        }
        rec.updated_at = now;
        let v = rec.version;
        rec.version = self.store.save_removal(rec, v).await?;
        Ok(())
    }

    /// The effect itself; Ok with what was done, Err with why it failed.
    async fn carry_out(&self, r: &Removal, effect: &Effect) -> Result<String, String> {
        let id = r.osd_id;
        let on_cluster = match effect {
            Effect::Reweight { weight } => self
                .ceph
                .reweight(id, *weight)
                .await
                .map(|_| format!("reweighted osd.{id} to {}", format_weight(*weight))),
            Effect::MarkOut => self.ceph.mark_out(id).await.map(|_| format!("marked osd.{id} out")),
            Effect::MarkIn => self.ceph.mark_in(id).await.map(|_| format!("marked osd.{id} in")),
            Effect::MarkDown => self.ceph.mark_down(id).await.map(|_| format!("marked osd.{id} down")),
            Effect::Destroy => self.ceph.destroy(id).await.map(|_| format!("destroyed osd.{id}")),
            Effect::Purge => self.ceph.purge(id).await.map(|_| format!("purged osd.{id}")),
            Effect::StopDaemon | Effect::Zap { .. } => return self.carry_out_on_host(r, effect).await,
        };
        on_cluster.map_err(|e| e.to_string())
    }

    async fn carry_out_on_host(&self, r: &Removal, effect: &Effect) -> Result<String, String> {
        let id = r.osd_id;
        let host = self.store.host(&r.host).await.map_err(|e| e.to_string())?;
        let done = match effect {
            Effect::Zap { path } => {
                self.event(
                    Level::Info,
                    EventKind::Zap,
                    Some(&r.host),
                    Some(&format!("osd.{id}")),
                    format!("Zapping devices for osd.{id} on {}", r.host),
                )
                .await;
                let req = ZapRequest { path: path.clone(), force: true, reason: Some(format!("removal of osd.{id}")) };
                self.agents.zap(&host, &req).await.map(|z| z.steps.join("; "))
            }
            _ => self.agents.stop_osd(&host, id).await.map(|s| s.detail),
        };
        done.map_err(|e| e.to_string())
    }
}

/// See `daemon::crash`.
fn crash_point(effect: &Effect) {
    if crate::daemon::crash::armed(effect.name()) {
        eprintln!(
            "OSDKEEPER_CRASH_AFTER={}: aborting after the {} step, as a crash would",
            effect.name(),
            effect.name()
        );
        std::process::abort();
    }
}
