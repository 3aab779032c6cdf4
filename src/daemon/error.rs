//! What can go wrong in a daemon operation, by what it means for the
//! caller. `api::error` alone turns these into HTTP statuses.

use crate::domain::spec::SpecError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The request itself is wrong: a missing or malformed argument.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    /// It contradicts the current state: already there, already under way,
    /// past the point where it can be undone.
    #[error("{0}")]
    Conflict(String),
    /// Carrying it out could lose data (a device in use, an OSD still active).
    #[error("{0}")]
    RefusedUnsafe(String),
    /// A valid request the daemon cannot act on now: the cluster or an agent
    /// cannot be asked, or does not know what is needed.
    #[error("{0}")]
    CannotAct(String),
    /// Spec documents that are invalid, or cannot be planned on some host.
    #[error("{}", invalid_specs_message(.0))]
    InvalidSpecs(Vec<SpecError>),
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    Store(StoreError),
}

/// What the API's `error` says about invalid documents.
pub fn invalid_specs_message(errors: &[SpecError]) -> String {
    let each: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    format!("{} invalid document(s); nothing was applied: {}", errors.len(), each.join(" | "))
}

impl DaemonError {
    pub fn cluster_unreadable(e: crate::ceph::CephError) -> DaemonError {
        DaemonError::CannotAct(format!("cannot read the cluster: {e}"))
    }
}

impl From<StoreError> for DaemonError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(m) => DaemonError::NotFound(m),
            StoreError::Conflict(m) => DaemonError::Conflict(m),
            other => DaemonError::Store(other),
        }
    }
}
