//! Creates OSDs for applied specs: for each managed spec and each host where
//! the plan would create OSDs, asks the host's agent to run the planned
//! ceph-volume command, records the outcome as events and refreshes the
//! host's inventory. It acts again for a spec on a host only when the spec
//! or the host's inventory changed since the last run (cephadm's
//! `osdspec_needs_apply`), so a failing command is not retried in a loop.

use crate::domain::event::{EventKind, Level};

use super::apply::stored_document;
use super::{Daemon, DaemonError};
use crate::clock::now_ms;
use crate::domain::plan::preview;
use crate::domain::reconcile::{creates_osds, run_key, should_run, LastRun};
use crate::store::SpecHostRun;
use crate::wire::agent::CephVolumeRequest;

impl Daemon {
    /// One pass over every managed spec.
    pub async fn reconcile_once(&self) -> Result<(), DaemonError> {
        let records: Vec<_> = self.store.specs().await?.into_iter().filter(|r| !r.unmanaged).collect();
        if records.is_empty() {
            return Ok(());
        }
        let mut docs = Vec::new();
        let mut versions = Vec::new();
        for (i, r) in records.iter().enumerate() {
            match stored_document(r, i) {
                Ok(d) => {
                    docs.push(d);
                    versions.push(r);
                }
                Err(e) => tracing::error!("stored spec {} is unreadable: {e}", r.service_name),
            }
        }
        let snapshot = self.snapshot().await?;
        let plan = preview(&docs, &snapshot.view);
        for e in &plan.errors {
            tracing::warn!("spec {} cannot be planned: {e}", e.service_id.as_deref().unwrap_or("<unnamed>"));
        }
        for row in &plan.rows {
            let record = versions[row.spec];
            let host_view = &snapshot.view.hosts[row.host];
            let Some(state) = snapshot.hosts.iter().find(|h| h.host.name == host_view.name) else { continue };
            let Some(inv) = &state.inventory else { continue };
            if !creates_osds(row) {
                continue;
            }
            let key = run_key(row, host_view);
            let last = self.store.spec_host_run(&record.service_name, &host_view.name).await?;
            let last = last.as_ref().map(|l| LastRun {
                spec_version: l.spec_version,
                inventory_fingerprint: &l.inventory_fingerprint,
                key: &l.command,
                succeeded: l.outcome == "ok",
            });
            if !should_run(last, record.version, &inv.fingerprint, &key) {
                continue;
            }
            let outcome = if !inv.can_create_osds {
                let why = inv.note.clone().unwrap_or_else(|| "the agent cannot create OSDs".into());
                self.event(
                    Level::Warning,
                    EventKind::OsdCreateRefused,
                    Some(&host_view.name),
                    Some(&record.service_name),
                    format!("Cannot create OSDs of {} on {}: {why}", record.service_name, host_view.name),
                )
                .await;
                format!("refused: {why}")
            } else {
                let service_id = docs[row.spec].spec.as_ref().ok().and_then(|s| s.service_id.clone());
                match self.create_osds(&state.host, &record.service_name, service_id, &row.commands).await {
                    Ok(outcome) => outcome,
                    // The agent could not be asked: try again on the next pass.
                    Err(()) => continue,
                }
            };
            self.store
                .put_spec_host_run(&SpecHostRun {
                    service_name: record.service_name.clone(),
                    host: host_view.name.clone(),
                    spec_version: record.version,
                    inventory_fingerprint: inv.fingerprint.clone(),
                    command: key,
                    outcome,
                    at: now_ms(),
                })
                .await?;
            // The next poll would see the new OSDs too; a failure here is the poller's to report.
            if let Err(e) = self.poll_host(&state.host).await {
                tracing::warn!(host = %host_view.name, "cannot refresh the inventory after creating OSDs: {e}");
            }
        }
        Ok(())
    }

    /// Runs the commands; Err when the agent could not be reached at all.
    #[tracing::instrument(skip_all, fields(host = %host.name, service))]
    async fn create_osds(
        &self,
        host: &crate::wire::api::hosts::Host,
        service: &str,
        service_id: Option<String>,
        commands: &[String],
    ) -> Result<String, ()> {
        for cmd in commands {
            self.event(
                Level::Info,
                EventKind::OsdCreate,
                Some(&host.name),
                Some(service),
                format!("Deploying OSDs of {service} on {}: ceph-volume {cmd}", host.name),
            )
            .await;
            let request = CephVolumeRequest {
                args: cmd.split(' ').map(str::to_string).collect(),
                osdspec_affinity: service_id.clone().filter(|s| !s.is_empty()),
            };
            match self.agents.ceph_volume(host, &request).await {
                Ok(r) if r.exit_code == 0 || r.stderr.contains(", it is already prepared") => {
                    self.event(
                        Level::Info,
                        EventKind::OsdCreated,
                        Some(&host.name),
                        Some(service),
                        format!("Created OSDs of {service} on {}", host.name),
                    )
                    .await;
                }
                Ok(r) => {
                    let tail: String = r
                        .stderr
                        .lines()
                        .rev()
                        .take(3)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join(" / ");
                    let msg = format!("ceph-volume failed on {} (exit {}): {tail}", host.name, r.exit_code);
                    self.event(Level::Error, EventKind::OsdCreateFailed, Some(&host.name), Some(service), msg.clone())
                        .await;
                    return Ok(format!("failed: {msg}"));
                }
                Err(e @ crate::agent_client::AgentError::Refused { .. }) => {
                    let msg = format!("The agent on {} refused to run ceph-volume: {e}", host.name);
                    self.event(Level::Error, EventKind::OsdCreateFailed, Some(&host.name), Some(service), msg.clone())
                        .await;
                    return Ok(format!("failed: {msg}"));
                }
                Err(e) => {
                    self.event(
                        Level::Warning,
                        EventKind::OsdCreateDeferred,
                        Some(&host.name),
                        Some(service),
                        format!("Cannot run ceph-volume on {} now, will retry: {e}", host.name),
                    )
                    .await;
                    return Err(());
                }
            }
        }
        Ok("ok".into())
    }
}
