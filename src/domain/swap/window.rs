//! The in-place way's degraded window as the swap's own action log tells
//! it: from the stop of its old OSD (or its marking down) to `noout` taken
//! off at the end (which the swap does once it sees no PG short of copies
//! or inactive: `observation::short_pgs`), or to
//! the OSD started again (a swap stopped before the destroy gives the OSD
//! back). A swap that failed after the destroy leaves it open: its PGs
//! recover without the swap. The preview's estimate is the new OSD's
//! making (`Risk::making_s`) and the backfill (`Risk::window_s`); this is
//! what the cluster lived through, the stop, the destroy, the wipe and the
//! time the slot stood empty included.

use super::Effect;
use crate::domain::operation::Action;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegradedWindow {
    /// When the stop was asked (ms since the epoch).
    pub from_ms: i64,
    /// When it closed; None while it is open, or if the swap ended
    /// without closing it (its PGs then recover without the swap).
    pub until_ms: Option<i64>,
}

/// None when the swap never stopped an OSD (the free-bay way, or an
/// in-place swap that did not get that far). `done`: the swap ended well,
/// so its last `noout` off came once no PG was short; otherwise only
/// the OSD given back (started again) closes the window.
pub fn degraded_window(actions: &[Action], done: bool) -> Option<DegradedWindow> {
    let starts = [Effect::StopDaemon { osd: 0 }.name(), Effect::MarkDown { osd: 0 }.name()];
    let end = if done { Effect::ClearNoout { osd: 0 }.name() } else { Effect::StartDaemon { osd: 0 }.name() };
    let from_ms =
        actions.iter().filter(|a| starts.contains(&a.effect.as_str()) && a.succeeded()).map(|a| a.issued_at).min()?;
    let until_ms = actions
        .iter()
        .filter(|a| a.effect == end && a.succeeded() && a.issued_at >= from_ms)
        .filter_map(|a| a.finished_at)
        .max();
    Some(DegradedWindow { from_ms, until_ms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::operation::OutcomeStatus;

    fn action(effect: &str, issued_at: i64, finished_at: Option<i64>, ok: bool) -> Action {
        Action {
            id: issued_at,
            operation_id: 1,
            effect: effect.into(),
            args: String::new(),
            detail: String::new(),
            destructive: false,
            issued_at,
            finished_at,
            outcome: finished_at.map(|_| if ok { OutcomeStatus::Ok } else { OutcomeStatus::Failed }),
            outcome_detail: None,
            output: None,
        }
    }

    #[test]
    fn from_the_stop_to_noout_off() {
        let log = [
            action("noout", 100, Some(110), true),
            action("stop-daemon", 200, Some(260), false),
            action("stop-daemon", 300, Some(320), true),
            action("destroy", 400, Some(410), true),
            action("clear-noout", 9000, Some(9040), true),
        ];
        assert_eq!(degraded_window(&log, true), Some(DegradedWindow { from_ms: 300, until_ms: Some(9040) }));
        assert_eq!(degraded_window(&log[..4], false), Some(DegradedWindow { from_ms: 300, until_ms: None }), "open");
        let marked = [action("stop-daemon", 200, Some(260), false), action("mark-down", 270, Some(280), true)];
        assert_eq!(degraded_window(&marked, false), Some(DegradedWindow { from_ms: 270, until_ms: None }));
    }

    #[test]
    fn a_swap_that_gave_the_osd_back_closes_it_one_that_failed_after_the_destroy_does_not() {
        let given_back = [action("stop-daemon", 300, Some(320), true), action("start-daemon", 700, Some(750), true)];
        assert_eq!(degraded_window(&given_back, false), Some(DegradedWindow { from_ms: 300, until_ms: Some(750) }));
        let failed = [action("stop-daemon", 300, Some(320), true), action("clear-noout", 900, Some(910), true)];
        assert_eq!(degraded_window(&failed, false), Some(DegradedWindow { from_ms: 300, until_ms: None }));
        assert_eq!(degraded_window(&[action("upmap", 5, Some(6), true)], true), None);
    }
}
