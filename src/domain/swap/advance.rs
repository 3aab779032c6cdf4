//! `advance` for the free bay, and what an outcome or a restart changes.
//! Pure; the table tests in `tests.rs` pin every phase.

use super::gate::{not_ours, with_uuids, NotOurs};
use super::handover::{cleanup, plan};
use super::{in_place, lowest_free_ids, Effect, Observation, Phase, Step, Swap, Way, HANDOVER_WEIGHT};
use crate::domain::operation::Outcome;
use crate::domain::removal::Phase as RemovalPhase;

/// What an effect's outcome changes: nothing. Every effect shows in the
/// next observation (the removals, the deployment in the store; the
/// entries, the weights in the OSD map), or was written before it was
/// asked for (the entries issued, the balancer paused).
pub fn apply<T>(s: &Swap, _effect: &Effect, _outcome: &Outcome<T>) -> Swap {
    s.clone()
}

/// What a swap whose effect a restart cut off becomes: the same. Every
/// effect is safe to repeat and asked for again only when the cluster (or
/// the store) shows it has not happened.
pub fn interrupted(s: &Swap) -> Swap {
    s.clone()
}

/// What a swap waits on when part of the cluster's answer is missing:
/// the reason it could not be read, when there is one.
fn unread(obs: &Observation, what: &str) -> String {
    match &obs.input_error {
        Some(e) => format!("{what}: cannot be read: {e}"),
        None => format!("{what}: not read yet"),
    }
}

/// Decides the next step. Pure. The gate (`gate.rs`) comes first: each
/// old OSD at its id must be the one the swap was asked for.
pub fn advance(s: &Swap, obs: &Observation) -> Step {
    let s = &with_uuids(s, obs);
    match not_ours(s, obs) {
        Some(NotOurs::Other(why)) => return superseded(s.clone(), why, obs),
        Some(NotOurs::CannotTell(why)) => return Step::wait(s.clone(), why),
        None => {}
    }
    match s.way {
        Way::FreeBay => free_bay(s, obs),
        Way::InPlace => in_place::advance(s, obs),
    }
}

/// Another OSD has an old OSD's id: the free bay unwinds what it set
/// (nothing of that OSD's), the in-place way ends where it is.
fn superseded(mut next: Swap, why: String, obs: &Observation) -> Step {
    if next.way == Way::FreeBay {
        return fail(next, format!("superseded: {why}"), obs);
    }
    next.ending = Some(format!("superseded: {why}; nothing more was done to it"));
    next.phase = Phase::Failed;
    Step::go(next)
}

/// CRUSH keeps weights in 16.16 fixed point: what `osd tree` shows of a
/// weight set is within a unit or two of it.
pub(super) fn weighs(w: Option<f64>, target: f64) -> bool {
    w.is_some_and(|w| (w - target).abs() <= 2.0 / 65536.0)
}

/// Ends a free-bay swap through `unwinding`: what was set is put back,
/// what was handed over is kept.
fn fail(mut next: Swap, why: String, obs: &Observation) -> Step {
    next.failure = Some(why);
    next.phase = Phase::Unwinding;
    advance(&next, obs)
}

fn free_bay(s: &Swap, obs: &Observation) -> Step {
    let mut next = s.clone();
    if s.stop_requested && s.can_stop() {
        next.phase = Phase::Unwinding;
        return unwind(next, obs);
    }
    match s.phase {
        Phase::Done | Phase::Stopped | Phase::Failed => Step::go(next),
        Phase::Queued => queued(next, obs),
        Phase::Preparing => preparing(next, obs),
        Phase::Deploying => deploying(next, obs),
        Phase::HandingOver => handing_over(next, obs),
        Phase::Settling => settling(next, obs),
        Phase::Retiring => retiring(next, obs),
        Phase::Finishing => finishing(next, obs),
        Phase::Unwinding => unwind(next, obs),
        other => fail(next, format!("phase {} is not one of a free-bay swap", other.as_str()), obs),
    }
}

fn queued(mut next: Swap, obs: &Observation) -> Step {
    for old in &next.olds {
        match obs.osd(old.id) {
            None => return fail(next.clone(), format!("osd.{} no longer exists", old.id), obs),
            Some(o) if !(o.up && o.is_in) => {
                let why = format!("waiting: osd.{} is {}", old.id, if o.up { "out" } else { "down" });
                return Step::wait(next, why);
            }
            Some(_) => {}
        }
    }
    if let Some(why) = &obs.healthy {
        return Step::wait(next, format!("waiting: {why}"));
    }
    let Some(on) = obs.balancer_on else { return Step::wait(next, unread(obs, "balancer status")) };
    next.balancer_was_on = Some(on);
    next.phase = Phase::Preparing;
    preparing(next, obs)
}

fn preparing(mut next: Swap, obs: &Observation) -> Step {
    match obs.balancer_on {
        None => return Step::wait(next, unread(obs, "balancer status")),
        Some(true) => {
            next.balancer_paused = true;
            return Step::act(next, Effect::PauseBalancer);
        }
        Some(false) => {}
    }
    if next.news.iter().any(|n| n.planned_id.is_none()) {
        // Planned once, written before the option is set for them.
        let free = lowest_free_ids(&obs.taken_ids, next.news.len());
        for (disk, id) in next.news.iter_mut().zip(free) {
            disk.planned_id = Some(id);
        }
    }
    match obs.initial_weight_set {
        None => Step::wait(next, "config dump: not read yet"),
        Some(_) if !obs.initial_weight_complete => {
            next.initial_weight_set = true;
            Step::act(next, Effect::SetInitialWeight)
        }
        Some(_) => {
            next.phase = Phase::Deploying;
            deploying(next, obs)
        }
    }
}

fn deploying(mut next: Swap, obs: &Observation) -> Step {
    let Some(d) = &obs.deployment else {
        if let Some(n) = next.deployment {
            return Step::wait(next, format!("deploying: deployment {n} is not in the store"));
        }
        return Step::act(next, Effect::Deploy);
    };
    next.deployment = Some(d.number);
    if let Some(why) = &d.gave_up {
        return fail(next.clone(), format!("deployment {} of the new disks gave up: {why}", d.number), obs);
    }
    if !d.finished {
        return Step::wait(next, format!("deploying: deployment {}", d.number));
    }
    for disk in &mut next.news {
        disk.osd = d.osds.iter().find(|(_, dev)| *dev == disk.path).map(|(id, _)| *id).or(disk.osd);
    }
    if let Some(disk) = next.news.iter().find(|n| n.osd.is_none()) {
        let why = format!("deployment {} made no OSD on {}", d.number, disk.path);
        return fail(next.clone(), why, obs);
    }
    for id in next.new_ids() {
        match obs.osd(id) {
            None => return Step::wait(next, format!("deploying: osd.{id} is not in the OSD map yet")),
            Some(o) if !(o.up && o.is_in) => return Step::wait(next, format!("deploying: osd.{id} is not up and in")),
            Some(o) if !weighs(o.crush_weight, HANDOVER_WEIGHT) => {
                return Step::act(next, Effect::Reweight { osd: id, weight: HANDOVER_WEIGHT });
            }
            Some(_) => {}
        }
    }
    if obs.initial_weight_set != Some(false) {
        next.initial_weight_set = false;
        return Step::act(next, Effect::ClearInitialWeight);
    }
    next.phase = Phase::HandingOver;
    handing_over(next, obs)
}

fn handing_over(mut next: Swap, obs: &Observation) -> Step {
    let Some(pgs) = &obs.pgs else { return Step::wait(next, unread(obs, "handing over: the PG map")) };
    let p = plan(pgs, &next.old_ids(), obs.healthy.as_deref(), obs.max_backfills);
    next.pgs_left = Some(p.pgs_left);
    next.bytes_left = Some(p.bytes_left);
    next.cannot_hand = p.cannot.clone();
    if p.finished {
        next.phase = Phase::Settling;
        return settling(next, obs);
    }
    if p.issue.is_empty() {
        return Step::wait(next, p.waiting.unwrap_or_else(|| "handing over".into()));
    }
    // Written before they are issued: the cleanup knows its own entries
    // even when a crash cut the outcome off.
    for item in &p.issue {
        next.handed.retain(|h| h.pgid != item.pgid);
        next.handed.push(item.clone());
    }
    Step::act(next, Effect::Upmap { items: p.issue })
}

fn settling(mut next: Swap, obs: &Observation) -> Step {
    let Some(pgs) = &obs.pgs else { return Step::wait(next, unread(obs, "settling: the PG map")) };
    let olds_out = next.olds.iter().all(|o| obs.osd(o.id).is_none_or(|s| weighs(s.crush_weight, 0.0)));
    let news_in =
        next.news.iter().all(|n| n.osd.and_then(|id| obs.osd(id)).is_some_and(|s| weighs(s.crush_weight, n.weight)));
    if !(olds_out && news_in) {
        let p = plan(pgs, &next.old_ids(), None, obs.max_backfills);
        if !p.finished {
            // The map moved under the swap (a pool's pg_num, someone's
            // weights): hand over again what the final map now says.
            next.phase = Phase::HandingOver;
            return Step::wait(next, format!("settling: {} PGs would move; handing them over first", p.pgs_left));
        }
        let mut weights: Vec<(u32, f64)> = next.olds.iter().map(|o| (o.id, 0.0)).collect();
        weights.extend(next.news.iter().filter_map(|n| n.osd.map(|id| (id, n.weight))));
        return Step::act(next, Effect::SetWeights { weights });
    }
    next.settled = true;
    let (noop, pinned) = cleanup(pgs, &next.handed);
    next.kept_pins = pinned;
    if !noop.is_empty() {
        return Step::act(next, Effect::RmUpmap { pgids: noop });
    }
    next.phase = Phase::Retiring;
    retiring(next, obs)
}

fn retiring(mut next: Swap, obs: &Observation) -> Step {
    if !next.retired {
        next.retired = true;
        return Step::act(next, Effect::Retire);
    }
    if obs.removals.is_none() {
        return Step::wait(next, "retiring: the removals are not read yet");
    }
    let mut waiting = Vec::new();
    for old in &next.olds {
        match obs.removal(old.id) {
            None if obs.osd(old.id).is_none() => {}
            None => waiting.push(format!("osd.{} (not stored yet)", old.id)),
            Some(r) if r.phase == RemovalPhase::Cancelled => {
                let note = format!("the removal of osd.{} was stopped: it stays at CRUSH weight 0, empty", old.id);
                next.ending = Some(note);
            }
            Some(r) if !r.phase.is_finished() => waiting.push(format!("osd.{}", old.id)),
            Some(_) => {}
        }
    }
    if !waiting.is_empty() {
        return Step::wait(next, format!("retiring: removal of {}", waiting.join(", ")));
    }
    next.phase = Phase::Finishing;
    finishing(next, obs)
}

fn finishing(mut next: Swap, obs: &Observation) -> Step {
    if obs.initial_weight_set == Some(true) {
        next.initial_weight_set = false;
        return Step::act(next, Effect::ClearInitialWeight);
    }
    if let Some(step) = resume_balancer(&mut next, obs) {
        return step;
    }
    if next.balancer_paused && obs.balancer_on.is_none() {
        return Step::wait(next, unread(obs, "balancer status"));
    }
    next.balancer_paused = false;
    next.phase = Phase::Done;
    Step::go(next)
}

/// The balancer back on, when the swap turned it off and it was on.
fn resume_balancer(next: &mut Swap, obs: &Observation) -> Option<Step> {
    if next.balancer_paused && next.balancer_was_on == Some(true) && obs.balancer_on == Some(false) {
        next.balancer_paused = false;
        return Some(Step::act(next.clone(), Effect::ResumeBalancer));
    }
    None
}

/// After a stop or a failure: what was set is put back, what was handed
/// over is kept (moving it back would move it twice).
fn unwind(mut next: Swap, obs: &Observation) -> Step {
    if let Some(d) = obs.deployment.as_ref().filter(|d| !d.finished) {
        return Step::wait(next, format!("unwinding: letting deployment {} finish", d.number));
    }
    if obs.initial_weight_set == Some(true) {
        next.initial_weight_set = false;
        return Step::act(next, Effect::ClearInitialWeight);
    }
    if obs.initial_weight_set.is_none() && next.initial_weight_set {
        return Step::wait(next, "config dump: not read yet");
    }
    let kept = next.handed.len();
    if kept == 0 {
        if let Some(step) = resume_balancer(&mut next, obs) {
            return step;
        }
        if next.balancer_paused && next.balancer_was_on == Some(true) && obs.balancer_on.is_none() {
            return Step::wait(next, unread(obs, "balancer status"));
        }
        next.balancer_paused = false;
    }
    let kept_words = match kept {
        0 => "nothing was handed over".to_string(),
        n => format!(
            "{n} PG{} handed over to their final place are kept there (their upmap entries stay){}",
            if n == 1 { "" } else { "s" },
            if next.balancer_paused && next.balancer_was_on == Some(true) {
                "; the balancer stays off, since it would move them back: `osdkeeper osd replace` again finishes \
                 the swap, `ceph balancer on` lets it undo it"
            } else {
                ""
            }
        ),
    };
    next.ending = Some(match &next.failure {
        Some(why) => format!("failed: {why}; {kept_words}"),
        None => format!("stopped; {kept_words}"),
    });
    next.phase = if next.failure.is_some() { Phase::Failed } else { Phase::Stopped };
    Step::go(next)
}
