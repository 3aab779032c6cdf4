//! The deployment worker. Each round reads the cluster once (`osd dump`,
//! `osd df`, `osd tree`, `pg stat`), then for each active deployment: lists
//! the OSDs ceph-volume finds on its host, asks `domain::deploy::advance`
//! for the next step, **writes that step to SQLite**, logs the action, and
//! only then asks the host's agent to carry it out. After a crash it lists
//! again: what ceph-volume made is found on the disks, never assumed.

use crate::agent_client::AgentError;
use crate::ceph::ClusterState;
use crate::clock::now_ms;
use crate::daemon::{Daemon, DaemonError};
use crate::domain::command::CommandLine;
use crate::domain::deploy::{
    advance, failed, DeployEffect, DeployObservation, DeployPhase, DeployStep, Deployment, DeploymentRecord, InCluster,
    Listed,
};
use crate::domain::event::{EventKind, Level};
use crate::wire::agent::{ActivateRequest, CephVolumeRequest};
use crate::wire::api::hosts::Host;

/// Phase changes without an effect follow each other at once; this bounds
/// how many one round walks through.
const MAX_STEPS_PER_ROUND: usize = 8;

/// What became of an effect.
enum Outcome {
    Done(String),
    /// It failed; the attempt ends with this reason.
    Failed(String),
    /// No answer, or the agent was busy: the listing decides next round.
    Unknown(String),
}

impl Daemon {
    /// One round over all active deployments.
    #[tracing::instrument(skip_all)]
    pub async fn deployment_round(&self) -> Result<(), DaemonError> {
        let active = self.store.active_deployments().await?;
        if active.is_empty() {
            return Ok(());
        }
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        for rec in active {
            let host = rec.deployment.host.clone();
            let span =
                tracing::info_span!("deployment", id = rec.id, host = %host, spec = %rec.deployment.service_name);
            if let Err(e) = tracing::Instrument::instrument(self.drive_deployment(rec, &state), span).await {
                tracing::error!(host = %host, "deployment step failed: {e}");
            }
        }
        // The OSDs it made show in the OSD list the dashboard refetches on this.
        self.notify_after_cluster_read(crate::daemon::live::Live::Deployments).await;
        Ok(())
    }

    async fn observe_deployment(&self, d: &Deployment, host: &Host, state: &ClusterState) -> DeployObservation {
        let listed = match self.agents.list_osds(host).await {
            Ok(h) => Some(
                h.osds
                    .into_iter()
                    .map(|o| Listed {
                        id: o.osd_id,
                        osd_fsid: o.osd_fsid,
                        cluster_fsid: o.cluster_fsid,
                        kind: o.kind,
                        device: o.device,
                    })
                    .collect(),
            ),
            Err(e) => {
                tracing::warn!("cannot list the OSDs on {}: {e}", host.name);
                None
            }
        };
        let mut running = Vec::new();
        if matches!(d.phase, DeployPhase::Activating | DeployPhase::Starting | DeployPhase::Preparing) {
            for o in &d.osds {
                match self.agents.osd_status(host, o.id).await {
                    Ok(s) if s.running => running.push(o.id),
                    Ok(_) => {}
                    Err(e) => tracing::warn!("cannot ask {} about osd.{}: {e}", host.name, o.id),
                }
            }
        }
        let cluster = d
            .osds
            .iter()
            .filter_map(|o| {
                state.osd(o.id).map(|s| {
                    (
                        o.id,
                        InCluster {
                            up: s.up,
                            is_in: s.is_in,
                            crush_host: s.crush_host.clone(),
                            device_class: s.device_class.clone(),
                        },
                    )
                })
            })
            .collect();
        DeployObservation { listed, cluster_fsid: state.fsid.clone(), cluster, running, now: now_ms() }
    }

    async fn drive_deployment(&self, mut rec: DeploymentRecord, state: &ClusterState) -> Result<(), DaemonError> {
        let host = self.store.host(&rec.deployment.host).await?;
        for _ in 0..MAX_STEPS_PER_ROUND {
            let obs = self.observe_deployment(&rec.deployment, &host, state).await;
            let step = advance(&rec.deployment, &obs);
            let before = rec.deployment.clone();
            self.record_step(&mut rec, &step).await?;
            self.announce_deployment(&rec, &before, step.effect.as_ref()).await;
            let Some(effect) = step.effect else {
                let moved = rec.deployment.phase != before.phase;
                if !moved || step.waiting_on.is_some() || rec.deployment.phase.is_finished() {
                    return Ok(());
                }
                continue;
            };
            return self.perform_deploy(&mut rec, &host, &effect).await;
        }
        Ok(())
    }

    /// Writes the step's state (before any effect), if anything a reader sees changed.
    async fn record_step(&self, rec: &mut DeploymentRecord, step: &DeployStep) -> Result<(), DaemonError> {
        let unchanged = step.deployment == rec.deployment && step.waiting_on == rec.waiting_on && step.effect.is_none();
        if unchanged {
            return Ok(());
        }
        let now = now_ms();
        let mut next = rec.clone();
        next.deployment = step.deployment.clone();
        next.waiting_on = step.waiting_on.clone();
        next.updated_at = now;
        if next.deployment.phase.is_finished() && next.finished_at.is_none() {
            next.finished_at = Some(now);
        }
        next.version = self.store.save_deployment(&next, rec.version).await?;
        *rec = next;
        Ok(())
    }

    /// Logs the action, asks the host, records the outcome.
    #[tracing::instrument(skip_all, fields(effect = effect.name()))]
    async fn perform_deploy(
        &self,
        rec: &mut DeploymentRecord,
        host: &Host,
        effect: &DeployEffect,
    ) -> Result<(), DaemonError> {
        let d = rec.deployment.clone();
        let detail = match effect {
            DeployEffect::Prepare { step } => format!("ceph-volume {}", CommandLine(&d.steps[*step].command)),
            DeployEffect::Activate { osd } | DeployEffect::Start { osd } => format!("osd.{osd}"),
            DeployEffect::HoldDisks => d.disks().collect::<Vec<_>>().join(", "),
        };
        let action = self.store.log_deploy_action(rec.id, effect, &detail, now_ms()).await?;
        let outcome = self.carry_out_deploy(&d, host, effect).await;
        if matches!(outcome, Outcome::Done(_)) {
            deploy_crash_point(effect);
        }
        let now = now_ms();
        let text = match &outcome {
            Outcome::Done(t) => format!("ok: {t}"),
            Outcome::Failed(t) => format!("failed: {t}"),
            Outcome::Unknown(t) => format!("unknown: {t}"),
        };
        self.store.finish_deploy_action(action, &text, now).await?;
        let mut next = rec.deployment.clone();
        match (&outcome, effect) {
            (Outcome::Done(_), DeployEffect::Prepare { step }) => next.steps[*step].succeeded = true,
            (Outcome::Failed(why), DeployEffect::Prepare { step }) => next.steps[*step].failure = Some(why.clone()),
            (Outcome::Done(_), DeployEffect::Activate { osd }) => set(&mut next, *osd, |o| o.activated = true),
            (Outcome::Done(_), DeployEffect::Start { osd }) => set(&mut next, *osd, |o| o.started = true),
            (Outcome::Failed(why), DeployEffect::Activate { osd } | DeployEffect::Start { osd }) => {
                let what = if matches!(effect, DeployEffect::Activate { .. }) { "activate" } else { "start" };
                next = failed(next, format!("cannot {what} osd.{osd}: {why}"), now).deployment;
            }
            _ => {}
        }
        let event = match &outcome {
            Outcome::Failed(why) => Some((Level::Error, format!("{detail} on {}: {why}", d.host))),
            Outcome::Unknown(why) => {
                Some((Level::Warning, format!("{detail} on {}: no outcome yet ({why}); will look again", d.host)))
            }
            Outcome::Done(_) => None,
        };
        if let Some((level, message)) = event {
            self.event(level, EventKind::OsdCreateFailed, Some(&d.host), Some(&d.service_name), message).await;
        }
        rec.last_error = match outcome {
            Outcome::Failed(t) | Outcome::Unknown(t) => Some(t),
            Outcome::Done(_) => None,
        };
        let before = rec.deployment.clone();
        rec.deployment = next;
        rec.updated_at = now;
        if rec.deployment.phase.is_finished() && rec.finished_at.is_none() {
            rec.finished_at = Some(now);
        }
        let v = rec.version;
        rec.version = self.store.save_deployment(rec, v).await?;
        self.announce_deployment(rec, &before, None).await;
        if matches!(effect, DeployEffect::Prepare { .. } | DeployEffect::Start { .. }) {
            if let Err(e) = self.poll_host(host).await {
                tracing::warn!("cannot refresh the inventory of {} after {}: {e}", host.name, effect.name());
            }
        }
        Ok(())
    }

    async fn carry_out_deploy(&self, d: &Deployment, host: &Host, effect: &DeployEffect) -> Outcome {
        let judged = |e: AgentError| {
            if e.is_busy() || e.outcome_unknown() {
                Outcome::Unknown(e.to_string())
            } else {
                Outcome::Failed(e.to_string())
            }
        };
        match effect {
            DeployEffect::Prepare { step } => {
                let command = &d.steps[*step].command;
                self.event(
                    Level::Info,
                    EventKind::OsdCreate,
                    Some(&d.host),
                    Some(&d.service_name),
                    format!("Deploying OSDs of {} on {}: ceph-volume {}", d.service_name, d.host, CommandLine(command)),
                )
                .await;
                let request = CephVolumeRequest {
                    args: command.clone(),
                    osdspec_affinity: d.service_id.clone().filter(|s| !s.is_empty()),
                };
                match self.agents.ceph_volume(host, &request).await {
                    Ok(r) if r.exit_code == 0 => Outcome::Done(format!("{} exited 0", r.command)),
                    Ok(r) => Outcome::Failed(format!("exit {}: {}", r.exit_code, tail(&r.stderr))),
                    Err(e) => judged(e),
                }
            }
            DeployEffect::Activate { osd } => {
                let Some(o) = d.osds.iter().find(|o| o.id == *osd) else {
                    return Outcome::Failed(format!("osd.{osd} is not one this deployment made"));
                };
                let req = ActivateRequest { osd_fsid: o.osd_fsid.clone(), kind: o.kind, device: o.device.clone() };
                match self.agents.activate_osd(host, *osd, &req).await {
                    Ok(r) if r.exit_code == 0 => Outcome::Done(format!("{} exited 0", r.command)),
                    Ok(r) => Outcome::Failed(format!("exit {}: {}", r.exit_code, tail(&r.stderr))),
                    Err(e) => judged(e),
                }
            }
            DeployEffect::Start { osd } => {
                self.event(
                    Level::Info,
                    EventKind::OsdDeploying,
                    Some(&d.host),
                    Some(&format!("osd.{osd}")),
                    format!("Deploying daemon osd.{osd} on {}", d.host),
                )
                .await;
                match self.agents.start_osd(host, *osd).await {
                    Ok(s) if s.running => Outcome::Done(s.detail),
                    Ok(s) => Outcome::Failed(s.detail),
                    Err(e) => judged(e),
                }
            }
            DeployEffect::HoldDisks => {
                let reason = format!(
                    "{} could not make OSDs here after {} attempts: {}",
                    d.service_name,
                    d.attempt,
                    d.failure.clone().unwrap_or_default()
                );
                let inventory = self.store.inventory(&d.host).await.ok().flatten();
                let devices = inventory.as_ref().and_then(|i| self.cache.devices(i).ok());
                for disk in d.disks() {
                    let id = devices
                        .as_ref()
                        .and_then(|ds| ds.iter().find(|x| &*x.path == disk).map(|x| x.device_id.to_string()));
                    if let Err(e) = self.store.hold(&d.host, disk, id.as_deref(), &reason, now_ms()).await {
                        return Outcome::Failed(format!("cannot hold {disk}: {e}"));
                    }
                }
                Outcome::Done(format!("held {}", d.disks().collect::<Vec<_>>().join(", ")))
            }
        }
    }
}

fn set(d: &mut Deployment, osd: u32, f: impl FnOnce(&mut crate::domain::deploy::NewOsd)) {
    if let Some(o) = d.osds.iter_mut().find(|o| o.id == osd) {
        f(o);
    }
}

/// The last lines of ceph-volume's error output, where it says why.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// Fault injection for the crash tests: `OSDKEEPER_CRASH_AFTER=prepare` (or
/// `activate`, `start`) aborts right after that step succeeded and before
/// its outcome was recorded.
fn deploy_crash_point(effect: &DeployEffect) {
    if crate::daemon::crash::armed(effect.name()) {
        eprintln!(
            "OSDKEEPER_CRASH_AFTER={}: aborting after the {} step, as a crash would",
            effect.name(),
            effect.name()
        );
        std::process::abort();
    }
}
