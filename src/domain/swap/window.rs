//! The in-place way's degraded window as the swap's record tells it: from
//! the stop of its old OSD (or its marking down) by its removal, to the
//! swap's end once it saw no PG short of copies or inactive
//! (`observation::short_pgs`). A swap that did not end well leaves it
//! open: its PGs recover without the swap. The preview's estimate is the
//! new OSD's making (`Risk::making_s`) and the backfill (`Risk::window_s`);
//! this is what the cluster lived through, the stop, the destroy, the wipe
//! and the time the slot stood empty included.

use crate::domain::operation::Action;
use crate::domain::removal::Effect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegradedWindow {
    /// When the stop was asked (ms since the epoch).
    pub from_ms: i64,
    /// When it closed; None while it is open, or if the swap ended
    /// without closing it (its PGs then recover without the swap).
    pub until_ms: Option<i64>,
}

/// None when the swap never stopped an OSD (the free-bay way, or an
/// in-place swap that did not get that far). `actions`: the swap's and its
/// removal's; `done_at`: when the swap ended well, if it did.
pub fn degraded_window(actions: &[Action], done_at: Option<i64>) -> Option<DegradedWindow> {
    let starts = [Effect::StopDaemon.name(), Effect::MarkDown.name()];
    let from_ms =
        actions.iter().filter(|a| starts.contains(&a.effect.as_str()) && a.succeeded()).map(|a| a.issued_at).min()?;
    Some(DegradedWindow { from_ms, until_ms: done_at.filter(|t| *t >= from_ms) })
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
    fn from_the_stop_to_the_swaps_end() {
        let log = [
            action("noout", 100, Some(110), true),
            action("stop-daemon", 200, Some(260), false),
            action("stop-daemon", 300, Some(320), true),
            action("destroy", 400, Some(410), true),
            action("rm-noout", 8000, Some(8040), true),
        ];
        assert_eq!(degraded_window(&log, Some(9040)), Some(DegradedWindow { from_ms: 300, until_ms: Some(9040) }));
        assert_eq!(degraded_window(&log, None), Some(DegradedWindow { from_ms: 300, until_ms: None }), "open");
        let marked = [action("stop-daemon", 200, Some(260), false), action("mark-down", 270, Some(280), true)];
        assert_eq!(degraded_window(&marked, None), Some(DegradedWindow { from_ms: 270, until_ms: None }));
        assert_eq!(degraded_window(&[action("upmap", 5, Some(6), true)], Some(9)), None, "nothing stopped");
    }
}
