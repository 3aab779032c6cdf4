//! How soon the removal worker looks at the cluster again. A drain of
//! hours needs no more than the configured interval; a gate that opens on
//! its own within seconds (an OSD going down after its stop, safe-to-destroy
//! once the last PGs left) is watched closely, so that the next step starts
//! within about a second of it opening. Right after an effect the worker
//! does not wait at all (`goes_on_after_effect`): it reads the cluster
//! again within the round (`daemon/removal/worker.rs`); `AFTER_ACTION` is
//! for an effect that read does not show yet, or when it could not be made,
//! and after the effect that begins a drain. cephadm's serve loop
//! waits 30-60 s between such steps; osdkeeper waited its 5 s interval per
//! step (measured: stop → purge 8.2 s, purge → zap 6.9 s).

use std::time::Duration;

use super::{Phase, RemovalRecord};

/// After an action whose effect the worker's fresh read did not show yet
/// (or could not make): it shows within moments.
pub const AFTER_ACTION: Duration = Duration::from_millis(500);
/// While a gate that opens by itself soon is pending.
pub const WATCH: Duration = Duration::from_secs(1);
/// A drain with this few PGs left is watched: the last ones often leave
/// together, between two rounds of the interval.
pub const NEAR_END_PGS: i64 = 8;

/// When to look at this removal again; `None`: the worker's interval is
/// soon enough. Never sooner after a failure: the worker's backoff and the
/// interval keep a failing agent or cluster from being hammered.
pub fn next_look(rec: &RemovalRecord, acted: bool) -> Option<Duration> {
    if rec.last_error.is_some() {
        return None;
    }
    if acted {
        return Some(AFTER_ACTION);
    }
    match rec.state.phase {
        Phase::WaitingSafe | Phase::Stopping | Phase::Destroying | Phase::Zapping | Phase::Restoring => Some(WATCH),
        Phase::Draining if rec.state.pgs_now.is_some_and(|n| n <= NEAR_END_PGS) => Some(WATCH),
        // A new disk and a deployment take minutes.
        Phase::Queued | Phase::Draining | Phase::Rejoining | Phase::Done | Phase::Cancelled => None,
    }
}

/// Whether the worker reads the cluster again at once after an effect and
/// goes on with the removal within the round. Not after a failure, and not
/// while it drains: a drain's end is minutes away, and the round's end
/// first does what a drain under way needs (the recovery boost of a fast
/// one; a slow read after the reweight once let a short drain end, unboosted,
/// within the round that began it).
pub fn goes_on_after_effect(rec: &RemovalRecord) -> bool {
    rec.last_error.is_none() && !rec.state.phase.is_draining()
}

/// The soonest look any of a round's removals asks for.
pub fn soonest(looks: impl IntoIterator<Item = Option<Duration>>) -> Option<Duration> {
    looks.into_iter().flatten().min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::removal::{queued_record, Removal};

    fn rec(phase: Phase, pgs: Option<i64>) -> RemovalRecord {
        let mut r = queued_record(1, Removal::new(8, "f5-422-01".into(), false, false, true, vec![]), 0);
        r.state.phase = phase;
        r.state.pgs_now = pgs;
        r
    }

    #[test]
    fn gates_about_to_open_are_watched_long_drains_are_not() {
        assert_eq!(next_look(&rec(Phase::Draining, Some(91)), false), None, "hours of drain left");
        assert_eq!(next_look(&rec(Phase::Draining, Some(5)), false), Some(WATCH), "the last PGs");
        assert_eq!(next_look(&rec(Phase::Draining, None), false), None);
        for phase in [Phase::WaitingSafe, Phase::Stopping, Phase::Destroying, Phase::Zapping, Phase::Restoring] {
            assert_eq!(next_look(&rec(phase, None), false), Some(WATCH), "{phase:?}");
        }
        for phase in [Phase::Queued, Phase::Done, Phase::Cancelled] {
            assert_eq!(next_look(&rec(phase, None), false), None, "{phase:?}");
        }
    }

    #[test]
    fn right_after_an_action_but_never_after_a_failure() {
        assert_eq!(next_look(&rec(Phase::Draining, Some(91)), true), Some(AFTER_ACTION));
        let mut failed = rec(Phase::Stopping, None);
        failed.last_error = Some("cannot reach the agent".into());
        assert_eq!(next_look(&failed, true), None);
        assert_eq!(next_look(&failed, false), None);
        assert_eq!(soonest([None, Some(WATCH), Some(AFTER_ACTION)]), Some(AFTER_ACTION));
        assert_eq!(soonest([None, None]), None);
    }

    #[test]
    fn goes_on_at_once_after_an_effect_but_not_into_a_drain_nor_after_a_failure() {
        for phase in [Phase::Stopping, Phase::Destroying, Phase::Zapping, Phase::Restoring, Phase::Done] {
            assert!(goes_on_after_effect(&rec(phase, None)), "{phase:?}");
        }
        assert!(!goes_on_after_effect(&rec(Phase::Draining, Some(40))), "the reweight began a drain");
        assert!(!goes_on_after_effect(&rec(Phase::WaitingSafe, Some(0))));
        let mut failed = rec(Phase::Stopping, None);
        failed.last_error = Some("cannot reach the agent".into());
        assert!(!goes_on_after_effect(&failed));
    }
}
