//! The OSD removal state machine: `advance(removal, observation) -> step`.
//!
//! A removal moves through
//!
//! ```text
//! queued ─► draining ─► waiting-safe ─► stopping ─► destroying ─► zapping ─► done
//!   │           │             │
//!   └───────────┴─────────────┴─(rm stop)─► restoring ─► cancelled
//! ```
//!
//! The worker persists the returned state *before* it performs the returned
//! effect, then observes the cluster again. Every effect is safe to repeat,
//! and `advance` asks for an effect again only when the observation shows it
//! has not taken place, so after a crash at any point the removal continues
//! without doing anything twice: a purge that went through shows up as an
//! OSD that no longer exists, a zapped disk as a clean disk.
//!
//! Gates, as in cephadm: a drain starts only when the cluster's pacing allows
//! it and `ok-to-stop` agrees; the daemon is stopped only once the OSD holds
//! no placement groups (unless forced) and `safe-to-destroy` agrees; destroy
//! or purge only once the OSD is down. Documented in
//! docs/design/removal-state-machine.md.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Queued,
    Draining,
    WaitingSafe,
    Stopping,
    Destroying,
    Zapping,
    Done,
    Restoring,
    Cancelled,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Queued => "queued",
            Phase::Draining => "draining",
            Phase::WaitingSafe => "waiting-safe",
            Phase::Stopping => "stopping",
            Phase::Destroying => "destroying",
            Phase::Zapping => "zapping",
            Phase::Done => "done",
            Phase::Restoring => "restoring",
            Phase::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        [
            Phase::Queued,
            Phase::Draining,
            Phase::WaitingSafe,
            Phase::Stopping,
            Phase::Destroying,
            Phase::Zapping,
            Phase::Done,
            Phase::Restoring,
            Phase::Cancelled,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, Phase::Done | Phase::Cancelled)
    }

    /// `rm stop` is possible until the daemon is stopped.
    pub fn can_stop(self) -> bool {
        matches!(self, Phase::Queued | Phase::Draining | Phase::WaitingSafe)
    }

    /// Counts toward the limit of concurrent drains.
    pub fn is_draining(self) -> bool {
        matches!(self, Phase::Draining | Phase::WaitingSafe)
    }
}

/// What is being removed, and how far it got. Persisted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Removal {
    pub osd_id: u32,
    pub host: String,
    pub replace: bool,
    pub force: bool,
    pub zap: bool,
    pub phase: Phase,
    /// CRUSH weight before the drain, restored by `rm stop`.
    pub original_weight: Option<f64>,
    /// Whether the OSD was `in` before a replace marked it out.
    pub was_in: Option<bool>,
    /// The OSD's devices on its host, recorded when the removal was
    /// scheduled (after a purge the cluster no longer knows them).
    pub devices: Vec<String>,
    /// Their ids (serial/WWN) in the same order, "" where the host has none.
    #[serde(default)]
    pub device_ids: Vec<String>,
    /// Devices already wiped.
    pub zapped: Vec<String>,
    pub stop_requested: bool,
    /// The daemon stop was requested from the host agent.
    pub stop_sent: bool,
    pub pgs_at_start: Option<i64>,
    /// How it ended, when not plainly.
    pub note: Option<String>,
}

impl Removal {
    pub fn new(osd_id: u32, host: String, replace: bool, force: bool, zap: bool, devices: Vec<String>) -> Removal {
        Removal {
            osd_id,
            host,
            replace,
            force,
            zap,
            phase: Phase::Queued,
            original_weight: None,
            was_in: None,
            devices,
            device_ids: Vec::new(),
            zapped: Vec::new(),
            stop_requested: false,
            stop_sent: false,
            pgs_at_start: None,
            note: None,
        }
    }
}

/// A yes/no answer from the cluster with its own words.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub ok: bool,
    pub message: String,
}

/// What the worker saw just now.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The OSD is in the OSD map.
    pub exists: bool,
    /// Marked destroyed (id kept for a replacement).
    pub destroyed: bool,
    pub up: bool,
    pub is_in: bool,
    pub crush_weight: Option<f64>,
    /// Placement groups on the OSD (`osd df`); None when Ceph does not list it.
    pub pgs: Option<i64>,
    /// Asked only for queued removals.
    pub ok_to_stop: Option<Verdict>,
    /// Asked only when waiting for it or about to destroy.
    pub safe_to_destroy: Option<Verdict>,
    /// Whether a new drain may start now (concurrency limit, cluster health), and why not.
    pub may_start_drain: Verdict,
    pub host_reachable: bool,
    /// The agent's view of the daemon, when it could be asked.
    pub daemon_running: Option<bool>,
    /// Recorded devices that the host's inventory shows without any signature.
    pub clean_devices: Vec<String>,
}

/// One action on the cluster or a host. All are safe to repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "kebab-case")]
pub enum Effect {
    /// `ceph osd crush reweight osd.N W`.
    Reweight {
        weight: f64,
    },
    MarkOut,
    MarkIn,
    /// `ceph osd down N`: the daemon is gone but the monitors have not noticed.
    MarkDown,
    /// Stop the OSD daemon through the host agent.
    StopDaemon,
    /// `ceph osd destroy N`: keeps the id for a replacement.
    Destroy,
    /// `ceph osd purge N`.
    Purge,
    /// Wipe a device through the host agent.
    Zap {
        path: String,
    },
}

impl Effect {
    /// Purge, destroy and zap cannot be undone.
    pub fn is_destructive(&self) -> bool {
        matches!(self, Effect::Destroy | Effect::Purge | Effect::Zap { .. })
    }
}

/// The next state, at most one effect, and what the removal waits for.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub removal: Removal,
    pub effect: Option<Effect>,
    /// The gate it waits on and why, in the cluster's own words.
    pub waiting_on: Option<String>,
}

impl Step {
    fn wait(r: Removal, why: impl Into<String>) -> Step {
        Step { removal: r, effect: None, waiting_on: Some(why.into()) }
    }

    fn act(r: Removal, effect: Effect) -> Step {
        Step { removal: r, effect: Some(effect), waiting_on: None }
    }

    fn go(r: Removal) -> Step {
        Step { removal: r, effect: None, waiting_on: None }
    }
}

/// PGs left on the OSD. A down and out OSD that `osd df` no longer lists
/// holds none (cephadm counts it as -1 and waits for ever).
pub fn pgs_left(obs: &Observation) -> Option<i64> {
    match obs.pgs {
        Some(n) => Some(n),
        None if !obs.up && !obs.is_in => Some(0),
        None => None,
    }
}

/// Decides the next step. Pure: the same removal and observation always
/// give the same step.
pub fn advance(r: &Removal, obs: &Observation) -> Step {
    let mut next = r.clone();
    let id = r.osd_id;
    match r.phase {
        Phase::Done | Phase::Cancelled => Step::go(next),
        Phase::Queued => {
            if r.stop_requested {
                next.phase = Phase::Cancelled;
                next.note = Some("stopped before the drain began; nothing was changed".into());
                return Step::go(next);
            }
            if !obs.exists {
                next.phase = Phase::Done;
                next.note = Some(format!("osd.{id} no longer exists (removed outside osdkeeper)"));
                return Step::go(next);
            }
            if !obs.may_start_drain.ok {
                return Step::wait(next, format!("pacing: {}", obs.may_start_drain.message));
            }
            match &obs.ok_to_stop {
                None => Step::wait(next, "ok-to-stop: not asked yet"),
                Some(v) if !v.ok => Step::wait(next, format!("ok-to-stop: {}", v.message)),
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
                next.note = Some(format!("osd.{id} no longer exists (removed outside osdkeeper)"));
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
            if !r.zap {
                next.phase = Phase::Done;
                return Step::go(next);
            }
            for path in &r.devices {
                if r.zapped.contains(path) {
                    continue;
                }
                if obs.clean_devices.contains(path) {
                    next.zapped.push(path.clone());
                    continue;
                }
                if !obs.host_reachable {
                    if r.force {
                        next.phase = Phase::Done;
                        next.note = Some(format!(
                            "host {} unreachable: {} not zapped; run `osdkeeper device zap {} <path> --force` when it is back",
                            r.host,
                            r.devices.iter().filter(|p| !next.zapped.contains(p)).cloned().collect::<Vec<_>>().join(", "),
                            r.host
                        ));
                        return Step::go(next);
                    }
                    return Step::wait(next, format!("zap: host {} is unreachable", r.host));
                }
                return Step::act(next, Effect::Zap { path: path.clone() });
            }
            next.phase = Phase::Done;
            Step::go(next)
        }
        Phase::Restoring => {
            if !obs.exists {
                next.phase = Phase::Cancelled;
                next.note = Some(format!("osd.{id} no longer exists"));
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
            next.note = Some(if r.replace {
                "stopped; the OSD was marked in again".into()
            } else {
                format!(
                    "stopped; CRUSH weight restored to {}",
                    r.original_weight.map(|w| w.to_string()).unwrap_or_else(|| "its value".into())
                )
            });
            Step::go(next)
        }
    }
}

#[cfg(test)]
mod tests;
