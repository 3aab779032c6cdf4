//! Applying specs: validate every document, answer a dry-run at once from
//! the stored inventories (optionally refreshed first), store the specs.

use std::collections::HashMap;

use super::Specs;
use crate::clock::now_ms;
use crate::daemon::inventory::view::Snapshot;
use crate::daemon::DaemonError;
use crate::domain::ceph_release::Release;
use crate::domain::event::{EventKind, Level};
use crate::domain::plan::preview;
use crate::domain::removal::Phase as RemovalPhase;
use crate::domain::spec::{
    check_placement, parse_spec_file_as, parse_specs_and_hosts, HostRef, HostSpec, SpecDocument, SpecError,
};
use crate::domain::swap::propose::propose;
use crate::store::RemovalCodec;
use crate::store::{AppliedSpec, InventoryHead, StoredSpec};
use crate::wire::agent::AGENT_PORT;
use crate::wire::api::preview::{PreviewDoc, SpecNote};
use crate::wire::api::specs::{
    ApplyQuery, ApplyResponse, HostFacts, HostSpecAction, RefreshFailure, SpecRecord, SwapProposal,
};
use crate::wire::preview_json::PreviewReport;

impl Specs {
    /// `apply -i FILE [--dry-run] [--refresh] [--allow-empty-placement]`.
    /// Parsing and planning run off the async runtime (`planning`).
    pub async fn apply(&self, text: &str, q: &ApplyQuery) -> Result<ApplyResponse, DaemonError> {
        let ApplyQuery { dry_run, refresh, allow_empty_placement, no_check } = *q;
        let text = text.to_owned();
        let release = self.cluster.planning_release();
        let read = self.planning.run(move || parse_specs_and_hosts(&text, release, AGENT_PORT)).await?;
        let (docs, host_docs) = read.map_err(|e| DaemonError::Invalid(e.to_string()))?;
        if docs.is_empty() && host_docs.is_empty() {
            return Err(DaemonError::Invalid("the body holds no YAML document".into()));
        }
        let mut errors: Vec<SpecError> = docs.iter().filter_map(|d| d.spec.as_ref().err().cloned()).collect();
        errors.extend(host_docs.iter().filter_map(|h| h.as_ref().err().cloned()));
        if !errors.is_empty() {
            errors.sort_by_key(|e| e.doc);
            return Err(DaemonError::InvalidSpecs(errors));
        }
        // The OSD specs may be for the file's hosts: they are planned as if
        // the hosts were added, and the hosts are added (as cephadm applies
        // them, first) only once the plan holds, so that a refused apply
        // leaves no host behind.
        let host_specs: Vec<HostSpec> = host_docs.into_iter().flatten().collect();
        let host_outcomes = if host_specs.is_empty() {
            Vec::new()
        } else {
            self.inventory.apply_host_specs(&host_specs, true, false).await?
        };
        let mut refresh_failures = Vec::new();
        if refresh {
            let snapshot = self.snapshot().await?;
            let hosts: Vec<String> = snapshot.hosts.iter().map(|h| h.host.name.clone()).collect();
            let matching: Vec<String> = hosts
                .into_iter()
                .filter(|name| {
                    docs.iter().filter_map(|d| d.spec.as_ref().ok()).any(|s| {
                        let labels = snapshot
                            .hosts
                            .iter()
                            .find(|h| h.host.name == *name)
                            .map(|h| h.host.labels.as_slice())
                            .unwrap_or(&[]);
                        let r = crate::domain::spec::HostRef { name, labels };
                        !s.placement.matching_hosts(&[r]).is_empty()
                    })
                })
                .collect();
            refresh_failures = self.inventory.refresh(&matching, self.refresh_timeout).await?;
        }
        let snapshot = self.snapshot().await?;
        let now = now_ms();
        let pending = host_outcomes
            .iter()
            .filter(|h| h.action != HostSpecAction::Unchanged)
            .map(|h| (h.name.clone(), h.labels.clone()))
            .collect();
        let planned = self.planning.run(move || plan(docs, snapshot, now, pending)).await?;
        let Planned { snapshot, mut doc, to_store, empty_placements } = planned?;
        if !dry_run && !allow_empty_placement && !empty_placements.is_empty() {
            return Err(DaemonError::Invalid(format!(
                "{}; nothing was applied (see it with --dry-run; apply with --allow-empty-placement to store it anyway)",
                empty_placements.join("; ")
            )));
        }
        let age_of = |inv: &InventoryHead| (now - inv.taken_at) as f64 / 1000.0;
        let hosts = snapshot
            .hosts
            .iter()
            .map(|h| HostFacts {
                name: h.host.name.clone(),
                inventory_age_s: h.inventory.as_ref().map(age_of),
                unreachable_since: h.host.unreachable_since,
                last_error: h.host.last_error.clone(),
                can_create_osds: h.inventory.as_ref().map(|i| i.can_create_osds),
            })
            .collect();
        // What the rows cannot know: the last attempt on a row's disks failed.
        let failures = crate::daemon::deploy::deploy_failures(&self.store).await?;
        for row in doc.preview.iter_mut().filter(|_| !failures.is_empty()) {
            for disk in &row.data {
                if let Some(why) = failures.get(&(row.host.clone(), disk.clone())) {
                    row.warnings.push(format!("making an OSD on {disk} failed last time: {why}"));
                }
            }
        }
        let mut answer = ApplyResponse {
            preview: doc,
            dry_run,
            hosts,
            hosts_without_inventory: snapshot.without_inventory().into_iter().map(str::to_string).collect(),
            refresh_failures: refresh_failures
                .into_iter()
                .map(|(host, error)| RefreshFailure { host, error })
                .collect(),
            empty_placements,
            stored: None,
            swap_proposals: Vec::new(),
            host_specs: host_outcomes,
        };
        answer.swap_proposals = self.swap_proposals(&answer.preview).await?;
        if !dry_run {
            if !host_specs.is_empty() {
                answer.host_specs = self.inventory.apply_host_specs(&host_specs, false, !no_check).await?;
            }
            answer.stored = Some(self.store_specs(to_store, now).await?);
        }
        Ok(answer)
    }

    /// For each host where the rows make OSDs while OSDs there are being
    /// removed: the swap that moves their data once.
    async fn swap_proposals(&self, doc: &PreviewDoc) -> Result<Vec<SwapProposal>, DaemonError> {
        let removals = self.store.ops::<RemovalCodec>().active().await?;
        let mut hosts: Vec<&str> = doc.preview.iter().map(|r| r.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let mut out = Vec::new();
        for host in hosts {
            let devices: Vec<String> =
                doc.preview.iter().filter(|r| r.host == host).flat_map(|r| r.data.iter().cloned()).collect();
            let removing: Vec<(u32, RemovalPhase)> =
                removals.iter().filter(|r| r.state.host == host).map(|r| (r.state.osd_id, r.state.phase)).collect();
            if let Some(p) = propose(host, &devices, &removing) {
                out.push(SwapProposal {
                    host: p.host.clone(),
                    osds: p.osds.clone(),
                    devices: p.devices.clone(),
                    command: p.command(),
                    text: p.text(),
                });
            }
        }
        Ok(out)
    }

    async fn store_specs(&self, to_store: Vec<StoredSpec>, now: i64) -> Result<Vec<SpecRecord>, DaemonError> {
        let stored = self.store.put_specs(&to_store, now).await?;
        for s in &stored {
            let what = if s.unmanaged { " (unmanaged: osdkeeper will not create OSDs for it)" } else { "" };
            self.events
                .record(
                    Level::Info,
                    EventKind::SpecApplied,
                    None,
                    Some(&s.service_name),
                    format!("Scheduled {} update... (version {}){what}", s.service_name, s.version),
                )
                .await;
        }
        self.reconciler.wake();
        self.read_model.notify_current(crate::daemon::live::Live::Specs).await;
        Ok(stored.into_iter().map(SpecRecord::from).collect())
    }

    pub async fn remove_spec(&self, service_name: &str) -> Result<SpecRecord, DaemonError> {
        let removed = self.store.remove_spec(service_name, now_ms()).await?;
        self.events
            .record(
                Level::Info,
                EventKind::SpecRemoved,
                None,
                Some(service_name),
                format!("Removed spec {service_name}; its OSDs stay, no new ones will be created"),
            )
            .await;
        Ok(removed.into())
    }
}

/// What the blocking part of an apply hands back: the snapshot it took, the
/// dry-run, and the specs to store if it is not one.
struct Planned {
    snapshot: Snapshot,
    doc: PreviewDoc,
    to_store: Vec<StoredSpec>,
    /// Why a document's label or pattern selects no host (needs confirming).
    empty_placements: Vec<String>,
}

/// Plans valid documents on the snapshot: the dry-run, or the placement
/// and planning errors (cephadm raises on such a host too).
/// `pending`: the hosts a dry-run's host specs would add or relabel, with
/// their labels then, which placements are checked against too.
fn plan(
    docs: Vec<SpecDocument>,
    snapshot: Snapshot,
    now: i64,
    pending: Vec<(String, Vec<String>)>,
) -> Result<Planned, DaemonError> {
    let mut known: Vec<HostRef<'_>> = snapshot
        .hosts
        .iter()
        .filter(|h| !pending.iter().any(|(name, _)| *name == h.host.name))
        .map(|h| HostRef { name: &h.host.name, labels: &h.host.labels })
        .collect();
    known.extend(pending.iter().map(|(name, labels)| HostRef { name, labels }));
    let mut refusals = Vec::new();
    let mut empty = Vec::new();
    for d in &docs {
        let spec = d.spec.as_ref().expect("validated");
        if let Some(problem) = check_placement(&spec.placement, &known) {
            match (problem.refusal(&known), problem.warning()) {
                (Some(refusal), _) => refusals.push(refusal.locate(d.doc, d.line, spec.service_id.clone())),
                (None, Some(warning)) => empty.push((d.doc, spec.service_id.clone(), warning.to_string())),
                (None, None) => {}
            }
        }
    }
    if !refusals.is_empty() {
        return Err(DaemonError::InvalidSpecs(refusals));
    }
    let planned = preview(&docs, &snapshot.view);
    if !planned.errors.is_empty() {
        return Err(DaemonError::InvalidSpecs(planned.errors));
    }
    // By name: a row per host and spec, thousands of hosts.
    let taken_at: HashMap<&str, i64> =
        snapshot.hosts.iter().filter_map(|h| Some((h.host.name.as_str(), h.inventory.as_ref()?.taken_at))).collect();
    let age = |host: &str| -> Option<f64> { taken_at.get(host).map(|t| (now - t) as f64 / 1000.0) };
    let mut doc = PreviewReport { preview: &planned, docs: &docs, view: &snapshot.view, inventory_age: &age }.doc();
    let mut empty_placements = Vec::new();
    for (index, service_id, warning) in empty {
        let name = service_id.as_deref().map(|id| format!("osd.{id}: ")).unwrap_or_default();
        empty_placements.push(format!("{name}{warning}"));
        doc.notes.push(SpecNote { doc: index, service_id, note: format!("NO HOST MATCHES: {warning}") });
    }
    let to_store = specs_to_store(&docs);
    Ok(Planned { snapshot, doc, to_store, empty_placements })
}

/// The documents to store (all but `preview_only` ones), each with its
/// source text and its value as JSON.
fn specs_to_store(docs: &[SpecDocument]) -> Vec<StoredSpec> {
    let mut to_store = Vec::new();
    for d in docs {
        let spec = d.spec.as_ref().expect("validated");
        if spec.preview_only {
            continue;
        }
        let value = crate::domain::yaml11::load_all(&d.source)
            .ok()
            .and_then(|v| v.into_iter().find(|x| !x.value.is_null()))
            .map(|x| x.value.to_json())
            .unwrap_or(serde_json::Value::Null);
        to_store.push(StoredSpec {
            service_name: spec.service_name(),
            service_id: spec.service_id.clone(),
            source: d.source.clone(),
            spec_json: value.to_string(),
            unmanaged: spec.unmanaged,
        });
    }
    to_store
}

/// Re-reads a stored spec document as the cephadm of `release` reads it.
pub fn stored_document(record: &AppliedSpec, index: usize, release: Release) -> Result<SpecDocument, String> {
    let mut docs = parse_spec_file_as(&record.source, release).map_err(|e| e.to_string())?;
    let mut d = docs.pop().ok_or_else(|| format!("stored spec {} has no document", record.service_name))?;
    d.doc = index;
    Ok(d)
}
