//! Deployments on the operation kernel. Each round reads the cluster once
//! (`osd dump`, `osd df`, `osd tree`, `pg stat`), then for each active
//! deployment lists the OSDs ceph-volume finds on its host;
//! `domain::deploy::advance` decides, the executor writes the step and logs
//! the action before the host's agent is asked to carry it out. After a
//! crash it lists again: what ceph-volume made is found on the disks,
//! never assumed.

use std::sync::Arc;

use super::Deployments;
use crate::agent_client::AgentError;
use crate::ceph::{CephError, ClusterState};
use crate::clock::now_ms;
use crate::daemon::operations::{Executor, Flow, OperationKind};
use crate::daemon::{DaemonError, Pace};
use crate::domain::command::CommandLine;
use crate::domain::deploy::{
    advance, apply, changed, DeployEffect, DeployObservation, DeployPhase, DeployStep, Deployment, DeploymentRecord,
    InCluster, Listed,
};
use crate::domain::event::{EventKind, Level};
use crate::domain::operation::{record, Outcome, Recorded};
use crate::store::DeploymentCodec;
use crate::store::ManagedHost;
use crate::wire::agent::{ActivateRequest, CephVolumeRequest};

/// The deployment kind, as the executor drives it.
pub struct DeploymentKind {
    d: Arc<Deployments>,
}

impl Deployments {
    /// One round over all active deployments.
    #[tracing::instrument(skip_all)]
    pub async fn round(self: &Arc<Self>) -> Result<Pace, DaemonError> {
        let kind = DeploymentKind { d: self.clone() };
        Executor::new(kind, self.store.clone(), self.backoff).round().await
    }
}

impl OperationKind for DeploymentKind {
    type Codec = DeploymentCodec;
    type State = Deployment;
    type Effect = DeployEffect;
    type Output = String;
    type Round = Arc<ClusterState>;
    type Observation = DeployObservation;

    async fn begin_round(&self, _active: &[DeploymentRecord]) -> Result<Arc<ClusterState>, DaemonError> {
        Ok(Arc::new(self.d.ceph.state().await.map_err(DaemonError::cluster_unreadable)?))
    }

    async fn observe(&self, rec: &DeploymentRecord, state: &mut Arc<ClusterState>) -> DeployObservation {
        let d = &rec.state;
        match self.d.store.host(&d.host).await {
            Ok(host) => self.observe_on(d, &host, state).await,
            Err(e) => {
                // Without its host nothing can be listed: the deployment waits.
                tracing::warn!("host {} of deployment {} is not known: {e}", d.host, rec.number);
                DeployObservation { cluster_fsid: state.fsid.clone(), now: now_ms(), ..Default::default() }
            }
        }
    }

    fn advance(&self, rec: &DeploymentRecord, obs: &DeployObservation, _now: i64) -> DeployStep {
        advance(&rec.state, obs)
    }

    fn record(
        &self,
        rec: &DeploymentRecord,
        step: &DeployStep,
        _obs: &DeployObservation,
        _round: &mut Arc<ClusterState>,
        now: i64,
    ) -> Recorded<Deployment> {
        record(rec, step, now, changed)
    }

    async fn after_step(
        &self,
        before: &DeploymentRecord,
        after: &DeploymentRecord,
        _step: &DeployStep,
        _obs: &DeployObservation,
    ) {
        self.d.announce_deployment(after, &before.state).await;
    }

    fn detail(&self, rec: &DeploymentRecord, effect: &DeployEffect) -> String {
        let d = &rec.state;
        match effect {
            DeployEffect::Prepare { step } => format!("ceph-volume {}", CommandLine(&d.steps[*step].command)),
            DeployEffect::Activate { osd } | DeployEffect::Start { osd } | DeployEffect::ClearDeviceClass { osd } => {
                format!("osd.{osd}")
            }
            DeployEffect::HoldDisks => d.disks().collect::<Vec<_>>().join(", "),
        }
    }

    async fn perform(&self, rec: &DeploymentRecord, effect: &DeployEffect) -> Outcome<String> {
        match self.d.store.host(&rec.state.host).await {
            Ok(host) => self.carry_out(&rec.state, &host, effect).await,
            Err(e) => Outcome::Failed(format!("host {}: {e}", rec.state.host)),
        }
    }

    fn done_detail(&self, text: &String) -> (String, Option<String>) {
        (text.clone(), None)
    }

    fn apply(&self, rec: &DeploymentRecord, effect: &DeployEffect, outcome: &Outcome<String>, now: i64) -> Deployment {
        apply(&rec.state, effect, outcome, now)
    }

    async fn after_effect(
        &self,
        before: &DeploymentRecord,
        after: &DeploymentRecord,
        effect: &DeployEffect,
        outcome: &Outcome<String>,
        _round: &mut Arc<ClusterState>,
    ) -> Flow {
        let d = &after.state;
        let detail = self.detail(before, effect);
        let event = match outcome {
            Outcome::Failed(why) | Outcome::Refused(why) => {
                Some((Level::Error, format!("{detail} on {}: {why}", d.host)))
            }
            Outcome::Unknown(why) => {
                Some((Level::Warning, format!("{detail} on {}: no outcome yet ({why}); will look again", d.host)))
            }
            Outcome::Done(_) => None,
        };
        if let Some((level, message)) = event {
            self.d
                .events
                .record(level, EventKind::OsdCreateFailed, Some(&d.host), Some(&d.service_name), message)
                .await;
        }
        self.d.announce_deployment(after, &before.state).await;
        // A prepare changes what the host's disks hold; an activation or a
        // start does not, and a `ceph-volume inventory` after each took an
        // emulated host a minute of the lane's time.
        if matches!(effect, DeployEffect::Prepare { .. }) {
            match self.d.store.host(&d.host).await {
                Ok(host) => {
                    if let Err(e) = self.d.inventory.poll_host(&host).await {
                        tracing::warn!("cannot refresh the inventory of {} after {}: {e}", d.host, effect.name());
                    }
                }
                Err(e) => tracing::warn!("host {}: {e}", d.host),
            }
        }
        // What went through is looked at again at once (a fresh listing, the
        // daemons' status), so that the host's next OSD is activated without
        // waiting for the other hosts' lanes to end this round; what failed
        // or is not known yet waits for the next round.
        match (outcome, effect) {
            (
                Outcome::Done(_),
                DeployEffect::Prepare { .. } | DeployEffect::Activate { .. } | DeployEffect::Start { .. },
            ) => Flow::Continue,
            _ => Flow::Stop,
        }
    }

    fn interrupted(&self, state: &Deployment, _effect: &DeployEffect) -> Deployment {
        // What ceph-volume made is read from the host's listing, never
        // remembered on trust: observing again is enough.
        state.clone()
    }

    async fn after_interrupted(&self, _before: &DeploymentRecord, _after: &DeploymentRecord) {}

    /// Hosts side by side, a host's deployments one after another: a
    /// `ceph-volume lvm batch` takes a minute or more, and a spec over a
    /// rack of hosts would wait for each in turn (cephadm deploys its hosts
    /// in parallel too). The agent runs one disk command at a time anyway.
    fn lane(&self, op: &DeploymentRecord) -> Option<String> {
        op.host.clone()
    }

    async fn end_round(&self, _round: Option<Arc<ClusterState>>, _active: &[DeploymentRecord]) {
        // The OSDs it made show in the OSD list the dashboard refetches on this.
        self.d.read_model.notify_after_cluster_read(crate::daemon::live::Live::Deployments).await;
    }
}

impl DeploymentKind {
    async fn observe_on(&self, d: &Deployment, host: &ManagedHost, state: &ClusterState) -> DeployObservation {
        let listed = match self.d.agents.list_osds(host).await {
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
                match self.d.agents.osd_status(host, o.id).await {
                    Ok(s) if s.running => running.push(o.id),
                    Ok(_) => {}
                    Err(e) => tracing::warn!("cannot ask {} about osd.{}: {e}", host.name, o.id),
                }
            }
        }
        let mut ids: Vec<u32> = d.osds.iter().map(|o| o.id).collect();
        ids.extend(d.steps.iter().flat_map(|s| s.claimed_ids()));
        ids.sort_unstable();
        ids.dedup();
        let cluster = ids
            .into_iter()
            .filter_map(|id| {
                state.osd(id).map(|s| {
                    (
                        id,
                        InCluster {
                            up: s.up,
                            is_in: s.is_in,
                            crush_host: s.crush_host.clone(),
                            device_class: s.device_class.clone(),
                            destroyed: s.destroyed,
                        },
                    )
                })
            })
            .collect();
        DeployObservation { listed, cluster_fsid: state.fsid.clone(), cluster, running, now: now_ms() }
    }

    async fn carry_out(&self, d: &Deployment, host: &ManagedHost, effect: &DeployEffect) -> Outcome<String> {
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
                self.d
                    .events
                    .record(
                        Level::Info,
                        EventKind::OsdCreate,
                        Some(&d.host),
                        Some(&d.service_name),
                        format!(
                            "Deploying OSDs of {} on {}: ceph-volume {}",
                            d.service_name,
                            d.host,
                            CommandLine(command)
                        ),
                    )
                    .await;
                let request = CephVolumeRequest {
                    args: command.clone(),
                    osdspec_affinity: d.service_id.clone().filter(|s| !s.is_empty()),
                };
                match self.d.agents.ceph_volume(host, &request).await {
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
                match self.d.agents.activate_osd(host, *osd, &req).await {
                    Ok(r) if r.exit_code == 0 => Outcome::Done(format!("{} exited 0", r.command)),
                    Ok(r) => Outcome::Failed(format!("exit {}: {}", r.exit_code, tail(&r.stderr))),
                    Err(e) => judged(e),
                }
            }
            DeployEffect::Start { osd } => {
                self.d
                    .events
                    .record(
                        Level::Info,
                        EventKind::OsdDeploying,
                        Some(&d.host),
                        Some(&format!("osd.{osd}")),
                        format!("Deploying daemon osd.{osd} on {}", d.host),
                    )
                    .await;
                match self.d.agents.start_osd(host, *osd).await {
                    Ok(s) if s.running => Outcome::Done(s.detail),
                    Ok(s) => Outcome::Failed(s.detail),
                    Err(e) => judged(e),
                }
            }
            DeployEffect::ClearDeviceClass { osd } => {
                match self.d.ceph.rm_device_class(*osd).await {
                    Ok(()) => {
                        let message = format!(
                            "Removed the device class of destroyed osd.{osd}: the new disk on {} that takes its \
                             id sets its own",
                            d.host
                        );
                        self.d
                            .events
                            .record(Level::Info, EventKind::OsdCreate, Some(&d.host), Some(&d.service_name), message)
                            .await;
                        Outcome::Done(format!("osd.{osd}'s device class removed"))
                    }
                    // It may have gone through: the next look at the cluster says.
                    Err(e @ CephError::Timeout { .. }) => Outcome::Unknown(e.to_string()),
                    Err(e) => Outcome::Failed(e.to_string()),
                }
            }
            DeployEffect::HoldDisks => self.hold_disks(d).await,
        }
    }

    async fn hold_disks(&self, d: &Deployment) -> Outcome<String> {
        let reason = format!(
            "{} could not make OSDs here after {} attempts: {}",
            d.service_name,
            d.attempt,
            d.failure.clone().unwrap_or_default()
        );
        let inventory = match self.d.store.inventory(&d.host).await {
            Ok(i) => i,
            Err(e) => {
                tracing::warn!("holding the disks of {} without their ids: {e}", d.host);
                None
            }
        };
        let devices = inventory.as_ref().and_then(|i| self.d.inventory.parsed(i).ok());
        for disk in d.disks() {
            let id =
                devices.as_ref().and_then(|ds| ds.iter().find(|x| &*x.path == disk).map(|x| x.device_id.to_string()));
            if let Err(e) = self.d.store.hold(&d.host, disk, id.as_deref(), &reason, now_ms()).await {
                return Outcome::Failed(format!("cannot hold {disk}: {e}"));
            }
        }
        Outcome::Done(format!("held {}", d.disks().collect::<Vec<_>>().join(", ")))
    }
}

/// The last lines of ceph-volume's error output, where it says why.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}
