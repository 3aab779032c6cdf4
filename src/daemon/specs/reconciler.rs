//! Creates OSDs for applied specs: for each managed spec and each host where
//! the plan would create OSDs, starts a deployment (`daemon::deploy`) of
//! the planned ceph-volume commands. It acts again for a spec on a host
//! only when the spec or the host's inventory changed since the last run
//! (`domain::reconcile::should_run`, cephadm's `osdspec_needs_apply`), and
//! never while a deployment of that spec on that host is under way.

use crate::domain::event::{EventKind, Level};

use std::collections::HashMap;

use super::Specs;
use crate::clock::now_ms;
use crate::daemon::inventory::view::HostState;
use crate::daemon::DaemonError;
use crate::domain::deploy::Deployment;
use crate::domain::operation::NewOperation;
use crate::domain::plan::preview;
use crate::domain::reconcile::{creates_osds, deploy_steps, probe_marker, run_key, should_run, LastRun};
use crate::store::{DeploymentCodec, SpecHostRun};

impl Specs {
    /// One pass over every managed spec.
    pub async fn reconcile_once(&self) -> Result<(), DaemonError> {
        let records: Vec<_> = self.store.specs().await?.into_iter().filter(|r| !r.unmanaged).collect();
        if records.is_empty() {
            return Ok(());
        }
        let snapshot = self.snapshot().await?;
        let parsed = self.parsed.clone();
        let release = self.cluster.planning_release();
        // Parsed (once per stored version) and planned off the async runtime (`planning`).
        let (records, versions, docs, snapshot, plan) = self
            .planning
            .run(move || {
                let mut docs = Vec::new();
                let mut versions = Vec::new();
                for (i, r) in records.iter().enumerate() {
                    match parsed.document(r, i, release) {
                        Ok(d) => {
                            docs.push(d);
                            versions.push(i);
                        }
                        Err(e) => tracing::error!("stored spec {} is unreadable: {e}", r.service_name),
                    }
                }
                parsed.keep_only(&records);
                let plan = preview(&docs, &snapshot.view);
                (records, versions, docs, snapshot, plan)
            })
            .await?;
        let states: HashMap<&str, &HostState> = snapshot.hosts.iter().map(|h| (h.host.name.as_str(), h)).collect();
        for e in &plan.errors {
            tracing::warn!("spec {} cannot be planned: {e}", e.service_id.as_deref().unwrap_or("<unnamed>"));
        }
        // The deployer is woken once, after every host's deployment is
        // stored: woken at the first, its round would see that one alone
        // and the other hosts' would wait for the end of its ceph-volume run.
        let mut started = false;
        let result: Result<(), DaemonError> = async {
            for row in &plan.rows {
                let record = &records[versions[row.spec]];
                let host_view = &snapshot.view.hosts[row.host];
                let Some(state) = states.get(host_view.name.as_str()) else { continue };
                let Some(inv) = &state.inventory else { continue };
                if !creates_osds(row) {
                    continue;
                }
                let Ok(spec) = &docs[row.spec].spec else { continue };
                // A spec waiting for probes runs again when a probe comes in.
                let fingerprint = match &spec.probe {
                    Some(_) => format!("{}|probes:{}", inv.fingerprint, probe_marker(host_view)),
                    None => inv.fingerprint.clone(),
                };
                let key = run_key(row, host_view);
                let last = self.store.spec_host_run(&record.service_name, &host_view.name).await?;
                let last = last
                    .as_ref()
                    .map(|l| LastRun { spec_version: l.spec_version, inventory_fingerprint: &l.inventory_fingerprint });
                if !should_run(last, record.version, &fingerprint) {
                    continue;
                }
                let run = |outcome: String| SpecHostRun {
                    service_name: record.service_name.clone(),
                    host: host_view.name.clone(),
                    spec_version: record.version,
                    inventory_fingerprint: fingerprint.clone(),
                    command: key.clone(),
                    outcome,
                    at: now_ms(),
                };
                if !inv.can_create_osds {
                    let why = inv.note.clone().unwrap_or_else(|| "the agent cannot create OSDs".into());
                    self.events
                        .record(
                            Level::Warning,
                            EventKind::OsdCreateRefused,
                            Some(&host_view.name),
                            Some(&record.service_name),
                            format!("Cannot create OSDs of {} on {}: {why}", record.service_name, host_view.name),
                        )
                        .await;
                    self.store.put_spec_host_run(&run(format!("refused: {why}"))).await?;
                    continue;
                }
                let subject = crate::domain::deploy::subject(&host_view.name, &record.service_name);
                if let Some(active) = self.store.ops::<DeploymentCodec>().latest_on(&subject).await? {
                    if !active.state.phase.is_finished() {
                        // One at a time per spec and host; this one's end wakes us.
                        continue;
                    }
                }
                let deployment = Deployment::new(
                    host_view.name.clone(),
                    record.service_name.clone(),
                    spec.service_id.clone(),
                    record.version,
                    key.clone(),
                    spec.crush_device_class.clone(),
                    deploy_steps(spec, row),
                );
                let new = NewOperation { subject, host: Some(host_view.name.clone()), state: deployment, actor: None };
                let busy = |s: &str| format!("{s} is already being deployed");
                match self.store.ops::<DeploymentCodec>().add(&[new], now_ms(), busy, |_, _| {}).await {
                    Ok(recs) => {
                        self.store.put_spec_host_run(&run(format!("deploying #{}", recs[0].number))).await?;
                        started = true;
                    }
                    // Started meanwhile by another pass: it will carry on.
                    Err(crate::store::StoreError::Conflict(m)) => tracing::debug!("{m}"),
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(())
        }
        .await;
        if started {
            self.deployer.wake();
        }
        result
    }
}
