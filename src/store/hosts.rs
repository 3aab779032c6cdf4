//! Hosts and their polling state.

use super::group_commit::GroupCommit;
use super::{LoggedEvent, NewEvent, Result, Store, StoreError, Topic};

/// Hosts added one request each, with the time of their request.
pub(super) type HostAdds = GroupCommit<(NewHost, i64), Option<(ManagedHost, LoggedEvent)>>;

/// A managed host and the state of its agent's polls, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedHost {
    pub name: String,
    /// host:port of its agent.
    pub addr: String,
    pub labels: Vec<String>,
    pub added_at: i64,
    /// Since when polls fail (ms since the epoch), if they do.
    pub unreachable_since: Option<i64>,
    pub last_error: Option<String>,
    pub consecutive_failures: i64,
    pub next_poll_at: i64,
}

impl ManagedHost {
    /// A host not yet stored or polled: one about to be added, or a test's.
    pub fn unpolled(name: &str, addr: &str) -> ManagedHost {
        ManagedHost {
            name: name.into(),
            addr: addr.into(),
            labels: vec![],
            added_at: 0,
            unreachable_since: None,
            last_error: None,
            consecutive_failures: 0,
            next_poll_at: 0,
        }
    }
}

/// A host to add, with the event that tells it.
#[derive(Debug, Clone)]
pub struct NewHost {
    pub name: String,
    pub addr: String,
    pub labels: Vec<String>,
    pub event: NewEvent,
}

/// A failed poll, as the poller saw it.
#[derive(Debug, Clone)]
pub struct PollFailure {
    pub at: i64,
    pub error: String,
    pub next_poll_at: i64,
}

fn unknown(name: &str) -> StoreError {
    StoreError::NotFound(format!("unknown host {name}"))
}

impl Store {
    pub async fn add_host(&self, name: &str, addr: &str, labels: &[String], now: i64) -> Result<ManagedHost> {
        let host = self
            .backend
            .add_host(name, addr, labels, now)
            .await?
            .ok_or_else(|| StoreError::Conflict(format!("host {name} is already known")))?;
        self.changed(Topic::Hosts);
        Ok(host)
    }

    /// Hosts and their events in one transaction (one commit, however
    /// many: a commit to the store in RADOS costs ~13 ms); None in place
    /// of a name already known, which is left as it is.
    pub async fn add_hosts(&self, hosts: &[NewHost], now: i64) -> Result<Vec<Option<(ManagedHost, LoggedEvent)>>> {
        let added = self.backend.add_hosts(hosts, now).await?;
        if added.iter().any(Option::is_some) {
            self.changed(Topic::Hosts);
        }
        Ok(hosts
            .iter()
            .zip(added)
            .map(|(h, added)| added.map(|(host, id)| (host, LoggedEvent::stored(id, now, h.event.clone()))))
            .collect())
    }

    /// One host and its event, in a transaction shared with the hosts
    /// other requests add at the same time (`group_commit.rs`); None when
    /// the name is known already.
    pub async fn add_host_joined(&self, host: NewHost, now: i64) -> Result<Option<(ManagedHost, LoggedEvent)>> {
        let store = self.clone();
        self.host_adds
            .submit((host, now), move |batch: Vec<(NewHost, i64)>| async move {
                // The batch's latest time for all: a request's host is never older than its request.
                let at = batch.iter().map(|(_, now)| *now).max().unwrap_or_default();
                let hosts: Vec<NewHost> = batch.into_iter().map(|(h, _)| h).collect();
                store.add_hosts(&hosts, at).await
            })
            .await
    }

    pub async fn host(&self, name: &str) -> Result<ManagedHost> {
        self.backend.host(name).await?.ok_or_else(|| unknown(name))
    }

    /// Every host, in the order they were added.
    pub async fn hosts(&self) -> Result<Vec<ManagedHost>> {
        self.backend.hosts().await
    }

    pub async fn remove_host(&self, name: &str) -> Result<()> {
        if !self.backend.remove_host(name).await? {
            return Err(unknown(name));
        }
        // Its inventory and holds went with it.
        self.changes.inventory_removed(name);
        for topic in [Topic::Hosts, Topic::Inventories, Topic::Holds] {
            self.changed(topic);
        }
        Ok(())
    }

    pub async fn set_labels(&self, name: &str, labels: &[String]) -> Result<ManagedHost> {
        let host = self.backend.set_labels(name, labels).await?.ok_or_else(|| unknown(name))?;
        self.changed(Topic::Hosts);
        Ok(host)
    }

    /// Marks a poll as failed; returns true if the host just became unreachable.
    pub async fn record_poll_failure(&self, name: &str, f: &PollFailure) -> Result<bool> {
        let became_unreachable = self.backend.record_poll_failure(name, f).await?.ok_or_else(|| unknown(name))?;
        if became_unreachable {
            self.changed(Topic::Hosts);
        }
        Ok(became_unreachable)
    }

    /// Marks a poll as successful; returns true if the host was unreachable.
    pub async fn record_poll_success(&self, name: &str, next_poll_at: i64) -> Result<bool> {
        let was_unreachable =
            self.backend.record_poll_success(name, next_poll_at).await?.ok_or_else(|| unknown(name))?;
        if was_unreachable {
            self.changed(Topic::Hosts);
        }
        Ok(was_unreachable)
    }
}
