//! Durable operations as values: the shape every long-running piece of
//! work shares (a removal, a deployment, a cluster benchmark, a disk
//! probe), whatever it does.
//!
//! An operation is one stored record (`Operation`): its kind, what it acts
//! on (`subject`), its kind's own state, and the bookkeeping around it. Each
//! kind decides its next step with a pure `advance(state, observation) ->
//! Step` of its own; the executor (`daemon/operations/`) writes the step's
//! state, logs the step's effect as an intent (`Action`), carries it out,
//! and records the `Outcome`. The rules here are the ones every kind
//! shares: what a step changes in the record, when it must be written,
//! whether the operation may go on at once, and how long to wait after
//! effects that failed. Documented in docs/design/operations.md.

use std::time::Duration;

use super::backoff::backoff;

/// The kinds of operation. A new kind is one more variant here, its state
/// machine in `domain/`, its codec in `store/operations/`, and its
/// `OperationKind` in `daemon/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Removal,
    Deployment,
    ClusterBench,
    DiskProbe,
    Swap,
}

impl Kind {
    pub const ALL: [Kind; 5] = [Kind::Removal, Kind::Deployment, Kind::ClusterBench, Kind::DiskProbe, Kind::Swap];

    /// The kind's name in the store and in crash-injection names.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Removal => "removal",
            Kind::Deployment => "deployment",
            Kind::ClusterBench => "cluster-bench",
            Kind::DiskProbe => "disk-probe",
            Kind::Swap => "swap",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What a kind's state says about itself to the executor and the store.
pub trait State {
    /// The phase, as stored beside the state for queries ("draining").
    fn phase_name(&self) -> &'static str;
    /// Nothing more will happen: the operation leaves the active ones.
    fn is_finished(&self) -> bool;
}

/// What a kind's effect says about itself to the executor and the action log.
pub trait Effect {
    /// Its name, as logged and as `OSDKEEPER_CRASH_AFTER` names it.
    fn name(&self) -> &'static str;
    /// It cannot be undone (purge, destroy, zap, a probe's writes).
    fn is_destructive(&self) -> bool;
}

/// An operation with its bookkeeping, as stored. `version` guards every
/// write (optimistic concurrency: a stop request and the worker never
/// overwrite each other).
#[derive(Debug, Clone, PartialEq)]
pub struct Operation<S> {
    /// The row's id, unique over every kind.
    pub id: i64,
    /// The kind's own numbering ("removal 7", "cluster benchmark 3"): what
    /// the API and the CLI show.
    pub number: i64,
    /// What it acts on (`osd.8`, `f5-422-01:osd.ssds`, a disk); one active
    /// operation per kind and subject.
    pub subject: String,
    /// The host it acts on, when it acts on one.
    pub host: Option<String>,
    pub state: S,
    /// The gate it waits on and why, in the cluster's words.
    pub waiting_on: Option<String>,
    /// Why its last effect failed (cleared by one that went through).
    pub last_error: Option<String>,
    /// The token that asked for it; none when the daemon began it itself.
    pub actor: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub finished_at: Option<i64>,
    /// Effects that failed in a row: the executor waits longer after each
    /// (`retry_after`).
    pub failures: u32,
    pub version: i64,
}

/// An operation about to be stored: what it acts on and its first state.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOperation<S> {
    pub subject: String,
    pub host: Option<String>,
    pub state: S,
    pub actor: Option<String>,
}

/// The next state, at most one effect, and what the operation waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<S, E> {
    pub next: S,
    pub effect: Option<E>,
    /// The gate it waits on and why.
    pub waiting_on: Option<String>,
}

impl<S, E> Step<S, E> {
    pub fn wait(next: S, why: impl Into<String>) -> Step<S, E> {
        Step { next, effect: None, waiting_on: Some(why.into()) }
    }

    pub fn act(next: S, effect: E) -> Step<S, E> {
        Step { next, effect: Some(effect), waiting_on: None }
    }

    pub fn go(next: S) -> Step<S, E> {
        Step { next, effect: None, waiting_on: None }
    }
}

/// What became of an effect.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// It went through; what it gave back.
    Done(T),
    /// It did not happen, and why.
    Failed(String),
    /// No answer (a timeout, a busy host): whether it happened is for the
    /// next observation to say.
    Unknown(String),
    /// It did not happen: the host found something other than what the
    /// effect named (another disk at the path, another OSD at the id), in
    /// its words. Asked again, it would be refused again.
    Refused(String),
}

impl<T> Outcome<T> {
    pub fn status(&self) -> OutcomeStatus {
        match self {
            Outcome::Done(_) => OutcomeStatus::Ok,
            Outcome::Failed(_) | Outcome::Refused(_) => OutcomeStatus::Failed,
            Outcome::Unknown(_) => OutcomeStatus::Unknown,
        }
    }

    /// The reason of an effect that did not go through.
    pub fn error(&self) -> Option<&str> {
        match self {
            Outcome::Done(_) => None,
            Outcome::Failed(why) | Outcome::Unknown(why) | Outcome::Refused(why) => Some(why),
        }
    }
}

/// An outcome as the action log keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutcomeStatus {
    Ok,
    Failed,
    Unknown,
}

impl OutcomeStatus {
    pub const ALL: [OutcomeStatus; 3] = [OutcomeStatus::Ok, OutcomeStatus::Failed, OutcomeStatus::Unknown];

    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Ok => "ok",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<OutcomeStatus> {
        OutcomeStatus::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// An effect's entry in the action log: written before the effect is
/// carried out (its intent), completed after (its outcome). One without an
/// outcome was cut off by a restart: it may or may not have happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub id: i64,
    pub operation_id: i64,
    /// The effect's name ("purge", "prepare").
    pub effect: String,
    /// The effect in full, in the kind's stored form (JSON).
    pub args: String,
    /// What exactly was asked, for people ("ceph-volume raw prepare ...").
    pub detail: String,
    pub destructive: bool,
    pub issued_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: Option<OutcomeStatus>,
    /// What it did, or why it did not.
    pub outcome_detail: Option<String>,
    /// What it printed that is worth keeping whole (fio's report).
    pub output: Option<String>,
}

impl Action {
    /// It went through.
    pub fn succeeded(&self) -> bool {
        self.outcome == Some(OutcomeStatus::Ok)
    }
}

/// An intent about to be logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub effect: &'static str,
    pub args: String,
    pub detail: String,
    pub destructive: bool,
}

/// A step applied to the stored record, by the rules every kind shares.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded<S> {
    pub next: Operation<S>,
    /// Something a reader would see changed: write it before any effect.
    pub save: bool,
    /// No effect and nothing to wait for, and the phase moved: the next
    /// phase can be looked at at once, within the same round.
    pub go_on: bool,
}

/// Applies `step` to `op` at `now`: the new state and what it waits on,
/// the time, the end time once it finished. `changed` says whether the
/// kind sees a change worth writing between the two states (a kind may
/// leave out figures that move every round).
pub fn record<S: State + Clone, E>(
    op: &Operation<S>,
    step: &Step<S, E>,
    now: i64,
    changed: impl FnOnce(&S, &S) -> bool,
) -> Recorded<S> {
    let mut next = op.clone();
    next.state = step.next.clone();
    next.waiting_on = step.waiting_on.clone();
    next.updated_at = now;
    if next.state.is_finished() && next.finished_at.is_none() {
        next.finished_at = Some(now);
    }
    let save = step.effect.is_some() || next.waiting_on != op.waiting_on || changed(&op.state, &next.state);
    let moved = next.state.phase_name() != op.state.phase_name();
    let go_on = step.effect.is_none() && moved && step.waiting_on.is_none() && !next.state.is_finished();
    Recorded { next, save, go_on }
}

/// Records an effect's outcome in the bookkeeping: the error it left, and
/// the failures in a row.
pub fn after_outcome<S, T>(op: &mut Operation<S>, outcome: &Outcome<T>, now: i64) {
    op.updated_at = now;
    match outcome {
        Outcome::Done(_) => {
            op.last_error = None;
            op.failures = 0;
        }
        Outcome::Failed(why) | Outcome::Refused(why) => {
            op.last_error = Some(why.clone());
            op.failures = op.failures.saturating_add(1);
        }
        // Not a failure: the next observation says whether it happened.
        Outcome::Unknown(why) => op.last_error = Some(why.clone()),
    }
}

/// Failures in a row an operation is looked at again after the usual
/// interval; from then on each further one doubles the wait.
pub const FAILURES_BEFORE_BACKOFF: u32 = 3;

/// How long after its last update an operation whose effects keep failing
/// waits before it is driven again; `None` when it need not wait. The
/// first failures are retried at the worker's pace (a busy host, a
/// monitor election); a lasting one is not hammered.
pub fn retry_after(failures: u32, interval: Duration, max: Duration) -> Option<Duration> {
    let past = failures.checked_sub(FAILURES_BEFORE_BACKOFF)?;
    Some(backoff(interval, max, past + 1))
}

/// Whether an operation may be driven at `now`.
pub fn due<S>(op: &Operation<S>, now: i64, interval: Duration, max: Duration) -> bool {
    retry_after(op.failures, interval, max).is_none_or(|wait| now - op.updated_at >= wait.as_millis() as i64)
}

/// Whether `OSDKEEPER_CRASH_AFTER`'s value names this effect of this
/// kind: the effect's name alone (`purge`), or the kind and the name
/// (`deployment:start`) where two kinds share a name.
pub fn crash_named(armed: &str, kind: Kind, effect: &str) -> bool {
    match armed.split_once(':') {
        Some((k, e)) => k == kind.as_str() && e == effect,
        None => armed == effect,
    }
}

/// Runs `advance` from `state` until it asks for an effect, waits or
/// finishes, as the executor walks a kind's phases within a round: what the
/// kinds' table tests compare.
#[cfg(test)]
pub fn walk<S: State, E>(state: &S, advance: impl Fn(&S) -> Step<S, E>) -> Step<S, E> {
    let mut step = advance(state);
    for _ in 0..10 {
        if step.effect.is_some() || step.waiting_on.is_some() || step.next.is_finished() {
            return step;
        }
        step = advance(&step.next);
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct S {
        phase: &'static str,
        figure: u32,
    }

    impl State for S {
        fn phase_name(&self) -> &'static str {
            self.phase
        }
        fn is_finished(&self) -> bool {
            self.phase == "done"
        }
    }

    fn op(phase: &'static str) -> Operation<S> {
        Operation {
            id: 1,
            number: 1,
            subject: "osd.1".into(),
            host: None,
            state: S { phase, figure: 0 },
            waiting_on: None,
            last_error: None,
            actor: None,
            created_at: 0,
            updated_at: 0,
            finished_at: None,
            failures: 0,
            version: 1,
        }
    }

    fn always(_: &S, _: &S) -> bool {
        true
    }

    fn by_phase(a: &S, b: &S) -> bool {
        a.phase != b.phase
    }

    #[test]
    fn a_phase_change_without_effect_or_wait_goes_on_within_the_round() {
        let r = record(&op("a"), &Step::<S, ()>::go(S { phase: "b", figure: 0 }), 10, always);
        assert!(r.save && r.go_on);
        assert_eq!(r.next.updated_at, 10);
        let waits = record(&op("a"), &Step::<S, ()>::wait(S { phase: "b", figure: 0 }, "gate"), 10, always);
        assert!(waits.save && !waits.go_on);
        let acts = record(&op("a"), &Step::act(S { phase: "b", figure: 0 }, ()), 10, by_phase);
        assert!(acts.save && !acts.go_on, "an effect is written before it is carried out, and ends the walk");
        let stays = record(&op("a"), &Step::<S, ()>::go(S { phase: "a", figure: 0 }), 10, always);
        assert!(!stays.go_on, "no phase change: nothing more to look at");
    }

    #[test]
    fn the_kind_decides_which_changes_are_worth_a_write() {
        let moved_figure = Step::<S, ()>::go(S { phase: "a", figure: 7 });
        assert!(!record(&op("a"), &moved_figure, 10, by_phase).save);
        assert!(record(&op("a"), &moved_figure, 10, always).save);
        let new_wait = Step::<S, ()>::wait(S { phase: "a", figure: 0 }, "gate");
        assert!(record(&op("a"), &new_wait, 10, by_phase).save, "a new gate is shown");
    }

    #[test]
    fn the_end_time_is_set_once() {
        let done = record(&op("a"), &Step::<S, ()>::go(S { phase: "done", figure: 0 }), 10, always);
        assert_eq!(done.next.finished_at, Some(10));
        assert!(!done.go_on);
        let again = record(&done.next, &Step::<S, ()>::go(S { phase: "done", figure: 0 }), 20, always);
        assert_eq!(again.next.finished_at, Some(10));
    }

    #[test]
    fn failures_count_in_a_row_and_back_off_after_a_few() {
        let mut o = op("a");
        after_outcome(&mut o, &Outcome::<()>::Failed("boom".into()), 5);
        after_outcome(&mut o, &Outcome::<()>::Unknown("timeout".into()), 6);
        assert_eq!((o.failures, o.last_error.as_deref()), (1, Some("timeout")), "unknown is no failure");
        after_outcome(&mut o, &Outcome::Done(()), 7);
        assert_eq!((o.failures, o.last_error.as_deref()), (0, None));
        let s = Duration::from_secs;
        assert_eq!(retry_after(2, s(5), s(600)), None);
        assert_eq!(retry_after(3, s(5), s(600)), Some(s(10)));
        assert_eq!(retry_after(4, s(5), s(600)), Some(s(20)));
        assert_eq!(retry_after(40, s(5), s(600)), Some(s(600)));
        o.failures = 4;
        o.updated_at = 1_000;
        assert!(!due(&o, 20_999, s(5), s(600)));
        assert!(due(&o, 21_000, s(5), s(600)));
    }

    #[test]
    fn crash_names_match_the_effect_or_the_kind_and_effect() {
        assert!(crash_named("purge", Kind::Removal, "purge"));
        assert!(crash_named("deployment:start", Kind::Deployment, "start"));
        assert!(!crash_named("deployment:start", Kind::Removal, "start"));
        assert!(!crash_named("purge", Kind::Removal, "zap"));
    }

    #[test]
    fn kinds_and_outcomes_read_back_their_names() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        for o in OutcomeStatus::ALL {
            assert_eq!(OutcomeStatus::parse(o.as_str()), Some(o));
        }
    }
}
