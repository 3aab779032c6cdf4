//! Adding, removing and labelling hosts. A host is added only once its
//! agent answers with the host's name (unless told not to check), and
//! stored with its event in one commit, shared with hosts added at the
//! same time; its first poll follows at once. `host rm` refuses to forget
//! a host Ceph still has OSDs on unless told to.

use std::time::Duration;

use super::Inventory;
use crate::agent_client::AgentError;
use crate::clock::now_ms;
use crate::daemon::DaemonError;
use crate::domain::cluster::same_host as same_crush_host;
use crate::domain::event::{EventKind, Level};
use crate::domain::spec::valid_host_name;
use crate::store::{ManagedHost, NewEvent, NewHost, StoreError};

/// How long a host added through the API waits for its first poll, so
/// that hosts added one request after another are polled together.
const FIRST_POLL_GATHER: Duration = Duration::from_millis(250);

/// Host names become part of commands, paths and messages: only letters,
/// digits, '-' and '.' (cephadm's rule), and at most 250 characters.
pub fn check_host_name(name: &str) -> Result<(), DaemonError> {
    valid_host_name(name).map_err(|why| DaemonError::Invalid(format!("invalid host name {name:?}: {why}")))
}

/// An agent address: HOST:PORT, http://HOST:PORT, or https://HOST:PORT
/// once the daemon has the agents' CA (`agents.ca`) to check them against.
/// With an agent token, plain HTTP only to loopback: the token must not
/// cross the network in clear.
pub fn check_addr(addr: &str, agent_ca: bool, agent_token: bool) -> Result<(), DaemonError> {
    let url = if addr.contains("://") { addr.to_string() } else { format!("http://{addr}") };
    if agent_token && !crate::tls::keeps_secrets(&url) && url.starts_with("http://") {
        return Err(DaemonError::Invalid(format!(
            "invalid agent address {addr:?}: plain HTTP to another machine would carry the agent token in clear; \
             run the agent with --tls-cert/--tls-key and add it as https://"
        )));
    }
    match addr.split_once("://") {
        Some(("https", _)) if !agent_ca => {
            return Err(DaemonError::Invalid(format!(
                "invalid agent address {addr:?}: https:// agents need the CA of their certificates \
                 (serve --agent-ca FILE, or agents.ca in the config file)"
            )))
        }
        Some(("http" | "https", _)) | None => {}
        Some((scheme, _)) => {
            return Err(DaemonError::Invalid(format!(
                "invalid agent address {addr:?}: agents are reached over https:// or http://, not {scheme}://"
            )))
        }
    }
    let bare = addr.strip_prefix("http://").or_else(|| addr.strip_prefix("https://")).unwrap_or(addr);
    let ok = !bare.is_empty()
        && !bare.chars().any(|c| c.is_whitespace() || "'\"`;|&$<>\\".contains(c))
        && bare.rsplit_once(':').is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok());
    if ok {
        Ok(())
    } else {
        Err(DaemonError::Invalid(format!("invalid agent address {addr:?}: expected HOST:PORT, e.g. 10.0.0.5:8741")))
    }
}

pub fn check_label(label: &str) -> Result<(), DaemonError> {
    let ok =
        !label.is_empty() && label.len() <= 64 && label.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(DaemonError::Invalid(format!("invalid label {label:?}: use letters, digits, '_', '-' and '.'")))
    }
}

impl Inventory {
    /// With `check`, only once its agent answered (cephadm checks a host
    /// before adding it): a wrong address, token or host is refused now
    /// rather than found by the first poll.
    pub async fn add_host(
        &self,
        name: &str,
        addr: &str,
        labels: &[String],
        check: bool,
    ) -> Result<ManagedHost, DaemonError> {
        check_host_name(name)?;
        check_addr(addr, self.config.agent_ca.is_some(), self.config.sends_agent_secrets())?;
        for l in labels {
            check_label(l)?;
        }
        if check {
            self.check_agent(name, addr).await?;
        }
        let mut unique: Vec<String> = Vec::new();
        for l in labels {
            if !unique.contains(l) {
                unique.push(l.clone());
            }
        }
        let new = NewHost {
            name: name.to_string(),
            addr: addr.to_string(),
            labels: unique,
            event: self.added_event(name, addr),
        };
        // The host and its event in one commit, shared with the hosts of
        // requests that come at the same time.
        let added = self.store.add_host_joined(new, now_ms()).await?;
        let Some((host, event)) = added else {
            return Err(StoreError::Conflict(format!("host {name} is already known")).into());
        };
        self.events.told(event);
        // Its inventory now rather than at the next round, shared with the
        // hosts a script adds right after it.
        self.workers.poller.wake_within(FIRST_POLL_GATHER);
        Ok(host)
    }

    pub(super) fn added_event(&self, name: &str, addr: &str) -> NewEvent {
        self.events.host_event(EventKind::HostAdded, name, format!("Added host {name} (agent {addr})"))
    }

    pub(super) async fn check_agent(&self, name: &str, addr: &str) -> Result<(), DaemonError> {
        let candidate = ManagedHost::unpolled(name, addr);
        let not_added = |why: String| format!("host {name} not added: {why} (--no-check adds it anyway)");
        // Who answers, not a scan: the inventory follows right after the
        // host is stored, in the background (a `ceph-volume inventory` of
        // a host with many disks takes minutes; the CLI waits two).
        let answer = self.agents.identity(&candidate).await.map_err(|e| match e {
            AgentError::Unreachable { .. } | AgentError::Timeout { .. } => {
                DaemonError::CannotAct(not_added(e.to_string()))
            }
            other => DaemonError::Invalid(not_added(other.to_string())),
        })?;
        if !same_host(&answer.host, name) {
            return Err(DaemonError::Invalid(not_added(format!(
                "the agent at {addr} runs on host {:?}, not {name:?}",
                answer.host
            ))));
        }
        Ok(())
    }

    pub async fn remove_host(&self, name: &str, forget_osds: bool) -> Result<(), DaemonError> {
        self.check_host_forgettable(name, forget_osds).await?;
        self.store.remove_host(name).await?;
        self.cache.forget(name);
        self.forget_release_flag(name);
        self.events.record(Level::Info, EventKind::HostRemoved, Some(name), None, format!("Removed host {name}")).await;
        Ok(())
    }

    pub async fn label(&self, name: &str, label: &str, add: bool) -> Result<ManagedHost, DaemonError> {
        check_label(label)?;
        let host = self.store.host(name).await?;
        let mut labels = host.labels.clone();
        // Idempotent, as in cephadm: a label already there (or already
        // gone) is success, with nothing stored and no event.
        let has = labels.iter().any(|l| l == label);
        if has == add {
            return Ok(host);
        }
        if add {
            labels.push(label.to_string());
        } else {
            labels.retain(|l| l != label);
        }
        let host = self.store.set_labels(name, &labels).await?;
        self.workers.reconciler.wake();
        // cephadm's words ("Added label osd to host f5-422-01").
        let (kind, message) = if add {
            (EventKind::HostLabelAdded, format!("Added label {label} to host {name}"))
        } else {
            (EventKind::HostLabelRemoved, format!("Removed label {label} from host {name}"))
        };
        self.events.record(Level::Info, kind, Some(name), None, message).await;
        Ok(host)
    }

    /// The OSDs Ceph has under `host` (by CRUSH host), destroyed ones left out.
    pub async fn osds_of_host(&self, host: &str) -> Result<Vec<u32>, DaemonError> {
        let state = self.ceph.state().await.map_err(DaemonError::cluster_unreadable)?;
        let mut ids: Vec<u32> = state
            .osds
            .iter()
            .filter(|o| !o.destroyed && o.crush_host.as_deref().is_some_and(|h| same_crush_host(h, host)))
            .map(|o| o.id)
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    /// `host rm`: a host Ceph still has OSDs on is kept unless told to forget them.
    pub async fn check_host_forgettable(&self, host: &str, forget_osds: bool) -> Result<(), DaemonError> {
        self.store.host(host).await?;
        if forget_osds {
            return Ok(());
        }
        let ids = match self.osds_of_host(host).await {
            Ok(ids) => ids,
            Err(e) => {
                return Err(DaemonError::CannotAct(format!(
                    "not removing host {host}: cannot check it holds no OSDs ({e}); --forget-osds removes it anyway"
                )))
            }
        };
        if ids.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = ids.iter().map(|i| format!("osd.{i}")).collect();
        Err(DaemonError::Conflict(format!(
            "host {host} still has OSDs in the cluster: {}; drain it first (`osdkeeper host drain {host}`), \
             or --forget-osds to stop managing it with its OSDs left as they are",
            names.join(", ")
        )))
    }
}

/// The agent's host name names this host: the same, or the same short name
/// (`f5-422-01` and `f5-422-01.internal.pcfe.net`).
fn same_host(reported: &str, name: &str) -> bool {
    let short = |h: &str| h.split('.').next().unwrap_or(h).to_ascii_lowercase();
    reported.eq_ignore_ascii_case(name) || short(reported) == short(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_names_its_host_by_full_or_short_name() {
        assert!(same_host("f5-422-01", "f5-422-01"));
        assert!(same_host("f5-422-01.internal.pcfe.net", "f5-422-01"));
        assert!(same_host("f5-422-01", "F5-422-01.internal.pcfe.net"));
        assert!(!same_host("f5-422-02", "f5-422-01"));
        assert!(!same_host("f5-422-0", "f5-422-01"));
    }

    #[test]
    fn agent_addresses() {
        assert!(check_addr("10.0.0.5:8741", false, false).is_ok());
        assert!(check_addr("http://10.0.0.5:8741", false, false).is_ok());
        // Accepted once, then every poll failed: refused with the reason instead.
        let e = check_addr("https://10.0.0.5:8741", false, false).unwrap_err().to_string();
        assert!(e.contains("need the CA"), "{e}");
        assert!(check_addr("https://10.0.0.5:8741", true, true).is_ok(), "with the agents' CA");
        assert!(check_addr("ftp://h:1", true, false).is_err());
        assert!(check_addr("h:notaport", false, false).is_err());
        assert!(check_addr("h;rm:1", false, false).is_err());
    }

    #[test]
    fn the_agent_token_never_goes_out_in_clear() {
        for clear in ["10.0.0.5:8741", "http://10.0.0.5:8741", "http://f5-422-01:8741"] {
            let e = check_addr(clear, true, true).unwrap_err().to_string();
            assert!(e.contains("in clear"), "{clear}: {e}");
        }
        assert!(check_addr("127.0.0.1:8741", false, true).is_ok(), "loopback stays on the machine");
        assert!(check_addr("http://localhost:8741", false, true).is_ok());
    }
}
