//! `advance`: the next step of one removal, from its state and what the
//! worker just saw. Pure; the table tests in `tests.rs` pin every gate.

use super::gate::{last_copy, superseded, with_uuid};
use super::{pgs_left, Effect, Ending, Observation, Phase, Removal, Step, Superseded};
use crate::domain::operation::Outcome;

/// What an effect's outcome changes in the removal: a wiped device is
/// recorded as such; a host that found another disk at the path, other
/// volumes on it, or another OSD's daemon under the id, ends the removal
/// as superseded. Every other effect shows in the next observation.
pub fn apply<T>(r: &Removal, effect: &Effect, outcome: &Outcome<T>) -> Removal {
    let mut next = r.clone();
    let by = match (effect, outcome) {
        (Effect::Zap { path }, Outcome::Done(_)) if !next.zapped.contains(path) => {
            next.zapped.push(path.clone());
            None
        }
        (Effect::ZapLvs { .. }, Outcome::Done(_)) => {
            next.lvs_zapped = true;
            None
        }
        (Effect::Zap { path }, Outcome::Refused(found)) => {
            Some(Superseded::Disk { path: path.clone(), found: found.clone() })
        }
        (Effect::ZapLvs { .. }, Outcome::Refused(found)) => {
            Some(Superseded::Disk { path: r.devices.join(", "), found: found.clone() })
        }
        (Effect::StopDaemon, Outcome::Refused(found)) => Some(Superseded::Daemon { found: found.clone() }),
        _ => None,
    };
    if let Some(by) = by {
        next.phase = Phase::Cancelled;
        next.ending = Some(Ending::Superseded(by));
    }
    next
}

/// In place, `noout` is missing (a crash before it took, or someone lifted
/// it): set again, or the monitors mark the OSD out and its copies are
/// rebuilt elsewhere.
fn needs_noout(r: &Removal, obs: &Observation) -> bool {
    r.in_place.is_some() && obs.exists && !obs.noout
}

/// The end of the zap: done, or in place, waiting for the new OSD.
fn zapped(mut next: Removal) -> Step {
    next.phase = if next.in_place.is_some() { Phase::Rejoining } else { Phase::Done };
    Step::go(next)
}

/// Decides the next step. Pure: the same removal and observation always
/// give the same step. The gates (`gate.rs`) come first and last: the OSD
/// at the id must be the one scheduled, and in place, a stop, destroy or
/// zap waits while the cluster is worse than was accepted.
pub fn advance(r: &Removal, obs: &Observation) -> Step {
    let r = &with_uuid(r, obs);
    let step = superseded(r, obs).unwrap_or_else(|| decide(r, obs));
    last_copy(r, step, obs)
}

fn decide(r: &Removal, obs: &Observation) -> Step {
    let mut next = r.clone();
    let id = r.osd_id;
    match r.phase {
        Phase::Done | Phase::Cancelled => Step::go(next),
        Phase::Queued => {
            if r.stop_requested {
                next.phase = Phase::Cancelled;
                next.ending = Some(Ending::StoppedBeforeDrain);
                return Step::go(next);
            }
            if !obs.exists {
                next.phase = Phase::Done;
                next.ending = Some(Ending::RemovedOutside);
                return Step::go(next);
            }
            // In place, the pacing and health gate of drains is not asked:
            // the disk's OSDs are often down already (their PGs degraded),
            // and nothing moves until the new OSDs backfill. `ok-to-stop`
            // and the risk accepted when it was scheduled are its gates.
            if r.in_place.is_none() && !obs.may_start_drain.ok {
                return Step::wait(next, format!("waiting: {}", obs.may_start_drain.message));
            }
            let accepts_inactive = r.in_place.is_some_and(|i| i.accept_inactive);
            match &obs.ok_to_stop {
                None => Step::wait(next, "ok-to-stop: not asked yet"),
                Some(v) if !v.ok && !accepts_inactive => Step::wait(next, format!("ok-to-stop: {}", v.message)),
                // In place: nothing drains; `noout` keeps the PGs mapped to
                // the OSD while it is down, so that its copies are rebuilt
                // once, on the OSD that takes its id.
                Some(_) if r.in_place.is_some() => {
                    next.phase = Phase::Stopping;
                    next.was_in = Some(obs.is_in);
                    next.pgs_at_start = pgs_left(obs);
                    Step::act(next, Effect::Noout { on: true })
                }
                Some(_) => {
                    next.phase = Phase::Draining;
                    next.original_weight = obs.crush_weight;
                    next.was_in = Some(obs.is_in);
                    next.pgs_at_start = pgs_left(obs);
                    if r.replace {
                        Step::act(next, Effect::MarkOut)
                    } else {
                        Step::act(next, Effect::Reweight { weight: 0.0 })
                    }
                }
            }
        }
        Phase::Draining | Phase::WaitingSafe if r.stop_requested => {
            next.phase = Phase::Restoring;
            advance(&next, obs)
        }
        Phase::Draining => {
            if !obs.exists {
                next.phase = Phase::Done;
                next.ending = Some(Ending::RemovedOutside);
                return Step::go(next);
            }
            // Re-apply the drain if it did not take (crash, or someone undid it).
            if r.replace && obs.is_in {
                return Step::act(next, Effect::MarkOut);
            }
            if !r.replace && obs.crush_weight.is_some_and(|w| w != 0.0) {
                return Step::act(next, Effect::Reweight { weight: 0.0 });
            }
            match pgs_left(obs) {
                Some(0) => {
                    next.phase = Phase::WaitingSafe;
                    advance(&next, obs)
                }
                _ if r.force => {
                    next.phase = Phase::WaitingSafe;
                    advance(&next, obs)
                }
                Some(n) => Step::wait(next, format!("draining: {n} PGs left")),
                None => Step::wait(next, "draining: Ceph does not report the OSD's PGs yet"),
            }
        }
        Phase::WaitingSafe => match &obs.safe_to_destroy {
            None => Step::wait(next, "safe-to-destroy: not asked yet"),
            Some(v) if !v.ok => Step::wait(next, format!("safe-to-destroy: {}", v.message)),
            Some(_) => {
                next.phase = Phase::Stopping;
                advance(&next, obs)
            }
        },
        Phase::Stopping => {
            if !obs.exists {
                next.phase = Phase::Zapping;
                return advance(&next, obs);
            }
            if needs_noout(r, obs) {
                return Step::act(next, Effect::Noout { on: true });
            }
            if !obs.up {
                next.phase = Phase::Destroying;
                return advance(&next, obs);
            }
            if !obs.host_reachable {
                return Step::wait(
                    next,
                    format!(
                        "stop: host {} is unreachable and osd.{id} is still up; it continues once the host is back \
                         or once Ceph marks osd.{id} down",
                        r.host
                    ),
                );
            }
            if !r.stop_sent {
                next.stop_sent = true;
                return Step::act(next, Effect::StopDaemon);
            }
            if obs.daemon_running == Some(false) {
                return Step::act(next, Effect::MarkDown);
            }
            Step::wait(next, format!("stop: waiting for osd.{id} to be marked down"))
        }
        Phase::Destroying => {
            let gone = if r.replace { obs.destroyed || !obs.exists } else { !obs.exists };
            if gone {
                next.phase = Phase::Zapping;
                return advance(&next, obs);
            }
            if obs.up {
                // The daemon came back (someone restarted it): stop it again.
                next.phase = Phase::Stopping;
                next.stop_sent = false;
                return advance(&next, obs);
            }
            // In place, the OSD's copies are expected to go missing: the PGs
            // left with a copy fewer were accepted when it was scheduled.
            if needs_noout(r, obs) {
                return Step::act(next, Effect::Noout { on: true });
            }
            if r.in_place.is_some() {
                return Step::act(next, Effect::Destroy);
            }
            // Ceph 16.2's `--yes-i-really-mean-it` skips the safety check, so
            // the check is made here, immediately before.
            match &obs.safe_to_destroy {
                None => Step::wait(next, "safe-to-destroy: not asked yet"),
                Some(v) if !v.ok => Step::wait(next, format!("safe-to-destroy: {}", v.message)),
                Some(_) if r.replace => Step::act(next, Effect::Destroy),
                Some(_) => Step::act(next, Effect::Purge),
            }
        }
        Phase::Zapping => {
            if needs_noout(r, obs) {
                return Step::act(next, Effect::Noout { on: true });
            }
            if !r.zap {
                return zapped(next);
            }
            let unreachable = |next: Removal| {
                // In place, the removal ends only once its id is back.
                if r.force && r.in_place.is_none() {
                    let mut next = next;
                    next.phase = Phase::Done;
                    let shared = |p: &&String| r.shared_devices.contains(p) || obs.shared_now.contains(p);
                    let left = r.devices.iter().filter(|p| !next.zapped.contains(p) && !shared(p));
                    next.ending = Some(Ending::NotZapped { devices: left.cloned().collect() });
                    return Step::go(next);
                }
                Step::wait(next, format!("zap: host {} is unreachable", r.host))
            };
            // An LVM OSD's own LVs first: wiping a device by its path would
            // take the other OSDs' DBs on a shared one with it.
            if let (Some(fsid), false) = (&r.lvm_fsid, r.lvs_zapped) {
                if !obs.host_reachable {
                    return unreachable(next);
                }
                return Step::act(next, Effect::ZapLvs { fsid: fsid.clone() });
            }
            for path in &r.devices {
                // A device another OSD's LVs are on (now, or when it was
                // scheduled) loses only this OSD's LVs (`ZapLvs` above).
                let shared = r.shared_devices.contains(path) || obs.shared_now.contains(path);
                if r.zapped.contains(path) || shared || obs.replaced_devices.contains(path) {
                    continue;
                }
                if obs.clean_devices.contains(path) {
                    next.zapped.push(path.clone());
                    continue;
                }
                if !obs.host_reachable {
                    return unreachable(next);
                }
                return Step::act(next, Effect::Zap { path: path.clone() });
            }
            zapped(next)
        }
        Phase::Rejoining => {
            if !obs.exists {
                next.phase = Phase::Done;
                next.ending = Some(Ending::RemovedOutside);
                return Step::go(next);
            }
            // A re-created id starts out; the monitors mark it in when it
            // boots unless `mon_osd_auto_mark_new_in` is off. Lifting noout
            // while it is out would rebuild its copies elsewhere.
            let up = !obs.destroyed && obs.up;
            if up && !obs.is_in && r.was_in == Some(true) && !r.stop_requested {
                return Step::act(next, Effect::MarkIn);
            }
            let back = up && obs.is_in;
            if !back && !r.stop_requested {
                if needs_noout(r, obs) {
                    return Step::act(next, Effect::Noout { on: true });
                }
                return Step::wait(
                    next,
                    format!(
                        "rejoining: osd.{id} waits for its new disk and a deployment to take its id; noout keeps \
                         its PGs from moving meanwhile"
                    ),
                );
            }
            if obs.noout {
                return Step::act(next, Effect::Noout { on: false });
            }
            next.phase = Phase::Done;
            next.ending = Some(if back { Ending::Rejoined } else { Ending::NooutLifted });
            Step::go(next)
        }
        Phase::Restoring => {
            if !obs.exists {
                next.phase = Phase::Cancelled;
                next.ending = Some(Ending::GoneWhileRestoring);
                return Step::go(next);
            }
            if r.replace {
                if r.was_in == Some(true) && !obs.is_in {
                    return Step::act(next, Effect::MarkIn);
                }
            } else if let Some(w) = r.original_weight {
                if obs.crush_weight.is_some_and(|now| now != w) {
                    return Step::act(next, Effect::Reweight { weight: w });
                }
            }
            next.phase = Phase::Cancelled;
            next.ending = Some(if r.replace {
                Ending::MarkedInAgain
            } else {
                Ending::WeightRestored { weight: r.original_weight }
            });
            Step::go(next)
        }
    }
}
