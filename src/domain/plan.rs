//! The dry-run: for every valid spec and every host its placement matches,
//! the devices cephadm would take, the ceph-volume commands, the OSDs they
//! make, and why every other device was not taken. The daemon's reconciler
//! runs the same function and executes the commands.

use std::collections::HashMap;

use crate::domain::command::{ceph_volume_commands, raw_ratio_error};
use crate::domain::inventory::ClusterView;
use crate::domain::osd_layout::{planned_osds, PlannedOsd};
use crate::domain::selection::{select, Skipped};
use crate::domain::spec::{DriveSpec, HostRef, SpecDocument, SpecError};

/// The plan of one spec on one host.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    pub doc: usize,
    pub service_id: Option<String>,
    pub service_name: String,
    pub host: String,
    pub data: Vec<String>,
    pub db: Vec<String>,
    pub wal: Vec<String>,
    pub journal: Vec<String>,
    pub commands: Vec<String>,
    pub preview_commands: Vec<String>,
    pub osds: Result<Vec<PlannedOsd>, String>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
}

/// Everything a dry-run shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preview {
    pub errors: Vec<SpecError>,
    /// Sorted by (service_id, host) like cephadm's preview.
    pub rows: Vec<PlanRow>,
    /// Spec-level notes, by document.
    pub notes: Vec<(usize, Option<String>, String)>,
}

impl Preview {
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Plans every document against the cluster view.
pub fn preview(docs: &[SpecDocument], view: &ClusterView) -> Preview {
    let schedulable: Vec<HostRef<'_>> = view
        .hosts
        .iter()
        .filter(|h| h.schedulable())
        .map(|h| HostRef {
            name: &h.name,
            labels: &h.labels,
        })
        .collect();
    let by_name: HashMap<&str, usize> = view
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.name.as_str(), i))
        .collect();
    let mut out = Preview::default();
    for d in docs {
        let spec = match &d.spec {
            Ok(spec) => spec,
            Err(e) => {
                out.errors.push(e.clone());
                continue;
            }
        };
        for n in &spec.notes {
            out.notes.push((d.doc, spec.service_id.clone(), n.clone()));
        }
        match plan_spec(spec, d.doc, &schedulable, &by_name, view) {
            Ok(rows) => out.rows.extend(rows),
            Err((field, message)) => out.errors.push(SpecError {
                doc: d.doc,
                line: d.line,
                service_id: spec.service_id.clone(),
                field,
                value: None,
                message,
                stricter_than_cephadm: false,
            }),
        }
    }
    out.rows.sort_by(|a, b| {
        let ka = a.service_id.as_deref().unwrap_or("None");
        let kb = b.service_id.as_deref().unwrap_or("None");
        ka.cmp(kb).then_with(|| a.host.cmp(&b.host))
    });
    out
}

/// One spec over its hosts; an error on any host fails the whole spec, as
/// it does in cephadm.
fn plan_spec(
    spec: &DriveSpec,
    doc: usize,
    hosts: &[HostRef<'_>],
    by_name: &HashMap<&str, usize>,
    view: &ClusterView,
) -> Result<Vec<PlanRow>, (String, String)> {
    let sid = spec.service_id.clone().unwrap_or_default();
    let mut rows = Vec::new();
    for host in spec.placement.matching_hosts(hosts) {
        let inv = &view.hosts[by_name[host]];
        let existing = view.existing(&sid, host);
        let sel = select(spec, &inv.devices, existing)
            .map_err(|e| (e.field, format!("host {host}: {}", e.message)))?;
        if let Some(msg) = raw_ratio_error(spec, &sel, host) {
            return Err(("method".into(), msg));
        }
        let claims = view.claims(host);
        rows.push(PlanRow {
            doc,
            service_id: spec.service_id.clone(),
            service_name: spec.service_name(),
            host: host.to_string(),
            commands: ceph_volume_commands(spec, &sel, claims, false),
            preview_commands: ceph_volume_commands(spec, &sel, claims, true),
            osds: planned_osds(spec, &sel, &inv.devices, claims),
            data: sel.data,
            db: sel.db,
            wal: sel.wal,
            journal: sel.journal,
            skipped: sel.skipped,
            warnings: sel.warnings,
        });
    }
    Ok(rows)
}
