//! `advance`: the next step of one deployment. Pure; `tests.rs` pins each rule.

use super::{DeployEffect, DeployObservation, DeployPhase, DeployStep, Deployment, Listed, NewOsd};
use crate::domain::backoff::backoff;
use crate::domain::cluster::same_host;
use crate::domain::command::CommandLine;
use crate::domain::operation::Outcome;

/// Attempts before a deployment gives up and holds its disks.
pub const ATTEMPTS: u32 = 3;
/// How long new OSDs may take to show up and in (peering, a slow first boot).
pub const VERIFY_TIMEOUT_MS: i64 = 10 * 60 * 1000;
/// The wait after the first failed attempt; doubled for each further one.
const RETRY_AFTER_MS: u64 = 60_000;
const RETRY_AT_MOST_MS: u64 = 30 * 60_000;

fn wait(d: Deployment, why: impl Into<String>) -> DeployStep {
    DeployStep::wait(d, why)
}

fn act(d: Deployment, effect: DeployEffect) -> DeployStep {
    DeployStep::act(d, effect)
}

fn go(d: Deployment) -> DeployStep {
    DeployStep::go(d)
}

/// Ends this attempt: a retry after a backoff, or the last one. Also for the
/// worker, when an activation or a start fails.
pub fn failed(mut d: Deployment, why: String, now: i64) -> DeployStep {
    d.failure = Some(why);
    if d.attempt >= ATTEMPTS {
        d.phase = DeployPhase::GaveUp;
        return act(d, DeployEffect::HoldDisks);
    }
    let pause = backoff(
        std::time::Duration::from_millis(RETRY_AFTER_MS),
        std::time::Duration::from_millis(RETRY_AT_MOST_MS),
        d.attempt - 1,
    );
    d.phase = DeployPhase::Failed;
    d.retry_at = Some(now + pause.as_millis() as i64);
    go(d)
}

/// What an effect's outcome changes in the deployment: a prepare that
/// went through or failed is marked on its step (the next `advance` reads
/// the listing and decides), an activation or start that went through on
/// its OSD; one that failed ends the attempt. An outcome not known changes
/// nothing: the listing says next round what happened.
pub fn apply<T>(d: &Deployment, effect: &DeployEffect, outcome: &Outcome<T>, now: i64) -> Deployment {
    let mut next = d.clone();
    let mark = |d: &mut Deployment, osd: u32, f: fn(&mut NewOsd)| {
        if let Some(o) = d.osds.iter_mut().find(|o| o.id == osd) {
            f(o);
        }
    };
    match (outcome, effect) {
        (Outcome::Done(_), DeployEffect::Prepare { step }) => next.steps[*step].succeeded = true,
        (Outcome::Failed(why), DeployEffect::Prepare { step }) => next.steps[*step].failure = Some(why.clone()),
        (Outcome::Done(_), DeployEffect::Activate { osd }) => mark(&mut next, *osd, |o| o.activated = true),
        (Outcome::Done(_), DeployEffect::Start { osd }) => mark(&mut next, *osd, |o| o.started = true),
        (
            Outcome::Failed(why),
            DeployEffect::Activate { osd } | DeployEffect::Start { osd } | DeployEffect::ClearDeviceClass { osd },
        ) => {
            next = failed(next, format!("cannot {} osd.{osd}: {why}", effect.name()), now).next;
        }
        _ => {}
    }
    next
}

/// Whether a reader sees the deployment changed: any change.
pub fn changed(before: &Deployment, after: &Deployment) -> bool {
    before != after
}

/// The listed OSD of this cluster on `disk`, if any.
fn on_disk<'a>(listed: &'a [Listed], fsid: &str, disk: &str) -> Option<&'a Listed> {
    listed.iter().find(|l| l.device == disk && l.cluster_fsid == fsid)
}

/// Decides the next step. Pure: the same deployment and observation always
/// give the same step.
pub fn advance(d: &Deployment, obs: &DeployObservation) -> DeployStep {
    let mut next = d.clone();
    match d.phase {
        DeployPhase::Done | DeployPhase::GaveUp => go(next),
        DeployPhase::Failed => match d.retry_at {
            Some(at) if obs.now < at => {
                wait(next, format!("retry: attempt {} of {ATTEMPTS} after a backoff", d.attempt + 1))
            }
            _ => {
                next.attempt += 1;
                next.phase = DeployPhase::Preparing;
                next.retry_at = None;
                next.verifying_since = None;
                for s in &mut next.steps {
                    s.sent = false;
                    s.succeeded = false;
                    s.failure = None;
                }
                go(next)
            }
        },
        DeployPhase::Preparing => {
            let Some(listed) = &obs.listed else {
                return wait(next, format!("prepare: cannot list the OSDs on {}", d.host));
            };
            // Whatever ceph-volume made on the plan's disks counts, whoever
            // asked for it: it is never prepared again.
            for disk in d.disks() {
                if let Some(l) = on_disk(listed, &obs.cluster_fsid, disk) {
                    if !next.osds.iter().any(|o| o.id == l.id) {
                        next.osds.push(NewOsd {
                            id: l.id,
                            osd_fsid: l.osd_fsid.clone(),
                            kind: l.kind,
                            device: l.device.clone(),
                            activated: false,
                            started: false,
                            verified: false,
                        });
                    }
                }
            }
            let made = |disk: &str| on_disk(listed, &obs.cluster_fsid, disk).is_some();
            for i in 0..next.steps.len() {
                let step = &next.steps[i];
                if step.disks.iter().all(|disk| made(disk)) {
                    continue;
                }
                if let Some(why) = &step.failure {
                    let why = format!("ceph-volume {}: {why}", CommandLine(&step.command));
                    return failed(next, why, obs.now);
                }
                if step.succeeded {
                    let missing: Vec<&str> = step.disks.iter().map(String::as_str).filter(|disk| !made(disk)).collect();
                    let why = format!(
                        "ceph-volume {} succeeded, but lists no OSD of this cluster on {}",
                        CommandLine(&step.command),
                        missing.join(", ")
                    );
                    return failed(next, why, obs.now);
                }
                // A destroyed id keeps its CRUSH device class, which the new
                // disk's OSD would not replace: it goes first, unless it is
                // the class the spec gives anyway.
                for id in step.claimed_ids() {
                    let stale = obs.cluster.iter().find(|(c, _)| *c == id).is_some_and(|(_, c)| {
                        c.destroyed && c.device_class.is_some() && c.device_class != d.crush_device_class
                    });
                    if stale {
                        return act(next, DeployEffect::ClearDeviceClass { osd: id });
                    }
                }
                // Not sent yet, or sent without an answer (the daemon
                // stopped, or the agent could not be asked) and nothing on
                // the disks: ceph-volume rolls a failed prepare back, so it
                // is sent (again). The agent refuses it while one still runs.
                next.steps[i].sent = true;
                return act(next, DeployEffect::Prepare { step: i });
            }
            next.phase = DeployPhase::Activating;
            advance(&next, obs)
        }
        DeployPhase::Activating | DeployPhase::Starting => {
            for o in &mut next.osds {
                if obs.running.contains(&o.id) {
                    o.activated = true;
                    o.started = true;
                }
            }
            if let Some(o) = next.osds.iter().find(|o| !o.activated) {
                let id = o.id;
                next.phase = DeployPhase::Activating;
                return act(next, DeployEffect::Activate { osd: id });
            }
            if let Some(o) = next.osds.iter().find(|o| !o.started) {
                let id = o.id;
                next.phase = DeployPhase::Starting;
                return act(next, DeployEffect::Start { osd: id });
            }
            next.phase = DeployPhase::Verifying;
            next.verifying_since = Some(obs.now);
            advance(&next, obs)
        }
        DeployPhase::Verifying => {
            let mut waiting = Vec::new();
            for o in &mut next.osds {
                let seen = obs.cluster.iter().find(|(id, _)| *id == o.id).map(|(_, c)| c);
                let problem = match seen {
                    None => Some("not in the OSD map".to_string()),
                    Some(c) if !c.up => Some("down".to_string()),
                    Some(c) if !c.is_in => Some("out".to_string()),
                    Some(c) if !c.crush_host.as_deref().is_some_and(|h| same_host(h, &d.host)) => {
                        Some(format!("under CRUSH host {}", c.crush_host.as_deref().unwrap_or("none")))
                    }
                    Some(c) => match &d.crush_device_class {
                        Some(want) if c.device_class.as_deref() != Some(want.as_str()) => {
                            Some(format!("device class {}, not {want}", c.device_class.as_deref().unwrap_or("none")))
                        }
                        _ => None,
                    },
                };
                o.verified = problem.is_none();
                if let Some(p) = problem {
                    waiting.push(format!("osd.{} {p}", o.id));
                }
            }
            if waiting.is_empty() {
                next.phase = DeployPhase::Done;
                next.failure = None;
                return go(next);
            }
            let since = d.verifying_since.unwrap_or(obs.now);
            if obs.now - since > VERIFY_TIMEOUT_MS {
                let why = format!("not up and in after {} min: {}", VERIFY_TIMEOUT_MS / 60_000, waiting.join(", "));
                // The OSDs exist; a retry activates and starts them again.
                for o in &mut next.osds {
                    o.activated = o.verified;
                    o.started = o.verified;
                }
                return failed(next, why, obs.now);
            }
            wait(next, format!("verify: {}", waiting.join(", ")))
        }
    }
}
