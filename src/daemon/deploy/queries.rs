//! Deployments as `osd deploy status` shows them.

use crate::daemon::read_model::outcome_text;
use std::collections::HashMap;

use super::Deployments;
use crate::daemon::DaemonError;
use crate::domain::deploy::DeploymentRecord;
use crate::domain::deploy::{DeployPhase, ATTEMPTS};
use crate::domain::swap::making::{making, Made, Making};
use crate::store::{DeploymentCodec, Store};
use crate::wire::api::deployments::{DeployAction, DeployedOsd, DeploymentDetail, DeploymentQuery, DeploymentStatus};

pub fn deployment_status(rec: &DeploymentRecord) -> DeploymentStatus {
    let d = &rec.state;
    DeploymentStatus {
        deployment_id: rec.number,
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

impl Deployments {
    /// Active deployments and up to `history` finished ones (default 20).
    pub async fn deployments(&self, q: &DeploymentQuery) -> Result<Vec<DeploymentStatus>, DaemonError> {
        let recs = self.store.ops::<DeploymentCodec>().with_finished(q.history.unwrap_or(20).clamp(0, 1000)).await?;
        Ok(recs.iter().map(deployment_status).collect())
    }

    pub async fn deployment_detail(&self, number: i64) -> Result<DeploymentDetail, DaemonError> {
        let rec = self.store.ops::<DeploymentCodec>().get(number).await?;
        let actions = self
            .store
            .actions(rec.id)
            .await?
            .into_iter()
            .map(|a| DeployAction {
                id: a.id,
                outcome: outcome_text(&a),
                effect: a.args,
                detail: a.detail,
                issued_at: a.issued_at,
                finished_at: a.finished_at,
            })
            .collect();
        Ok(DeploymentDetail { status: deployment_status(&rec), actions })
    }
}

/// (host, disk) -> why its deployment's last attempt failed, for the
/// deployments that are failed (waiting to retry) or gave up.
pub async fn deploy_failures(store: &Store) -> Result<HashMap<(String, String), String>, DaemonError> {
    let mut out = HashMap::new();
    for rec in store.ops::<DeploymentCodec>().with_finished(100).await? {
        let d = &rec.state;
        if !matches!(d.phase, DeployPhase::Failed | DeployPhase::GaveUp) {
            // A later deployment on the same disks supersedes an older failure.
            for disk in d.disks() {
                out.remove(&(d.host.clone(), disk.to_string()));
            }
            continue;
        }
        let why = format!(
            "{} (attempt {} of {ATTEMPTS}, {})",
            d.failure.clone().unwrap_or_default(),
            d.attempt,
            d.phase.as_str()
        );
        for disk in d.disks() {
            out.insert((d.host.clone(), disk.to_string()), why.clone());
        }
    }
    Ok(out)
}

/// Finished deployments an estimate reads: enough that a host's latest
/// few are among them on a cluster of many hosts (failed tries and ones
/// that found their OSDs made are read too, and skipped).
const HISTORY: i64 = 200;

/// How long `count` new OSDs on `host` take to make, at the pace of the
/// deployments that made their OSDs lately: the in-place way's estimate
/// (`domain::swap::making`). None when the store cannot say: a preview
/// without it says so, and the swap it previews does not depend on it.
pub async fn making_pace(store: &Store, host: &str, count: usize) -> Option<Making> {
    match store.ops::<DeploymentCodec>().finished(HISTORY).await {
        Ok(finished) => making(host, count, &finished.iter().filter_map(Made::of).collect::<Vec<_>>()),
        Err(e) => {
            tracing::warn!("cannot read the finished deployments to time an OSD's making: {e}");
            None
        }
    }
}
