//! What must hold right before a swap acts on an old OSD by its id (the
//! free bay's weights and its retirement; in place, `noout`, the stop, the
//! destroy): each old OSD at its id is the one the swap was asked for, by
//! its uuid. Another uuid at an id is another OSD: the swap acts on nothing
//! more. In place, each step passes the last-copy gate too (`last_copy`,
//! `copies::gate`): a stop, destroy or zap waits on a fresh PG map while
//! the cluster is worse than accepted.

use super::{Effect, Observation, Phase, Step, Swap, Way};
use crate::domain::copies::{self, Accept, Hold};
use crate::domain::identity::{osd_at_id, OsdAtId};

/// The act an in-place swap's effect is, when the last-copy gate holds it:
/// the stop, the destroy, a zap.
fn last_copy_act(s: &Swap, effect: &Effect) -> Option<String> {
    if s.way != Way::InPlace {
        return None;
    }
    Some(match effect {
        Effect::StopDaemon { osd } => format!("the stop of osd.{osd}"),
        Effect::Destroy { osd } => format!("the destroy of osd.{osd}"),
        Effect::Zap { path } => format!("the zap of {path}"),
        _ => return None,
    })
}

/// The step decided from `s`, through the last-copy gate.
pub(super) fn last_copy(s: &Swap, step: Step, obs: &Observation) -> Step {
    let act = step.effect.as_ref().and_then(|e| last_copy_act(s, e));
    let accept = s
        .risk
        .as_ref()
        .map(|r| Accept { single_copy: r.accept_single_copy, inactive: r.accept_inactive })
        .unwrap_or_default();
    let hold = match act {
        Some(_) => copies::hold(obs.copies.as_ref(), &s.old_ids(), accept),
        None => Hold::NotRead,
    };
    copies::gate(s, step, act, hold, |s| s.phase.is_finished(), |s| &mut s.last_copy_hold)
}

/// Whether the phase's effects act on the old OSDs by their ids.
fn acts_on_the_olds(s: &Swap) -> bool {
    match s.way {
        Way::FreeBay => !s.retired && !s.phase.is_finished() && s.phase != Phase::Unwinding,
        Way::InPlace => matches!(s.phase, Phase::Queued | Phase::Noout | Phase::Stopping | Phase::Destroying),
    }
}

/// Before anything cannot be undone, an old OSD recorded without a uuid
/// (a swap stored before uuids were) takes the one the map shows.
fn may_adopt(s: &Swap) -> bool {
    acts_on_the_olds(s) && s.phase != Phase::Destroying
}

/// The swap with a uuid for each old OSD it can have one for (`may_adopt`).
pub(super) fn with_uuids(s: &Swap, obs: &Observation) -> Swap {
    let mut next = s.clone();
    if may_adopt(s) {
        for old in next.olds.iter_mut().filter(|o| o.uuid.is_none()) {
            old.uuid = obs.osd(old.id).filter(|o| !o.destroyed).and_then(|o| o.uuid.clone());
        }
    }
    next
}

/// What an old OSD's id holds now, when it is not the OSD the swap was
/// asked for (or cannot be told from a new one); `None`: go on.
pub(super) enum NotOurs {
    /// Another OSD has the id: nothing more is done to it.
    Other(String),
    /// The map cannot say yet (no uuid): wait.
    CannotTell(String),
}

pub(super) fn not_ours(s: &Swap, obs: &Observation) -> Option<NotOurs> {
    if !acts_on_the_olds(s) {
        return None;
    }
    for old in &s.olds {
        let seen = obs.osd(old.id);
        let (exists, destroyed) = (seen.is_some(), seen.is_some_and(|o| o.destroyed));
        let id = old.id;
        let Some(recorded) = old.uuid.as_deref() else {
            if s.phase == Phase::Destroying && exists && !destroyed {
                return Some(NotOurs::Other(format!(
                    "osd.{id}'s uuid was not recorded (the swap was stored by an older osdkeeper) and an OSD that \
                     cannot be told from a new one has its id"
                )));
            }
            continue;
        };
        match osd_at_id(recorded, exists, destroyed, seen.and_then(|o| o.uuid.as_deref())) {
            OsdAtId::Recorded | OsdAtId::Gone => {}
            OsdAtId::Other { uuid } => {
                return Some(NotOurs::Other(format!("osd.{id} is now another OSD (uuid {uuid}, not {recorded})")))
            }
            OsdAtId::CannotTell => {
                return Some(NotOurs::CannotTell(format!(
                    "osd.{id} shows no uuid in the OSD map: another OSD may have taken its id; nothing is done to \
                     it until the map says which OSD it is"
                )))
            }
        }
    }
    None
}
