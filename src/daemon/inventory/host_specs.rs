//! The host specs of an applied file (`service_type: host`), as cephadm's
//! `ceph orch apply -i` takes them: new hosts added, the spec's labels
//! added to known ones (never taken away, as in cephadm).
//! All of a file's hosts are judged first and added in one transaction, so
//! a file of 2000 hosts is one commit (on the store in RADOS a commit costs
//! ~13 ms) and a file with one wrong host adds none.

use std::collections::{BTreeSet, HashMap};

use futures::StreamExt;

use super::hosts::{check_addr, check_label};
use super::Inventory;
use crate::clock::now_ms;
use crate::daemon::DaemonError;
use crate::domain::event::{EventKind, Level};
use crate::domain::spec::HostSpec;
use crate::store::NewHost;
use crate::wire::api::specs::{HostSpecAction, HostSpecOutcome};

/// How many agents are asked at once whether they are who the specs say.
const CHECKS_AT_ONCE: usize = 32;

impl Inventory {
    /// What applying `specs` does to the hosts; done unless `dry_run`.
    /// With `check`, every new host's agent must answer first (as `host
    /// add` asks it), or nothing is added.
    pub async fn apply_host_specs(
        &self,
        specs: &[HostSpec],
        dry_run: bool,
        check: bool,
    ) -> Result<Vec<HostSpecOutcome>, DaemonError> {
        let known: HashMap<String, _> = self.store.hosts().await?.into_iter().map(|h| (h.name.clone(), h)).collect();
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        let mut outcomes = Vec::with_capacity(specs.len());
        for s in specs {
            if !seen.insert(s.hostname.as_str()) {
                problems.push(format!("host {} is in the file twice", s.hostname));
            }
            if let Err(e) = check_addr(&s.addr, self.config.agent_ca.is_some(), self.config.sends_agent_secrets()) {
                problems.push(format!("host {}: {e}", s.hostname));
            }
            problems.extend(
                s.labels.iter().filter_map(|l| check_label(l).err()).map(|e| format!("host {}: {e}", s.hostname)),
            );
            let action = match known.get(&s.hostname) {
                None => HostSpecAction::Add,
                Some(h) if h.addr != s.addr => {
                    problems.push(format!(
                        "host {} is known with agent {}, the spec says {}: `host rm` it first to move it",
                        s.hostname, h.addr, s.addr
                    ));
                    HostSpecAction::Unchanged
                }
                // As cephadm: a known host's labels are added to, never taken away.
                Some(h) if s.labels.iter().any(|l| !h.labels.contains(l)) => HostSpecAction::Relabel,
                Some(_) => HostSpecAction::Unchanged,
            };
            let mut labels = known.get(&s.hostname).map(|h| h.labels.clone()).unwrap_or_default();
            labels.extend(s.labels.iter().filter(|l| !labels.contains(l)).cloned().collect::<Vec<_>>());
            outcomes.push(HostSpecOutcome { name: s.hostname.clone(), addr: s.addr.clone(), labels, action });
        }
        if !problems.is_empty() {
            return Err(DaemonError::Invalid(format!("no host was added: {}", problems.join("; "))));
        }
        if dry_run {
            return Ok(outcomes);
        }
        let new: Vec<&HostSpecOutcome> = outcomes.iter().filter(|o| o.action == HostSpecAction::Add).collect();
        if check {
            // Owned: a stream of borrowed items does not make a future that
            // axum's handlers can hold (the compiler cannot prove it `Send`).
            let asks: Vec<(String, String)> = new.iter().map(|o| (o.name.clone(), o.addr.clone())).collect();
            let failed: Vec<String> = futures::stream::iter(asks)
                .map(|(name, addr)| async move { self.check_agent(&name, &addr).await.err() })
                .buffer_unordered(CHECKS_AT_ONCE)
                .filter_map(|e| std::future::ready(e.map(|e| e.to_string())))
                .collect()
                .await;
            if !failed.is_empty() {
                return Err(DaemonError::CannotAct(format!("no host was added: {}", failed.join("; "))));
            }
        }
        let rows: Vec<NewHost> = new
            .iter()
            .map(|o| NewHost {
                name: o.name.clone(),
                addr: o.addr.clone(),
                labels: o.labels.clone(),
                event: self.added_event(&o.name, &o.addr),
            })
            .collect();
        for (row, added) in rows.iter().zip(self.store.add_hosts(&rows, now_ms()).await?) {
            match added {
                Some((_, event)) => self.events.told(event),
                // Added by another request since the hosts were read.
                None => tracing::warn!(host = row.name, "host spec: the host was added meanwhile; left as it is"),
            }
        }
        for o in outcomes.iter().filter(|o| o.action == HostSpecAction::Relabel) {
            self.store.set_labels(&o.name, &o.labels).await?;
            let message = format!("Labels of host {} are now [{}] (host spec)", o.name, o.labels.join(", "));
            self.events.record(Level::Info, EventKind::HostLabelAdded, Some(&o.name), None, message).await;
        }
        if !rows.is_empty() {
            self.workers.poller.wake();
        }
        if outcomes.iter().any(|o| o.action == HostSpecAction::Relabel) {
            self.workers.reconciler.wake();
        }
        Ok(outcomes)
    }
}
