//! A cluster benchmark (`rados bench` write, then seq and rand reads) as a
//! value and a state machine: what was asked, the phase it is in, the
//! cluster's shape when it ran, each pass's numbers, warnings. Each phase
//! has one effect (`advance`); its outcome moves the run on (`apply`, with
//! `next` saying which phase follows which); an effect a restart cut off
//! is never run again unless it is safe to repeat (`interrupted`).

use std::collections::BTreeMap;

mod pool_ready;
pub use pool_ready::pool_not_ready;

use super::methodology::warnings;
use crate::domain::operation::Outcome;

/// One `rados bench` mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Write,
    Seq,
    Rand,
}

impl Pass {
    pub const ALL: [Pass; 3] = [Pass::Write, Pass::Seq, Pass::Rand];

    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Write => "write",
            Pass::Seq => "seq",
            Pass::Rand => "rand",
        }
    }

    pub fn parse(s: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// What one pass measured (`rados bench ... -f json`).
#[derive(Debug, Clone, PartialEq)]
pub struct PassResult {
    pub pass: Pass,
    /// How long it ran (`total_time_run`).
    pub seconds: f64,
    /// Objects written or read.
    pub ops: u64,
    pub op_size: u64,
    /// Ceph's MB/s (MiB per second).
    pub bandwidth_mb_s: f64,
    pub iops: f64,
    pub avg_latency_s: f64,
    pub max_latency_s: f64,
    pub min_latency_s: f64,
}

/// The cluster when the benchmark ran: what a later run must match to be
/// comparable.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClusterShape {
    /// OSDs up and in, by device class ("hdd": 6).
    pub osds_by_class: BTreeMap<String, u32>,
    pub hosts: u32,
    /// The test pool's replica count and placement groups.
    pub pool_size: u32,
    pub pg_num: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterPhase {
    /// Stored; the worker checks the cluster again before anything else.
    Queued,
    /// Creating the test pool (if it is ours) and waiting for its PGs.
    Preparing,
    Write,
    Seq,
    Rand,
    /// Removing the benchmark's objects, and the pool if it made it.
    Cleaning,
    Done,
    Failed,
}

impl ClusterPhase {
    /// Every phase, in the order a run goes through them (the dashboard's `kinds.js` lists them).
    pub const ALL: [ClusterPhase; 8] = [
        ClusterPhase::Queued,
        ClusterPhase::Preparing,
        ClusterPhase::Write,
        ClusterPhase::Seq,
        ClusterPhase::Rand,
        ClusterPhase::Cleaning,
        ClusterPhase::Done,
        ClusterPhase::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ClusterPhase::Queued => "queued",
            ClusterPhase::Preparing => "preparing",
            ClusterPhase::Write => "write",
            ClusterPhase::Seq => "seq",
            ClusterPhase::Rand => "rand",
            ClusterPhase::Cleaning => "cleaning",
            ClusterPhase::Done => "done",
            ClusterPhase::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<ClusterPhase> {
        ClusterPhase::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, ClusterPhase::Done | ClusterPhase::Failed)
    }

    pub fn pass(self) -> Option<Pass> {
        match self {
            ClusterPhase::Write => Some(Pass::Write),
            ClusterPhase::Seq => Some(Pass::Seq),
            ClusterPhase::Rand => Some(Pass::Rand),
            _ => None,
        }
    }
}

/// Bounds of a request, each with its reason.
pub const MIN_SECONDS: u32 = 1;
/// An hour per pass: longer runs are a soak test, not a benchmark.
pub const MAX_SECONDS: u32 = 3600;
pub const DEFAULT_SECONDS: u32 = 60;
/// The field report compares pools of 16 and 256 PGs.
pub const DEFAULT_PG_NUM: u32 = 32;
pub const MAX_PG_NUM: u32 = 4096;
pub const MAX_LABEL: usize = 200;

/// A benchmark run and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterBench {
    pub pool: String,
    /// The daemon made the pool (and removes it); false for a given pool,
    /// where only the benchmark's own objects are removed.
    pub own_pool: bool,
    pub seconds: u32,
    pub pg_num: u32,
    pub label: Option<String>,
    /// Run although the cluster is not HEALTH_OK or a drain runs.
    pub force: bool,
    /// `rados bench --run-name`: names this run's objects, for seq, rand
    /// and the cleanup.
    pub run_name: String,
    pub phase: ClusterPhase,
    /// The cluster's health when the run started.
    pub health: Option<String>,
    pub shape: Option<ClusterShape>,
    pub results: Vec<PassResult>,
    pub warnings: Vec<String>,
    pub failure: Option<String>,
}

/// The pool name a run of ours uses.
pub fn own_pool_name(id: i64) -> String {
    format!("osdkeeper-bench-{id}")
}

/// A request as a run, or why it cannot be one (naming the field).
pub fn new_run(
    pool: Option<String>,
    seconds: Option<u32>,
    pg_num: Option<u32>,
    label: Option<String>,
    force: bool,
) -> Result<ClusterBench, String> {
    let seconds = seconds.unwrap_or(DEFAULT_SECONDS);
    if !(MIN_SECONDS..=MAX_SECONDS).contains(&seconds) {
        return Err(format!("seconds {seconds} is out of range: a pass runs {MIN_SECONDS} to {MAX_SECONDS} s"));
    }
    let pg_num = pg_num.unwrap_or(DEFAULT_PG_NUM);
    if pool.is_some() && pg_num != DEFAULT_PG_NUM {
        return Err("pg_num is only for the pool the benchmark makes, not a given pool".into());
    }
    if !(1..=MAX_PG_NUM).contains(&pg_num) {
        return Err(format!("pg_num {pg_num} is out of range: 1 to {MAX_PG_NUM}"));
    }
    if let Some(p) = &pool {
        let fine =
            !p.is_empty() && p.len() <= 128 && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !fine {
            return Err(format!("pool {p:?} is not a pool name (letters, digits, '-', '_', '.')"));
        }
    }
    if let Some(l) = &label {
        if l.chars().count() > MAX_LABEL || l.chars().any(char::is_control) {
            return Err(format!("label is longer than {MAX_LABEL} characters or holds control characters"));
        }
    }
    Ok(ClusterBench {
        own_pool: pool.is_none(),
        pool: pool.unwrap_or_default(),
        seconds,
        pg_num,
        label: label.filter(|l| !l.trim().is_empty()),
        force,
        run_name: String::new(),
        phase: ClusterPhase::Queued,
        health: None,
        shape: None,
        results: Vec::new(),
        warnings: Vec::new(),
        failure: None,
    })
}

/// The phase after `phase` when it went well; a failure goes to
/// `Cleaning` (`failed`), whose end is `Failed`.
pub fn next(phase: ClusterPhase, failed: bool) -> ClusterPhase {
    use ClusterPhase::*;
    match (phase, failed) {
        (Queued, true) => Failed,
        (Cleaning, true) | (Failed, _) => Failed,
        (_, true) => Cleaning,
        (Queued, false) => Preparing,
        (Preparing, false) => Write,
        (Write, false) => Seq,
        (Seq, false) => Rand,
        (Rand, false) => Cleaning,
        (Cleaning, false) | (Done, _) => Done,
    }
}

/// The one action of a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchEffect {
    /// Check the cluster again (HEALTH_OK, no drain) and note its health.
    Check,
    /// Make the test pool (when the run makes its own) and wait for its PGs.
    PreparePool,
    Pass(Pass),
    /// Remove the run's objects, or its pool.
    CleanUp,
}

impl BenchEffect {
    pub const ALL: [BenchEffect; 6] = [
        BenchEffect::Check,
        BenchEffect::PreparePool,
        BenchEffect::Pass(Pass::Write),
        BenchEffect::Pass(Pass::Seq),
        BenchEffect::Pass(Pass::Rand),
        BenchEffect::CleanUp,
    ];

    /// The name logged and given to `OSDKEEPER_CRASH_AFTER` (`bench-write`).
    pub fn name(self) -> &'static str {
        match self {
            BenchEffect::Check => "bench-check",
            BenchEffect::PreparePool => "bench-prepare",
            BenchEffect::Pass(Pass::Write) => "bench-write",
            BenchEffect::Pass(Pass::Seq) => "bench-seq",
            BenchEffect::Pass(Pass::Rand) => "bench-rand",
            BenchEffect::CleanUp => "bench-cleanup",
        }
    }

    pub fn parse(name: &str) -> Option<BenchEffect> {
        BenchEffect::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Safe to run again after a restart cut it off: a check only reads,
    /// a cleanup of nothing (or of a missing pool) succeeds.
    fn repeatable(self) -> bool {
        matches!(self, BenchEffect::Check | BenchEffect::CleanUp)
    }
}

impl crate::domain::operation::Effect for BenchEffect {
    fn name(&self) -> &'static str {
        BenchEffect::name(*self)
    }

    fn is_destructive(&self) -> bool {
        false
    }
}

impl crate::domain::operation::State for ClusterBench {
    fn phase_name(&self) -> &'static str {
        self.phase.as_str()
    }

    fn is_finished(&self) -> bool {
        self.phase.is_finished()
    }
}

/// What an effect that went through measured or found.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchOutput {
    /// The cluster's health when the run started.
    Health(String),
    /// The cluster's shape, with the test pool ready.
    Shape(ClusterShape),
    Pass(PassResult),
    CleanedUp,
}

pub type BenchStep = crate::domain::operation::Step<ClusterBench, BenchEffect>;

/// The next step: the phase's effect. A run has no gate of its own: it
/// waits for nothing but its effects.
pub fn advance(b: &ClusterBench) -> BenchStep {
    let effect = match b.phase {
        ClusterPhase::Queued => BenchEffect::Check,
        ClusterPhase::Preparing => BenchEffect::PreparePool,
        ClusterPhase::Write => BenchEffect::Pass(Pass::Write),
        ClusterPhase::Seq => BenchEffect::Pass(Pass::Seq),
        ClusterPhase::Rand => BenchEffect::Pass(Pass::Rand),
        ClusterPhase::Cleaning => BenchEffect::CleanUp,
        ClusterPhase::Done | ClusterPhase::Failed => return BenchStep::go(b.clone()),
    };
    BenchStep::act(b.clone(), effect)
}

/// The run after its phase's effect: what it gave kept, the next phase
/// (`next`), the warnings the results so far deserve. Whether an effect
/// that failed or whose outcome is unknown happened does not matter here:
/// either ends the run through its cleanup.
pub fn apply(b: &ClusterBench, outcome: &Outcome<BenchOutput>) -> ClusterBench {
    let mut after = b.clone();
    match outcome {
        Outcome::Done(BenchOutput::Health(h)) => after.health = Some(h.clone()),
        Outcome::Done(BenchOutput::Shape(s)) => after.shape = Some(s.clone()),
        Outcome::Done(BenchOutput::Pass(r)) => {
            after.results.retain(|x| x.pass != r.pass);
            after.results.push(r.clone());
        }
        Outcome::Done(BenchOutput::CleanedUp) => {}
        Outcome::Failed(why) | Outcome::Unknown(why) | Outcome::Refused(why) => {
            after.failure.get_or_insert_with(|| why.clone());
        }
    }
    let failed = after.failure.is_some() || !matches!(outcome, Outcome::Done(_));
    after.phase = next(after.phase, failed);
    after.warnings = warnings(&after);
    after
}

/// What a run whose `effect` a restart cut off becomes: the cleanup and
/// the check run again (safe to repeat), a pass never does (it would write
/// twice), nor a pool's preparation: the run ends through its cleanup.
pub fn interrupted(mut b: ClusterBench, effect: BenchEffect) -> ClusterBench {
    if effect.repeatable() || b.phase.is_finished() {
        return b;
    }
    b.failure = Some(format!(
        "the daemon stopped during the {} phase; the run is not repeated (start a new one)",
        b.phase.as_str()
    ));
    b.phase = ClusterPhase::Cleaning;
    b
}

#[cfg(test)]
mod tests;
