//! The operation kernel: one executor for every kind of durable operation
//! (removals, deployments, swaps, cluster benchmarks, disk probes).
//!
//! A kind says how to observe one of its operations, how to carry out an
//! effect, and what an outcome changes (`OperationKind`); its decisions are
//! the pure functions of its module in `domain/`. The executor does the
//! rest the same way for every kind, one round at a time: an effect a
//! restart cut off is closed first (`interrupted`); each active operation
//! that is due (not backing off) is observed, advanced, its next state
//! **written before** its effect, the effect logged as an intent, carried
//! out, its outcome logged and applied, and written again; crash injection
//! by effect name (`crash.rs`); a span per operation (`operation{kind,
//! number, subject, host}`) and per effect (`effect{effect}`); the store's
//! change counters bumped by every write. See docs/design/operations.md.

pub(super) mod crash;

use std::future::Future;
use std::time::Duration;

use tracing::Instrument;

use super::{DaemonError, Pace};
use crate::clock::now_ms;
use crate::domain::operation::{
    after_outcome, due, Action, Effect, Intent, Operation, Outcome, OutcomeStatus, Recorded, State, Step,
};
use crate::store::{Codec, Store};

/// A phase change without an effect leads straight to the next phase;
/// this bounds how many one round may walk through (every kind has fewer).
const MAX_STEPS_PER_ROUND: usize = 8;

/// What the executor does after an effect within the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Observe again at once and go on.
    Continue,
    /// Leave the operation to the next round.
    Stop,
}

/// A lane's name and its operations, in order.
type Lane<S> = (Option<String>, Vec<Operation<S>>);

/// Why an interrupted action's outcome is unknown.
const CUT_OFF: &str = "the daemon stopped before this action's outcome was recorded";

/// One kind of operation, as the executor drives it. Decisions are the
/// kind's pure functions in `domain/`; these methods observe and act.
pub trait OperationKind: Send + Sync + 'static {
    type Codec: Codec<State = Self::State, Effect = Self::Effect>;
    type State: State + Clone + PartialEq + Send + Sync;
    type Effect: Effect + Clone + PartialEq + Send + Sync;
    /// What an effect that went through gives back.
    type Output: Send + Sync;
    /// What a round reads once for all its operations (the cluster).
    type Round: Clone + Send + Sync;
    type Observation: Send + Sync;

    /// Reads what the round's operations share; an error ends the round
    /// (each operation keeps it as its last error when the kind says so).
    fn begin_round(
        &self,
        active: &[Operation<Self::State>],
    ) -> impl Future<Output = Result<Self::Round, DaemonError>> + Send;

    /// What this operation's next decision needs to know.
    fn observe(
        &self,
        op: &Operation<Self::State>,
        round: &mut Self::Round,
    ) -> impl Future<Output = Self::Observation> + Send;

    /// The kind's pure decision.
    fn advance(
        &self,
        op: &Operation<Self::State>,
        obs: &Self::Observation,
        now: i64,
    ) -> Step<Self::State, Self::Effect>;

    /// The step applied to the stored record (`operation::record`, with the
    /// kind's figures and its rule of what is worth a write); the round
    /// learns what the step changed (a drain that began).
    fn record(
        &self,
        op: &Operation<Self::State>,
        step: &Step<Self::State, Self::Effect>,
        obs: &Self::Observation,
        round: &mut Self::Round,
        now: i64,
    ) -> Recorded<Self::State>;

    /// After a step was written: samples, events, what the phase change frees.
    fn after_step(
        &self,
        before: &Operation<Self::State>,
        after: &Operation<Self::State>,
        step: &Step<Self::State, Self::Effect>,
        obs: &Self::Observation,
    ) -> impl Future<Output = ()> + Send;

    /// What exactly the effect asks, for the action log.
    fn detail(&self, op: &Operation<Self::State>, effect: &Self::Effect) -> String;

    /// Carries the effect out.
    fn perform(
        &self,
        op: &Operation<Self::State>,
        effect: &Self::Effect,
    ) -> impl Future<Output = Outcome<Self::Output>> + Send;

    /// The action log's words for an effect that went through, and what it
    /// printed that is worth keeping whole.
    fn done_detail(&self, output: &Self::Output) -> (String, Option<String>);

    /// What the outcome changes in the state (pure, in `domain/`).
    fn apply(
        &self,
        op: &Operation<Self::State>,
        effect: &Self::Effect,
        outcome: &Outcome<Self::Output>,
        now: i64,
    ) -> Self::State;

    /// After an effect's outcome was written: events, refreshes; whether
    /// the operation goes on within the round.
    fn after_effect(
        &self,
        before: &Operation<Self::State>,
        after: &Operation<Self::State>,
        effect: &Self::Effect,
        outcome: &Outcome<Self::Output>,
        round: &mut Self::Round,
    ) -> impl Future<Output = Flow> + Send;

    /// What an operation whose `effect` a restart cut off becomes (pure).
    fn interrupted(&self, state: &Self::State, effect: &Self::Effect) -> Self::State;

    /// After an interrupted effect was dealt with.
    fn after_interrupted(
        &self,
        before: &Operation<Self::State>,
        after: &Operation<Self::State>,
    ) -> impl Future<Output = ()> + Send;

    /// How soon to look at the operation again; `None`: the worker's
    /// interval is soon enough.
    fn next_look(&self, _op: &Operation<Self::State>, _acted: bool) -> Option<Duration> {
        None
    }

    /// Operations of the same lane run one after another; lanes run side
    /// by side (a host's probes). `None`: one lane for all.
    fn lane(&self, _op: &Operation<Self::State>) -> Option<String> {
        None
    }

    /// After every operation of the round was driven (`round` is `None`
    /// when it could not be read); `active` as the round began.
    fn end_round(
        &self,
        round: Option<Self::Round>,
        active: &[Operation<Self::State>],
    ) -> impl Future<Output = ()> + Send;

    /// Before anything else in a round: what a kind does even without
    /// active operations (a recovery boost a crash left behind).
    fn idle(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// When reading the round's shared view failed: what each active
    /// operation keeps of it (its last error), if anything.
    fn round_failed(&self, _error: &DaemonError) -> Option<String> {
        None
    }
}

/// How long an operation whose effects keep failing waits: its worker's
/// interval, doubled per further failure, up to a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub interval: Duration,
    pub max: Duration,
}

/// Drives one kind's operations.
pub struct Executor<K> {
    kind: K,
    store: Store,
    backoff: Backoff,
}

impl<K: OperationKind> Executor<K> {
    pub fn new(kind: K, store: Store, backoff: Backoff) -> Executor<K> {
        Executor { kind, store, backoff }
    }

    /// One round over the kind's active operations.
    pub async fn round(&self) -> Result<Pace, DaemonError> {
        self.close_interrupted().await?;
        let active = self.store.ops::<K::Codec>().active().await?;
        if active.is_empty() {
            self.kind.idle().await;
            return Ok(Pace::Interval);
        }
        let round = match self.kind.begin_round(&active).await {
            Ok(r) => r,
            Err(e) => {
                if let Some(why) = self.kind.round_failed(&e) {
                    self.keep_round_error(&active, &why).await;
                }
                self.kind.end_round(None, &active).await;
                return Err(e);
            }
        };
        let now = now_ms();
        let due: Vec<Operation<K::State>> =
            active.iter().filter(|op| due(op, now, self.backoff.interval, self.backoff.max)).cloned().collect();
        let mut lanes: Vec<Lane<K::State>> = Vec::new();
        for op in due {
            let lane = self.kind.lane(&op);
            match lanes.iter_mut().find(|(l, _)| *l == lane) {
                Some((_, ops)) => ops.push(op),
                None => lanes.push((lane, vec![op])),
            }
        }
        let looks = if lanes.len() <= 1 {
            let mut round = round.clone();
            let ops = lanes.into_iter().next().map(|(_, ops)| ops).unwrap_or_default();
            let looks = self.drive_lane(ops, &mut round).await;
            self.kind.end_round(Some(round), &active).await;
            looks
        } else {
            let runs = lanes.into_iter().map(|(_, ops)| {
                let mut lane_round = round.clone();
                async move { self.drive_lane(ops, &mut lane_round).await }
            });
            let looks = futures::future::join_all(runs).await.into_iter().flatten().collect();
            self.kind.end_round(Some(round), &active).await;
            looks
        };
        Ok(looks.into_iter().flatten().min().map_or(Pace::Interval, Pace::Within))
    }

    async fn drive_lane(&self, ops: Vec<Operation<K::State>>, round: &mut K::Round) -> Vec<Option<Duration>> {
        let mut looks = Vec::with_capacity(ops.len());
        for op in ops {
            let span = tracing::info_span!(
                "operation",
                kind = <K::Codec as Codec>::KIND.as_str(),
                number = op.number,
                subject = %op.subject,
                host = op.host.as_deref().unwrap_or(""),
            );
            let (kind, number) = (<K::Codec as Codec>::KIND.as_str(), op.number);
            match self.drive(op, round).instrument(span).await {
                Ok(look) => looks.push(look),
                Err(e) => {
                    tracing::error!(kind, number, "operation step failed: {e}");
                    looks.push(None);
                }
            }
        }
        looks
    }

    /// Advances one operation as far as it goes this round.
    async fn drive(&self, mut op: Operation<K::State>, round: &mut K::Round) -> Result<Option<Duration>, DaemonError> {
        let mut done: Option<K::Effect> = None;
        for _ in 0..MAX_STEPS_PER_ROUND {
            let obs = self.kind.observe(&op, round).await;
            let now = now_ms();
            let step = self.kind.advance(&op, &obs, now);
            if step.effect.is_some() && step.effect == done {
                // Done a moment ago and not showing yet: the next round
                // looks again rather than repeating it at once.
                return Ok(self.kind.next_look(&op, true));
            }
            let recorded = self.kind.record(&op, &step, &obs, round, now);
            let mut next = recorded.next;
            if recorded.save {
                next.version = self.store.ops::<K::Codec>().save(&next, op.version).await?;
            }
            self.kind.after_step(&op, &next, &step, &obs).await;
            op = next;
            let Some(effect) = step.effect else {
                if recorded.go_on {
                    continue;
                }
                break;
            };
            let before = op.clone();
            let outcome = self.perform(&mut op, &effect).await?;
            if self.kind.after_effect(&before, &op, &effect, &outcome, round).await == Flow::Stop {
                return Ok(self.kind.next_look(&op, true));
            }
            done = Some(effect);
        }
        Ok(self.kind.next_look(&op, false))
    }

    /// Logs the intent, carries the effect out, logs and applies its
    /// outcome, and writes the operation again.
    async fn perform(
        &self,
        op: &mut Operation<K::State>,
        effect: &K::Effect,
    ) -> Result<Outcome<K::Output>, DaemonError> {
        let intent = Intent {
            effect: effect.name(),
            args: K::Codec::encode_effect(effect),
            detail: self.kind.detail(op, effect),
            destructive: effect.is_destructive(),
        };
        let action = self.store.log_action(op.id, &intent, now_ms()).await?;
        // Right before the effect, after its intent's commit: a leader that
        // froze or whose writes hung since that commit began ends here
        // (`store::lease`), so that another daemon's decisions never meet
        // an effect decided before they were made.
        self.store.fence_if_lease_lapsed(&format!("{} of {}", effect.name(), op.subject))?;
        let outcome =
            self.kind.perform(op, effect).instrument(tracing::info_span!("effect", effect = effect.name())).await;
        if matches!(outcome, Outcome::Done(_)) {
            crash::point(<K::Codec as Codec>::KIND, effect.name());
        }
        let now = now_ms();
        let (detail, output) = match &outcome {
            Outcome::Done(out) => self.kind.done_detail(out),
            Outcome::Failed(why) | Outcome::Unknown(why) | Outcome::Refused(why) => (why.clone(), None),
        };
        self.store.finish_action(action, outcome.status(), &detail, output.as_deref(), now).await?;
        match outcome.status() {
            OutcomeStatus::Ok => {}
            OutcomeStatus::Failed => tracing::warn!("{} failed: {detail}", effect.name()),
            OutcomeStatus::Unknown => tracing::warn!("{}: no outcome yet: {detail}", effect.name()),
        }
        let state = self.kind.apply(op, effect, &outcome, now);
        op.state = state;
        after_outcome(op, &outcome, now);
        if op.state.is_finished() && op.finished_at.is_none() {
            op.finished_at = Some(now);
        }
        let v = op.version;
        op.version = self.store.ops::<K::Codec>().save(op, v).await?;
        Ok(outcome)
    }

    /// Closes the actions a restart cut off (logged, no outcome) and lets
    /// each kind decide what its operation becomes.
    async fn close_interrupted(&self) -> Result<(), DaemonError> {
        for (op, action) in self.store.ops::<K::Codec>().interrupted().await? {
            self.close(op, &action).await?;
        }
        Ok(())
    }

    async fn close(&self, op: Operation<K::State>, action: &Action) -> Result<(), DaemonError> {
        let now = now_ms();
        tracing::warn!(
            kind = <K::Codec as Codec>::KIND.as_str(),
            number = op.number,
            "{} of {} was cut off by a restart",
            action.effect,
            op.subject
        );
        self.store.finish_action(action.id, OutcomeStatus::Unknown, CUT_OFF, None, now).await?;
        let Ok(effect) = K::Codec::decode_effect(&action.args) else {
            // An effect this release does not know: the kind observes again.
            tracing::error!("cannot read the interrupted action {}: {}", action.id, action.args);
            return Ok(());
        };
        let state = self.kind.interrupted(&op.state, &effect);
        if state == op.state {
            return Ok(());
        }
        let mut after = op.clone();
        after.state = state;
        after.updated_at = now;
        if after.state.is_finished() && after.finished_at.is_none() {
            after.finished_at = Some(now);
        }
        after.version = self.store.ops::<K::Codec>().save(&after, op.version).await?;
        self.kind.after_interrupted(&op, &after).await;
        Ok(())
    }

    /// Keeps the round's error as each operation's last error.
    async fn keep_round_error(&self, active: &[Operation<K::State>], why: &str) {
        for op in active {
            let mut op = op.clone();
            op.last_error = Some(why.to_string());
            op.updated_at = now_ms();
            let v = op.version;
            if let Err(e) = self.store.ops::<K::Codec>().save(&op, v).await {
                tracing::error!(number = op.number, "cannot record the error of {}: {e}", op.subject);
            }
        }
    }
}
