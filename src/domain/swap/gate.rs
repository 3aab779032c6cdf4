//! What must hold right before a swap acts on an old OSD by its id (the
//! free bay's weights and its retirement; in place, the removal it
//! stores): each old OSD at its id is the one the swap was asked for, by
//! its uuid. Another uuid at an id is another OSD: the swap acts on nothing
//! more. Once an in-place swap's removal is stored, the removal's own gates
//! hold it (`domain/removal/gate.rs`: the uuid, the last copy).

use super::{Observation, Phase, Swap, Way};
use crate::domain::identity::{osd_at_id, OsdAtId};

/// Whether the phase's effects act on the old OSDs by their ids.
fn acts_on_the_olds(s: &Swap, obs: &Observation) -> bool {
    match s.way {
        Way::FreeBay => !s.retired && !s.phase.is_finished() && s.phase != Phase::Unwinding,
        // Retiring: until its removal is seen (the removal's request names the OSD by its id).
        Way::InPlace => {
            let none_stored = obs.removals.is_some() && s.olds.iter().all(|o| obs.removal(o.id).is_none());
            s.phase == Phase::Queued || (s.phase == Phase::Retiring && none_stored)
        }
    }
}

/// The swap with a uuid for each old OSD recorded without one (a swap
/// stored before uuids were): the one the map shows, taken while the swap
/// acts on the olds by their ids, before anything cannot be undone.
pub(super) fn with_uuids(s: &Swap, obs: &Observation) -> Swap {
    let mut next = s.clone();
    if acts_on_the_olds(s, obs) {
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
    if !acts_on_the_olds(s, obs) {
        return None;
    }
    for old in &s.olds {
        let seen = obs.osd(old.id);
        let (exists, destroyed) = (seen.is_some(), seen.is_some_and(|o| o.destroyed));
        let id = old.id;
        let Some(recorded) = old.uuid.as_deref() else { continue };
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
