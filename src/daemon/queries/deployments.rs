//! Deployments as `osd deploy status` shows them.

use crate::daemon::{Daemon, DaemonError};
use crate::domain::deploy::DeploymentRecord;
use crate::wire::api::deployments::{DeployedOsd, DeploymentDetail, DeploymentQuery, DeploymentStatus};

pub fn deployment_status(rec: &DeploymentRecord) -> DeploymentStatus {
    let d = &rec.deployment;
    DeploymentStatus {
        deployment_id: rec.id,
        host: d.host.clone(),
        service_name: d.service_name.clone(),
        spec_version: d.spec_version,
        state: d.phase,
        attempt: d.attempt,
        disks: d.disks().map(str::to_string).collect(),
        commands: d.steps.iter().map(|s| crate::domain::command::shown(&s.command)).collect(),
        osds: d
            .osds
            .iter()
            .map(|o| DeployedOsd {
                id: o.id,
                device: o.device.clone(),
                kind: o.kind,
                activated: o.activated,
                started: o.started,
                verified: o.verified,
            })
            .collect(),
        waiting_on: rec.waiting_on.clone(),
        failure: d.failure.clone(),
        last_error: rec.last_error.clone(),
        retry_at: d.retry_at,
        created_at: rec.created_at,
        finished_at: rec.finished_at,
    }
}

impl Daemon {
    /// Active deployments and up to `history` finished ones (default 20).
    pub async fn deployments(&self, q: &DeploymentQuery) -> Result<Vec<DeploymentStatus>, DaemonError> {
        let recs = self.store.deployments(q.history.unwrap_or(20).clamp(0, 1000)).await?;
        Ok(recs.iter().map(deployment_status).collect())
    }

    pub async fn deployment_detail(&self, id: i64) -> Result<DeploymentDetail, DaemonError> {
        let rec = self.store.deployment(id).await?;
        Ok(DeploymentDetail { status: deployment_status(&rec), actions: self.store.deploy_actions(id).await? })
    }
}
