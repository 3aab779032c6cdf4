//! The events a deployment records as its phase changes.

use super::Deployments;
use crate::clock::now_ms;
use crate::domain::deploy::{DeployPhase, Deployment, DeploymentRecord, ATTEMPTS};
use crate::domain::event::{EventKind, Level};

/// The event for going from `before` to `now`, if that change has one.
pub fn deployment_announcement(before: &Deployment, now: &Deployment) -> Option<(Level, EventKind, String)> {
    if before.phase == now.phase {
        return None;
    }
    let (svc, host) = (&now.service_name, &now.host);
    let ids = |d: &Deployment| d.osds.iter().map(|o| format!("osd.{}", o.id)).collect::<Vec<_>>().join(", ");
    let why = now.failure.clone().unwrap_or_default();
    Some(match (before.phase, now.phase) {
        (
            DeployPhase::Preparing,
            DeployPhase::Activating | DeployPhase::Starting | DeployPhase::Verifying | DeployPhase::Done,
        ) => (Level::Info, EventKind::OsdCreated, format!("Created OSDs of {svc} on {host}: {}", ids(now))),
        (_, DeployPhase::Done) => {
            (Level::Info, EventKind::OsdDeployed, format!("Deployed {} on {host}: up and in", ids(now)))
        }
        (_, DeployPhase::Failed) => (
            Level::Error,
            EventKind::OsdCreateFailed,
            format!(
                "Deploying {svc} on {host} failed (attempt {} of {ATTEMPTS}): {why}; it is tried again later",
                now.attempt
            ),
        ),
        (_, DeployPhase::GaveUp) => (
            Level::Error,
            EventKind::OsdCreateFailed,
            format!(
                "Gave up deploying {svc} on {host} after {} attempts: {why}; {} held until `osdkeeper device release`",
                now.attempt,
                now.disks().collect::<Vec<_>>().join(", ")
            ),
        ),
        (DeployPhase::Failed, DeployPhase::Preparing) => (
            Level::Info,
            EventKind::OsdCreate,
            format!("Retrying {svc} on {host} (attempt {} of {ATTEMPTS})", now.attempt),
        ),
        _ => return None,
    })
}

impl Deployments {
    /// Records the phase change from `before`, and tells the reconciler
    /// when the deployment ended.
    pub(super) async fn announce_deployment(&self, rec: &DeploymentRecord, before: &Deployment) {
        if let Some((level, kind, message)) = deployment_announcement(before, &rec.state) {
            let d = &rec.state;
            self.events.record(level, kind, Some(&d.host), Some(&d.service_name), message).await;
        }
        if rec.state.phase.is_finished() && !before.phase.is_finished() {
            self.deployment_finished(rec).await;
        }
    }

    /// A deployment ended: the reconciler's record says how, and it looks again.
    async fn deployment_finished(&self, rec: &DeploymentRecord) {
        let d = &rec.state;
        let outcome = match d.phase {
            DeployPhase::Done => "ok".to_string(),
            _ => format!("failed: {}", d.failure.clone().unwrap_or_default()),
        };
        match self.store.spec_host_run(&d.service_name, &d.host).await {
            Ok(Some(mut run)) if run.command == d.run_key => {
                run.outcome = outcome;
                run.at = now_ms();
                if let Err(e) = self.store.put_spec_host_run(&run).await {
                    tracing::error!("cannot record the end of deployment {}: {e}", rec.number);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::error!("cannot read the run of deployment {}: {e}", rec.number),
        }
        self.reconciler.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::deploy::{NewOsd, OsdKind};

    fn d(phase: DeployPhase) -> Deployment {
        let mut d = Deployment::new(
            "f5-422-01".into(),
            "osd.spares".into(),
            Some("spares".into()),
            1,
            "k".into(),
            None,
            vec![(
                ["raw", "prepare", "--bluestore", "--data", "/dev/loop6"].map(String::from).to_vec(),
                vec!["/dev/loop6".into()],
            )],
        );
        d.phase = phase;
        d.osds.push(NewOsd {
            id: 6,
            osd_fsid: "u".into(),
            kind: OsdKind::Raw,
            device: "/dev/loop6".into(),
            activated: true,
            started: true,
            verified: true,
        });
        d
    }

    #[test]
    fn words_for_each_change() {
        let said = |a, b| deployment_announcement(&d(a), &d(b)).map(|(_, k, m)| (k, m));
        assert_eq!(
            said(DeployPhase::Preparing, DeployPhase::Activating),
            Some((EventKind::OsdCreated, "Created OSDs of osd.spares on f5-422-01: osd.6".into()))
        );
        assert_eq!(
            said(DeployPhase::Verifying, DeployPhase::Done),
            Some((EventKind::OsdDeployed, "Deployed osd.6 on f5-422-01: up and in".into()))
        );
        assert_eq!(said(DeployPhase::Activating, DeployPhase::Starting), None);
        let mut gave_up = d(DeployPhase::GaveUp);
        gave_up.failure = Some("exit 1: boom".into());
        gave_up.attempt = 3;
        let (_, _, m) = deployment_announcement(&d(DeployPhase::Preparing), &gave_up).unwrap();
        assert_eq!(m, "Gave up deploying osd.spares on f5-422-01 after 3 attempts: exit 1: boom; /dev/loop6 held until `osdkeeper device release`");
    }
}
