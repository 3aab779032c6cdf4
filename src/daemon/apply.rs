//! Applying specs: validate every document, answer a dry-run at once from
//! the stored inventories (optionally refreshed first), store the specs.

use std::time::Duration;

use serde_json::{json, Value};

use super::{Daemon, DaemonError};
use crate::clock::now_ms;
use crate::domain::plan::preview;
use crate::domain::spec::{parse_spec_file, SpecDocument, SpecError};
use crate::render::preview::{ErrorJson, PreviewReport};
use crate::store::{Level, SpecRecord, StoredSpec};

/// The answer to an apply or a dry-run, as JSON: the preview (the same shape
/// as `osdkeeper preview --format json`, each row with its inventory age),
/// plus what the daemon knows about hosts and what it stored.
pub struct ApplyOutcome {
    pub body: Value,
    pub stored: Vec<SpecRecord>,
}

/// Documents that failed validation (the apply changes nothing).
#[derive(Debug)]
pub struct InvalidSpecs(pub Vec<SpecError>);

impl InvalidSpecs {
    pub fn body(&self) -> Value {
        let errors: Vec<ErrorJson<'_>> = self.0.iter().map(ErrorJson::from).collect();
        json!({
            "error": format!("{} invalid document(s); nothing was applied: {}", self.0.len(),
                self.0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ")),
            "errors": errors,
        })
    }
}

pub enum ApplyError {
    Invalid(InvalidSpecs),
    Other(DaemonError),
}

impl From<DaemonError> for ApplyError {
    fn from(e: DaemonError) -> Self {
        ApplyError::Other(e)
    }
}

impl Daemon {
    /// `apply -i FILE [--dry-run] [--refresh]`.
    pub async fn apply(&self, text: &str, dry_run: bool, refresh: bool) -> Result<ApplyOutcome, ApplyError> {
        let docs = parse_spec_file(text).map_err(|e| DaemonError::BadRequest(e.to_string()))?;
        if docs.is_empty() {
            return Err(DaemonError::BadRequest("the body holds no YAML document".into()).into());
        }
        let errors: Vec<SpecError> = docs.iter().filter_map(|d| d.spec.as_ref().err().cloned()).collect();
        if !errors.is_empty() {
            return Err(ApplyError::Invalid(InvalidSpecs(errors)));
        }
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
            refresh_failures =
                self.refresh(&matching, Duration::from_secs(self.config.poll_timeout.as_secs() + 5)).await?;
        }
        let snapshot = self.snapshot().await?;
        let planned = preview(&docs, &snapshot.view);
        let now = now_ms();
        let age = |host: &str| -> Option<f64> {
            let h = snapshot.hosts.iter().find(|h| h.host.name == host)?;
            h.inventory.as_ref().map(|i| (now - i.taken_at) as f64 / 1000.0)
        };
        let report = PreviewReport { preview: &planned, docs: &docs, view: &snapshot.view, inventory_age: &age };
        let mut body = serde_json::to_value(&report).map_err(|e| DaemonError::Internal(e.to_string()))?;
        if !planned.errors.is_empty() {
            // Valid documents whose planning failed on some host (cephadm raises there too).
            return Err(ApplyError::Invalid(InvalidSpecs(planned.errors.clone())));
        }
        let hosts_json: Vec<Value> = snapshot
            .hosts
            .iter()
            .map(|h| {
                json!({
                    "name": h.host.name,
                    "inventory_age_s": h.inventory.as_ref().map(|i| (now - i.taken_at) as f64 / 1000.0),
                    "unreachable_since": h.host.unreachable_since,
                    "last_error": h.host.last_error,
                    "can_create_osds": h.inventory.as_ref().map(|i| i.can_create_osds),
                })
            })
            .collect();
        body["dry_run"] = json!(dry_run);
        body["hosts"] = json!(hosts_json);
        body["hosts_without_inventory"] = json!(snapshot.without_inventory());
        body["refresh_failures"] =
            json!(refresh_failures.iter().map(|(h, e)| json!({"host": h, "error": e})).collect::<Vec<_>>());
        if dry_run {
            return Ok(ApplyOutcome { body, stored: Vec::new() });
        }
        let stored = self.store_specs(&docs, now).await?;
        body["stored"] = serde_json::to_value(&stored).map_err(|e| DaemonError::Internal(e.to_string()))?;
        Ok(ApplyOutcome { body, stored })
    }

    async fn store_specs(&self, docs: &[SpecDocument], now: i64) -> Result<Vec<SpecRecord>, DaemonError> {
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
        let stored = self.store.put_specs(&to_store, now).await?;
        for s in &stored {
            let what = if s.unmanaged { " (unmanaged: osdkeeper will not create OSDs for it)" } else { "" };
            self.event(
                Level::Info,
                "spec-applied",
                None,
                Some(&s.service_name),
                format!("Scheduled {} update... (version {}){what}", s.service_name, s.version),
            )
            .await;
        }
        self.reconcile_now.notify_one();
        let _ = self.live.send(super::live::Live::Specs);
        Ok(stored)
    }

    pub async fn remove_spec(&self, service_name: &str) -> Result<SpecRecord, DaemonError> {
        let removed = self.store.remove_spec(service_name, now_ms()).await?;
        self.event(
            Level::Info,
            "spec-removed",
            None,
            Some(service_name),
            format!("Removed spec {service_name}; its OSDs stay, no new ones will be created"),
        )
        .await;
        Ok(removed)
    }
}

/// Re-reads a stored spec document.
pub fn stored_document(record: &SpecRecord, index: usize) -> Result<SpecDocument, String> {
    let mut docs = parse_spec_file(&record.source).map_err(|e| e.to_string())?;
    let mut d = docs.pop().ok_or_else(|| format!("stored spec {} has no document", record.service_name))?;
    d.doc = index;
    Ok(d)
}
