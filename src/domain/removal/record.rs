//! The worker's bookkeeping around `advance`, as rules: what to observe
//! beyond the cluster state read once per round, what a step changes in the
//! stored record, whether it must be written, when to take a progress
//! sample, and whether the removal may go on within the same round.

use super::{pgs_left, Effect, Observation, Phase, Removal, RemovalRecord, Step, Verdict};
use crate::domain::cluster::{format_weight, ClusterState};
use crate::domain::operation::{record, Recorded};

/// The part of an observation the round's one read of the cluster gives.
/// The verdicts and the host's view are filled in afterwards, as
/// `questions` says.
pub fn observe_cluster(r: &Removal, cluster: &ClusterState, may_start_drain: Verdict) -> Observation {
    let osd = cluster.osd(r.osd_id);
    Observation {
        exists: osd.is_some(),
        uuid: osd.and_then(|o| o.uuid.clone()),
        destroyed: osd.is_some_and(|o| o.destroyed),
        up: osd.is_some_and(|o| o.up),
        is_in: osd.is_some_and(|o| o.is_in),
        noout: osd.is_some_and(|o| o.noout),
        crush_weight: osd.and_then(|o| o.crush_weight),
        pgs: osd.and_then(|o| o.pgs),
        ok_to_stop: None,
        safe_to_destroy: None,
        may_start_drain,
        host_reachable: true,
        daemon_running: None,
        clean_devices: Vec::new(),
        replaced_devices: Vec::new(),
        shared_now: Vec::new(),
        copies: None,
    }
}

/// What else the worker must ask before `advance` can decide. Each question
/// costs a call to the monitors or to the host, so only what the phase needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Questions {
    pub ok_to_stop: bool,
    pub safe_to_destroy: bool,
    /// Whether the OSD daemon runs (asks the host's agent).
    pub daemon: bool,
    /// A fresh inventory of the host, to see which devices are wiped.
    pub devices: bool,
    /// Every PG's copies (`pg dump pgs_brief`, `osd dump`): in place,
    /// in the phases of the stop, the destroy and the zap.
    pub copies: bool,
}

pub fn questions(r: &Removal, obs: &Observation) -> Questions {
    let copies = r.in_place.is_some()
        && match r.phase {
            Phase::Stopping | Phase::Destroying => true,
            Phase::Zapping => r.zap,
            _ => false,
        };
    if !obs.exists {
        return Questions { copies, ..Questions::default() };
    }
    let safe_to_destroy = match r.phase {
        // A stop request leads to Restoring, which does not ask.
        Phase::Draining | Phase::WaitingSafe if r.stop_requested => false,
        Phase::WaitingSafe => true,
        Phase::Draining => r.force || pgs_left(obs) == Some(0),
        // Their gate is the OSD marked down: until then the answer goes unused.
        // In place, nothing is asked: the risk was accepted up front.
        Phase::Stopping | Phase::Destroying => !obs.up && r.in_place.is_none(),
        _ => false,
    };
    let on_host = matches!(r.phase, Phase::Stopping | Phase::Destroying | Phase::Zapping);
    Questions {
        ok_to_stop: r.phase == Phase::Queued && (obs.may_start_drain.ok || r.in_place.is_some()) && !r.stop_requested,
        safe_to_destroy,
        daemon: on_host,
        devices: r.phase == Phase::Zapping && r.zap,
        copies,
    }
}

/// The figures a step records beside its decision: the PGs and space the
/// observation shows, and when the drain began (with this step, if it
/// began it).
pub fn progress(mut step: Step, before: &Removal, obs: &Observation, kb_used: Option<u64>, now: i64) -> Step {
    let next = &mut step.next;
    next.pgs_now = pgs_left(obs);
    next.kb_used_now = kb_used.map(|k| k as i64);
    if began_drain(before, next) {
        next.drain_started_at = Some(now);
    }
    step
}

/// The drain began between these two states: it counts toward the pacing
/// limit from now on.
pub fn began_drain(before: &Removal, after: &Removal) -> bool {
    before.phase == Phase::Queued && after.phase == Phase::Draining
}

/// Applies `step` to the stored record: the figures (`progress`), then the
/// bookkeeping every operation shares (`operation::record`).
pub fn after_step(
    rec: &RemovalRecord,
    step: Step,
    obs: &Observation,
    kb_used: Option<u64>,
    now: i64,
) -> Recorded<Removal> {
    let step = progress(step, &rec.state, obs, kb_used, now);
    record(rec, &step, now, changed)
}

/// Whether the removal changed in a way a reader sees: everything but the
/// space used, which moves every round of a drain (its PG count is shown
/// and sampled; the space only with it).
pub fn changed(before: &Removal, after: &Removal) -> bool {
    let same_space = Removal { kb_used_now: before.kb_used_now, ..after.clone() };
    *before != same_space
}

/// How long a drain may go without a progress sample when its PG count
/// stands still: the chart and the rate need a point now and then.
pub const SAMPLE_EVERY_MS: i64 = 30_000;

/// The PG count to sample after a step, if one is due: while (or as soon
/// as) the OSD drained, whenever the count changed or the last sample is old.
pub fn sample_due(before: &RemovalRecord, after: &RemovalRecord, last_sample_at: Option<i64>) -> Option<i64> {
    let pgs = after.state.pgs_now?;
    if !(after.state.phase.is_draining() || before.state.phase.is_draining()) {
        return None;
    }
    let changed = before.state.pgs_now != Some(pgs);
    let stale = last_sample_at.is_none_or(|at| after.updated_at - at > SAMPLE_EVERY_MS);
    (changed || stale).then_some(pgs)
}

/// What someone else did to a drain under way, when this step sets it
/// back: the progress sample keeps it as the reason for data coming back.
/// `drain_applied` says the drain's own reweight (or mark-out) went
/// through before; without it a re-applied drain is the daemon finishing
/// what a crash interrupted, nobody else's doing.
pub fn undone_outside(before: &Removal, step: &Step, obs: &Observation, drain_applied: bool) -> Option<String> {
    if !drain_applied || before.phase != Phase::Draining || step.next.phase != Phase::Draining {
        return None;
    }
    let id = before.osd_id;
    match step.effect {
        Some(Effect::Reweight { .. }) => Some(format!(
            "osd.{id}'s CRUSH weight was set to {} by someone else (set back to 0)",
            obs.crush_weight.map_or("?".into(), format_weight)
        )),
        Some(Effect::MarkOut) => Some(format!("osd.{id} was marked in by someone else (marked out again)")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::cluster::OsdState;
    use crate::domain::removal::advance;

    fn record(phase: Phase) -> RemovalRecord {
        let mut removal = Removal::new(4, "f5-422-03".into(), false, false, true, vec!["/dev/loop4".into()]);
        removal.phase = phase;
        super::super::queued_record(1, removal, 0)
    }

    fn cluster(pgs: i64, up: bool) -> ClusterState {
        ClusterState {
            fsid: String::new(),
            osds: vec![OsdState {
                id: 4,
                up,
                is_in: true,
                destroyed: false,
                noout: false,
                crush_weight: Some(0.0),
                pgs: Some(pgs),
                kb_used: Some(2048),
                crush_host: Some("f5-422-03".into()),
                device_class: None,
                uuid: None,
            }],
            pg_states: vec![],
        }
    }

    #[test]
    fn questions_follow_the_phase() {
        let obs = observe_cluster(&record(Phase::Queued).state, &cluster(20, true), Verdict::yes());
        let q = questions(&record(Phase::Queued).state, &obs);
        assert!(q.ok_to_stop && !q.safe_to_destroy && !q.daemon);
        let paced = observe_cluster(&record(Phase::Queued).state, &cluster(20, true), Verdict::no("limit"));
        assert!(!questions(&record(Phase::Queued).state, &paced).ok_to_stop, "no ok-to-stop while paced");
        // A drain asks safe-to-destroy only once the PGs are gone (or when forced).
        let draining = record(Phase::Draining);
        assert!(
            !questions(&draining.state, &observe_cluster(&draining.state, &cluster(5, true), Verdict::yes()))
                .safe_to_destroy
        );
        assert!(
            questions(&draining.state, &observe_cluster(&draining.state, &cluster(0, true), Verdict::yes()))
                .safe_to_destroy
        );
        // Stopping and destroying ask only once the OSD is down, their gate.
        for phase in [Phase::Stopping, Phase::Destroying] {
            let r = record(phase);
            let up = observe_cluster(&r.state, &cluster(0, true), Verdict::yes());
            let down = observe_cluster(&r.state, &cluster(0, false), Verdict::yes());
            assert!(!questions(&r.state, &up).safe_to_destroy, "{phase:?}, up");
            assert!(questions(&r.state, &down).safe_to_destroy && questions(&r.state, &down).daemon, "{phase:?}");
        }
        let mut stopped = record(Phase::WaitingSafe);
        stopped.state.stop_requested = true;
        let obs = observe_cluster(&stopped.state, &cluster(0, true), Verdict::yes());
        assert!(!questions(&stopped.state, &obs).safe_to_destroy, "rm stop restores, it asks nothing");
        let zapping = record(Phase::Zapping);
        let q = questions(&zapping.state, &observe_cluster(&zapping.state, &cluster(0, false), Verdict::yes()));
        assert!(q.daemon && q.devices && !q.safe_to_destroy);
        let gone = observe_cluster(&zapping.state, &ClusterState::default(), Verdict::yes());
        assert_eq!(questions(&zapping.state, &gone), Questions::default(), "nothing to ask about a purged OSD");
    }

    #[test]
    fn a_step_records_the_drain_start_and_is_written_before_its_effect() {
        let rec = record(Phase::Queued);
        let mut obs = observe_cluster(&rec.state, &cluster(20, true), Verdict::yes());
        obs.ok_to_stop = Some(Verdict::yes());
        let step = advance(&rec.state, &obs);
        let r = after_step(&rec, step, &obs, Some(2048), 1000);
        assert!(r.save && began_drain(&rec.state, &r.next.state) && !r.go_on, "an effect ends the round");
        let s = &r.next.state;
        assert_eq!((s.drain_started_at, s.pgs_now, s.kb_used_now), (Some(1000), Some(20), Some(2048)));
        assert_eq!(r.next.state.phase, Phase::Draining);
        // The same wait again with the same count: nothing to write.
        let draining = RemovalRecord { waiting_on: Some("draining: 20 PGs left".into()), ..r.next.clone() };
        let obs = observe_cluster(&draining.state, &cluster(20, true), Verdict::yes());
        let again = after_step(&draining, advance(&draining.state, &obs), &obs, Some(4096), 2000);
        assert!(!again.save && !again.go_on, "more space used alone is not worth a write");
        let obs = observe_cluster(&draining.state, &cluster(12, true), Verdict::yes());
        assert!(after_step(&draining, advance(&draining.state, &obs), &obs, None, 3000).save, "fewer PGs are shown");
    }

    #[test]
    fn a_finished_removal_gets_its_end_time_once() {
        let mut rec = record(Phase::Zapping);
        rec.state.zap = false;
        let obs = observe_cluster(&rec.state, &ClusterState::default(), Verdict::yes());
        let r = after_step(&rec, advance(&rec.state, &obs), &obs, None, 5000);
        assert_eq!((r.next.state.phase, r.next.finished_at), (Phase::Done, Some(5000)));
        assert!(!r.go_on, "a finished removal stops");
        let later = after_step(&r.next, advance(&r.next.state, &obs), &obs, None, 9000);
        assert_eq!(later.next.finished_at, Some(5000));
    }

    #[test]
    fn a_drain_undone_by_someone_else_is_named_only_after_it_took() {
        let rec = record(Phase::Draining);
        let mut c = cluster(12, true);
        c.osds[0].crush_weight = Some(1.5);
        let obs = observe_cluster(&rec.state, &c, Verdict::yes());
        let step = advance(&rec.state, &obs);
        assert_eq!(step.effect, Some(Effect::Reweight { weight: 0.0 }));
        assert_eq!(
            undone_outside(&rec.state, &step, &obs, true).as_deref(),
            Some("osd.4's CRUSH weight was set to 1.50000 by someone else (set back to 0)")
        );
        assert_eq!(undone_outside(&rec.state, &step, &obs, false), None, "a crash before the reweight");
        let at_zero = observe_cluster(&rec.state, &cluster(12, true), Verdict::yes());
        assert_eq!(undone_outside(&rec.state, &advance(&rec.state, &at_zero), &at_zero, true), None);
        let queued = record(Phase::Queued);
        let mut obs = observe_cluster(&queued.state, &c, Verdict::yes());
        obs.ok_to_stop = Some(Verdict::yes());
        assert_eq!(undone_outside(&queued.state, &advance(&queued.state, &obs), &obs, true), None, "the first");
    }

    #[test]
    fn samples_when_the_count_moves_or_every_half_minute() {
        let mut before = record(Phase::Draining);
        before.state.pgs_now = Some(20);
        let mut after = before.clone();
        after.updated_at = 40_000;
        assert_eq!(sample_due(&before, &after, Some(20_000)), None, "same count, recent sample");
        assert_eq!(sample_due(&before, &after, Some(5_000)), Some(20), "same count, old sample");
        assert_eq!(sample_due(&before, &after, None), Some(20), "the first sample");
        after.state.pgs_now = Some(18);
        assert_eq!(sample_due(&before, &after, Some(39_000)), Some(18));
        let done = record(Phase::Done);
        assert_eq!(sample_due(&done, &done, None), None, "not outside a drain");
    }
}
