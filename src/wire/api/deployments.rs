//! `/api/v1/deployments`: OSDs being made from applied specs, disk by disk.

use serde::{Deserialize, Serialize};

use crate::domain::deploy::{DeployPhase, OsdKind};

/// One deployment (a spec on a host, for a set of disks) as
/// `osd deploy status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentStatus {
    pub deployment_id: i64,
    pub host: String,
    pub service_name: String,
    pub spec_version: i64,
    pub state: DeployPhase,
    /// 1 for the first try.
    pub attempt: u32,
    /// The data devices it makes OSDs on.
    pub disks: Vec<String>,
    /// The ceph-volume commands, as planned.
    pub commands: Vec<String>,
    pub osds: Vec<DeployedOsd>,
    pub waiting_on: Option<String>,
    /// Why the last attempt failed, in ceph-volume's or the cluster's words.
    pub failure: Option<String>,
    pub last_error: Option<String>,
    pub retry_at: Option<i64>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeployedOsd {
    pub id: u32,
    pub device: String,
    pub kind: OsdKind,
    pub activated: bool,
    pub started: bool,
    /// Up and in under its host (with its spec's class).
    pub verified: bool,
}

/// One action of a deployment, logged before it was issued.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeployAction {
    pub id: i64,
    /// The effect as JSON, e.g. {"effect": "prepare", "step": 0}.
    pub effect: String,
    /// What was asked of the host ("ceph-volume raw prepare ...", "osd.7").
    pub detail: String,
    pub issued_at: i64,
    pub finished_at: Option<i64>,
    pub outcome: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DeploymentDetail {
    #[serde(flatten)]
    pub status: DeploymentStatus,
    pub actions: Vec<DeployAction>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
pub struct DeploymentQuery {
    /// How many finished deployments to include (default 20).
    pub history: Option<i64>,
}
