//! `advance` for the in-place way: the new disk takes the old one's slot.
//! The old OSD is retired by an in-place removal, the one `device replace
//! --in-place` runs (`noout`, `ok-to-stop`, the stop, the destroy keeping
//! the id, the zap, each behind the removal's gates: the OSD's uuid, the
//! last copy; docs/design/removal-state-machine.md). Once the removal
//! waits for its id (`rejoining`) and a blank disk with another id is in
//! the slot, the swap makes an OSD with the same id on it; its PGs
//! backfill from the other copies, the removal lifts `noout` once the id
//! is up and in, and the swap ends once no PG is short. The risk was
//! computed and accepted before the swap was stored (`cost.rs`) and goes
//! with the removal. Each phase change is a step of its own: the next
//! phase asks other things (`daemon/swap/observe.rs`).

use super::{Effect, Observation, OldOsd, Phase, RemovalSeen, Step, Swap};
use crate::domain::identity::{disk_at_path, DiskAtPath};
use crate::domain::removal::Phase as RemovalPhase;

pub(super) fn advance(s: &Swap, obs: &Observation) -> Step {
    let mut next = s.clone();
    let Some(old) = s.olds.first() else {
        return Step::go(Swap { phase: Phase::Failed, ending: Some("no OSD to replace".into()), ..next });
    };
    let id = old.id;
    let seen = obs.osd(id);
    let untouched = format!("stopped before osd.{id} was stopped; nothing was changed");
    match s.phase {
        Phase::Done | Phase::Stopped | Phase::Failed => Step::go(next),
        Phase::Queued if s.stop_requested => end(next, untouched),
        Phase::Queued => {
            let Some(o) = seen else { return fail(next, format!("osd.{id} no longer exists; nothing was changed")) };
            if !o.up {
                return Step::wait(next, format!("waiting: osd.{id} is down"));
            }
            if let Some(why) = &obs.healthy {
                return Step::wait(next, format!("waiting: {why}"));
            }
            next.phase = Phase::Retiring;
            Step::go(next)
        }
        Phase::Retiring => {
            let Some(removals) = &obs.removals else {
                return Step::wait(next, "retiring: the removal is not read yet");
            };
            let Some(r) = removals.iter().find(|r| r.osd == id) else {
                // Stored when the swap sees none of its own (written first:
                // a crash before the store leaves none, and it is asked again).
                return match seen {
                    _ if s.stop_requested => end(next, untouched),
                    Some(o) if !o.destroyed => Step::act(next, Effect::Retire),
                    Some(_) => fail(next, format!("osd.{id} was destroyed by someone else; nothing was changed")),
                    None => fail(next, format!("osd.{id} no longer exists; nothing was changed")),
                };
            };
            if s.stop_requested && !r.stop_requested && !r.phase.is_finished() {
                return Step::act(next, Effect::StopRemovals);
            }
            if r.rejoined || (r.phase == RemovalPhase::Rejoining && !s.stop_requested) {
                next.phase = Phase::AwaitingDisk;
                return Step::go(next);
            }
            if r.phase.is_finished() {
                let note = r.note.clone().unwrap_or_else(|| format!("it ended {}", r.phase.as_str()));
                return if s.stop_requested {
                    end(next, note)
                } else {
                    fail(next, format!("the removal of osd.{id} ended: {note}"))
                };
            }
            Step::wait(next, removal_words(id, r))
        }
        Phase::AwaitingDisk => {
            let Some(slot) = next.news.first().map(|n| n.path.clone()) else {
                return fail(next, "no slot to wait for".into());
            };
            if seen.is_some_and(|o| o.up && !o.destroyed) {
                // Its id is back (its removal rejoined): made by someone else.
                next.ending = Some(format!("osd.{id} was made again on {} by someone else", s.host));
                next.phase = Phase::Recovering;
                return Step::go(next);
            }
            let waiting =
                format!("waiting for a new disk in {slot} on {} (osd.{id} is destroyed, its id kept)", s.host);
            match obs.disk(&slot).filter(|d| is_new_disk(old, &slot, &d.device_id)) {
                Some(d) if d.blank => {
                    next.news[0].device_id = d.device_id.clone();
                    next.phase = Phase::Deploying;
                    Step::go(next)
                }
                // A used disk pushed into the slot is never wiped here.
                Some(d) => {
                    let why = format!("a used disk is in the slot ({}): it holds {}", shown_id(&d.device_id), d.holds);
                    if !next.passed_over.iter().any(|(p, _)| *p == slot) {
                        next.passed_over.push((slot.clone(), why.clone()));
                    }
                    Step::wait(
                        next,
                        format!(
                            "{waiting}: the disk in {slot} is not blank ({why}); a swap never wipes a used disk: \
                             `osdkeeper device zap {} {slot} --force` if it may go, or put in a blank one",
                            s.host
                        ),
                    )
                }
                None => Step::wait(next, waiting),
            }
        }
        Phase::Deploying => match &obs.deployment {
            None => Step::act(next, Effect::Deploy),
            Some(d) => {
                next.deployment = Some(d.number);
                if let Some(why) = &d.gave_up {
                    next.ending = Some(format!(
                        "deployment {} gave up: {why}; osd.{id} stays destroyed and its PGs degraded until an OSD \
                         takes its id",
                        d.number
                    ));
                    next.phase = Phase::Failed;
                    return Step::go(next);
                }
                if !d.finished {
                    return Step::wait(next, format!("deploying: deployment {}", d.number));
                }
                next.news[0].osd = Some(id);
                next.phase = Phase::Recovering;
                Step::go(next)
            }
        },
        // `noout` is the removal's to lift, once the id is up and in.
        Phase::Recovering => match (seen, obs.removal(id), obs.short_pgs) {
            (Some(o), _, _) if !(o.up && o.is_in) || o.destroyed => {
                Step::wait(next, format!("recovering: osd.{id} is not up and in yet"))
            }
            (_, None, _) if obs.removals.is_none() => Step::wait(next, "recovering: the removal is not read yet"),
            (_, Some(r), _) if !r.phase.is_finished() => {
                Step::wait(next, format!("recovering: {}", removal_words(id, r)))
            }
            (_, _, Some(0)) => {
                next.phase = Phase::Done;
                Step::go(next)
            }
            (_, _, Some(n)) => Step::wait(next, format!("recovering: {n} PGs degraded, undersized or not active")),
            (_, _, None) => Step::wait(next, "recovering: the PG states are not read yet"),
        },
        other => fail(next, format!("phase {} is not one of an in-place swap", other.as_str())),
    }
}

/// What the swap's removal of osd.`id` is at, in its words.
fn removal_words(id: u32, r: &RemovalSeen) -> String {
    format!("removal of osd.{id} ({}): {}", r.phase.as_str(), r.waiting_on.as_deref().unwrap_or("under way"))
}

/// Ends the swap where it is, stopped, in words saying what was left.
fn end(mut next: Swap, ending: String) -> Step {
    next.ending = Some(ending);
    next.phase = Phase::Stopped;
    Step::go(next)
}

/// Ends the swap where it is: it cannot go on. What its removal did stays
/// (the removal lifts `noout` once stopped or its id is back).
fn fail(mut next: Swap, why: String) -> Step {
    next.ending = Some(format!("failed: {why}"));
    next.failure = Some(why);
    next.phase = Phase::Failed;
    Step::go(next)
}

/// Whether the disk with id `disk_id` at `slot` is a new one, not the old
/// OSD's disk: one with an id that none of the old disk's names
/// (`identity::disk_at_path`). A disk without an id (no serial: loop devices, some RAID
/// controllers) cannot be told from the old disk at the old disk's own
/// path; at another path it is another disk, since the old one was wiped
/// where it is (the slot the operator named with `--with`).
fn is_new_disk(old: &OldOsd, slot: &str, disk_id: &str) -> bool {
    let recorded = |id: &String| matches!(disk_at_path(id, Some(disk_id)), DiskAtPath::Recorded);
    if old.device_ids.iter().any(recorded) {
        return false;
    }
    !disk_id.trim().is_empty() || !old.devices.iter().any(|p| p == slot)
}

fn shown_id(id: &str) -> String {
    if id.trim().is_empty() {
        "no serial".into()
    } else {
        id.to_string()
    }
}
