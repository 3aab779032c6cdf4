//! `advance` for the in-place way: the new disk takes the old one's slot.
//! The OSD is stopped under `noout` (no data leaves), destroyed keeping its
//! id, its devices wiped; once a blank disk with another id is in the
//! slot an OSD with the same id is made on it, and its PGs backfill from
//! the other copies. The risk was computed and accepted before the swap
//! was stored (`cost.rs`); `ok-to-stop` is asked again before the stop,
//! and the copies right before the stop, the destroy and each zap
//! (`gate::last_copy`).

use super::advance::{fail, pass_over};
use super::gate::last_copy;
use super::{Effect, Observation, OldOsd, Phase, Step, Swap};
use crate::domain::identity::{disk_at_path, same_uuid, DiskAtPath, ZapExpect};

pub(super) fn advance(s: &Swap, obs: &Observation) -> Step {
    last_copy(s, decide(s, obs), obs)
}

fn decide(s: &Swap, obs: &Observation) -> Step {
    let mut next = s.clone();
    let Some(old) = s.olds.first() else {
        return Step::go(Swap { phase: Phase::Failed, ending: Some("no OSD to replace".into()), ..next });
    };
    let id = old.id;
    if s.stop_requested && s.phase.can_stop() {
        next.phase = Phase::Restoring;
        return restoring(next, obs);
    }
    let seen = obs.osd(id);
    match s.phase {
        Phase::Done | Phase::Stopped | Phase::Failed => Step::go(next),
        Phase::Queued => {
            let Some(o) = seen else { return fail(next, format!("osd.{id} no longer exists"), obs) };
            if !o.up {
                return Step::wait(next, format!("waiting: osd.{id} is down"));
            }
            if let Some(why) = &obs.healthy {
                return Step::wait(next, format!("waiting: {why}"));
            }
            let accepts_inactive = s.risk.as_ref().is_some_and(|r| r.accept_inactive);
            match &obs.ok_to_stop {
                None => Step::wait(next, "ok-to-stop: not asked yet"),
                Some(v) if !v.ok && !accepts_inactive => Step::wait(next, format!("ok-to-stop: {}", v.message)),
                Some(_) => {
                    next.phase = Phase::Noout;
                    advance(&next, obs)
                }
            }
        }
        Phase::Noout => match seen {
            Some(o) if o.noout => {
                next.phase = Phase::Stopping;
                advance(&next, obs)
            }
            Some(_) => Step::act(next, Effect::Noout { osd: id }),
            None => fail(next, format!("osd.{id} no longer exists"), obs),
        },
        Phase::Stopping => {
            if seen.is_none_or(|o| !o.up) {
                next.phase = Phase::Destroying;
                return advance(&next, obs);
            }
            if !obs.host_reachable {
                return Step::wait(next, format!("stop: host {} is unreachable and osd.{id} is still up", s.host));
            }
            if !s.stop_sent {
                next.stop_sent = true;
                return Step::act(next, Effect::StopDaemon { osd: id });
            }
            if obs.daemon_running == Some(false) {
                return Step::act(next, Effect::MarkDown { osd: id });
            }
            Step::wait(next, format!("stop: waiting for osd.{id} to be marked down"))
        }
        Phase::Destroying => match seen {
            Some(o) if o.up => {
                next.phase = Phase::Stopping;
                next.stop_sent = false;
                advance(&next, obs)
            }
            Some(o) if !o.destroyed => Step::act(next, Effect::Destroy { osd: id }),
            _ => {
                next.phase = Phase::Zapping;
                advance(&next, obs)
            }
        },
        Phase::Zapping => {
            for (i, path) in old.devices.iter().enumerate() {
                if next.zapped.contains(path) || next.passed_over.iter().any(|(p, _)| p == path) {
                    continue;
                }
                let old_id = old.device_ids.get(i).map(String::as_str).unwrap_or("");
                let now = obs.disk(path);
                match disk_at_path(old_id, now.map(|d| d.device_id.as_str())) {
                    DiskAtPath::Empty => {
                        return Step::wait(
                            next,
                            format!(
                                "zap: no disk at {path} on {}: the old disk was pulled before it was wiped; \
                                 waiting for a disk in its slot",
                                s.host
                            ),
                        )
                    }
                    // The old disk already pulled: what is there is not its to wipe.
                    DiskAtPath::Another { found } => {
                        let why = match now.filter(|d| !d.blank) {
                            Some(d) => format!("another disk is there ({found}), and it holds {}", d.holds),
                            None => format!("another disk is there ({found})"),
                        };
                        pass_over(&mut next, path, &why);
                        continue;
                    }
                    DiskAtPath::Recorded | DiskAtPath::CannotTell => {}
                }
                let now = now.expect("a disk is at the path");
                if now.blank {
                    next.zapped.push(path.clone());
                    continue;
                }
                let ours = |f: &String| old.uuid.as_deref().is_some_and(|u| same_uuid(u, f));
                if !now.osd_fsids.is_empty() && !now.osd_fsids.iter().any(ours) {
                    pass_over(&mut next, path, &format!("it holds {}", now.holds));
                    continue;
                }
                if !obs.host_reachable {
                    return Step::wait(next, format!("zap: host {} is unreachable", s.host));
                }
                return Step::act(next, Effect::Zap { path: path.clone() });
            }
            next.phase = Phase::AwaitingDisk;
            advance(&next, obs)
        }
        Phase::AwaitingDisk => {
            let Some(slot) = next.news.first().map(|n| n.path.clone()) else {
                return fail(next, "no slot to wait for".into(), obs);
            };
            let waiting =
                format!("waiting for a new disk in {slot} on {} (osd.{id} is destroyed, its id kept)", s.host);
            match obs.disk(&slot).filter(|d| is_new_disk(old, &slot, &d.device_id)) {
                Some(d) if d.blank => {
                    next.news[0].device_id = d.device_id.clone();
                    next.phase = Phase::Deploying;
                    advance(&next, obs)
                }
                // A used disk pushed into the slot is never wiped here.
                Some(d) => {
                    let why = format!("a used disk is in the slot ({}): it holds {}", shown_id(&d.device_id), d.holds);
                    pass_over(&mut next, &slot, &why);
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
                advance(&next, obs)
            }
        },
        Phase::Recovering => match (seen, obs.short_pgs) {
            (Some(o), _) if !(o.up && o.is_in) || o.destroyed => {
                Step::wait(next, format!("recovering: osd.{id} is not up and in yet"))
            }
            (_, Some(0)) => {
                next.phase = Phase::Finishing;
                advance(&next, obs)
            }
            (_, Some(n)) => Step::wait(next, format!("recovering: {n} PGs degraded, undersized or not active")),
            (_, None) => Step::wait(next, "recovering: the PG states are not read yet"),
        },
        Phase::Finishing => match seen {
            Some(o) if o.noout => Step::act(next, Effect::ClearNoout { osd: id }),
            _ => {
                next.phase = Phase::Done;
                Step::go(next)
            }
        },
        Phase::Restoring => restoring(next, obs),
        other => Step::go(Swap {
            phase: Phase::Failed,
            ending: Some(format!("phase {} is not one of an in-place swap", other.as_str())),
            ..next
        }),
    }
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

/// What the in-place way's zap of an old disk names to the agent: the
/// disk's id as recorded, the old OSD (by its uuid) whose volumes may go,
/// and the cluster.
pub fn zap_expect(s: &Swap, path: &str, cluster_fsid: Option<&str>) -> ZapExpect {
    let old = s.olds.iter().find(|o| o.devices.iter().any(|p| p == path));
    let i = old.and_then(|o| o.devices.iter().position(|p| p == path));
    ZapExpect {
        device_id: old.zip(i).and_then(|(o, i)| o.device_ids.get(i)).cloned().unwrap_or_default(),
        osd_fsids: Some(old.and_then(|o| o.uuid.clone()).into_iter().collect()),
        cluster_fsid: cluster_fsid.filter(|f| !f.is_empty()).map(str::to_string),
    }
}

fn shown_id(id: &str) -> String {
    if id.trim().is_empty() {
        "no serial".into()
    } else {
        id.to_string()
    }
}

/// Before the OSD was stopped: `noout` off again, nothing else changed.
fn restoring(mut next: Swap, obs: &Observation) -> Step {
    let id = next.olds[0].id;
    if obs.osd(id).is_some_and(|o| o.noout) {
        return Step::act(next, Effect::ClearNoout { osd: id });
    }
    next.ending = Some(match &next.failure {
        Some(why) => format!("failed: {why}; nothing was changed"),
        None => format!("stopped before osd.{id} was stopped; nothing was changed"),
    });
    next.phase = if next.failure.is_some() { Phase::Failed } else { Phase::Stopped };
    Step::go(next)
}
