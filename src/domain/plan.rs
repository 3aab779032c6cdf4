//! The dry-run: for every valid spec and every host its placement matches,
//! the devices cephadm would take, the ceph-volume commands, the OSDs they
//! make, and why every other device was not taken. The daemon's reconciler
//! runs the same function and executes the commands.
//!
//! Hosts are independent, so large plans are split over a few scoped
//! threads; the result does not depend on how many.

use std::collections::HashMap;

use crate::domain::command::{ceph_volume_commands, raw_ratio_error};
use crate::domain::inventory::{ClusterView, HostInventory};
use crate::domain::osd_layout::{planned_osds, Layout, Refusal};
use crate::domain::probe::gate::hold_back;
use crate::domain::selection::{select, Selection};
use crate::domain::spec::{DriveSpec, HostRef, SpecDocument, SpecError};
use crate::domain::value::excerpt;

/// The plan of one spec on one host.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRow {
    /// Index into the documents given to `preview`.
    pub spec: usize,
    /// Index into `ClusterView::hosts`.
    pub host: usize,
    pub selection: Selection,
    /// What cephadm would run on the host (`lvm batch ...`): each command's
    /// arguments after `ceph-volume`.
    pub commands: Vec<crate::domain::command::Argv>,
    /// What ceph-volume would make of `commands` on this host.
    pub layout: Result<Layout, Refusal>,
}

/// Everything a dry-run shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Preview {
    pub errors: Vec<SpecError>,
    /// Sorted by (service_id, host name) like cephadm's preview.
    pub rows: Vec<PlanRow>,
}

impl Preview {
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// The suffix cephadm appends to a command for a dry-run report.
pub const PREVIEW_SUFFIX: &str = " --report --format json";

/// Hosts per thread below which threads cost more than they save.
const HOSTS_PER_THREAD: usize = 256;

/// Plans every document against the cluster view.
pub fn preview(docs: &[SpecDocument], view: &ClusterView) -> Preview {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(8);
    preview_with_threads(docs, view, threads)
}

/// `preview` with an explicit degree of parallelism (1 = no threads).
pub fn preview_with_threads(docs: &[SpecDocument], view: &ClusterView, threads: usize) -> Preview {
    let schedulable: Vec<HostRef<'_>> =
        view.hosts.iter().filter(|h| h.schedulable()).map(|h| HostRef { name: &h.name, labels: &h.labels }).collect();
    let by_name: HashMap<&str, usize> = view.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i)).collect();
    let mut out = Preview::default();
    for (index, d) in docs.iter().enumerate() {
        let spec = match &d.spec {
            Ok(spec) => spec,
            Err(e) => {
                out.errors.push(e.clone());
                continue;
            }
        };
        let hosts: Vec<usize> = spec.placement.matching_hosts(&schedulable).iter().map(|h| by_name[h]).collect();
        match plan_hosts(spec, index, &hosts, view, threads) {
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
    // Sort a permutation, not the rows themselves: rows are large.
    let key = |r: &PlanRow| {
        let sid = docs[r.spec].spec.as_ref().ok().and_then(|s| s.service_id.as_deref()).unwrap_or("None");
        (sid, view.hosts[r.host].name.as_str())
    };
    let mut order: Vec<usize> = (0..out.rows.len()).collect();
    order.sort_by(|&a, &b| key(&out.rows[a]).cmp(&key(&out.rows[b])));
    let mut slots: Vec<Option<PlanRow>> = std::mem::take(&mut out.rows).into_iter().map(Some).collect();
    out.rows = order.into_iter().map(|i| slots[i].take().expect("each row once")).collect();
    out
}

type PlanError = (String, String);

/// One spec over its hosts; an error on any host fails the whole spec, as
/// it does in cephadm (the first host in placement order is reported).
fn plan_hosts(
    spec: &DriveSpec,
    index: usize,
    hosts: &[usize],
    view: &ClusterView,
    threads: usize,
) -> Result<Vec<PlanRow>, PlanError> {
    let threads = threads.min(hosts.len() / HOSTS_PER_THREAD).max(1);
    if threads == 1 {
        return hosts.iter().map(|&h| plan_host(spec, index, h, &view.hosts[h], view)).collect();
    }
    let chunk = hosts.len().div_ceil(threads);
    let parts: Vec<Result<Vec<PlanRow>, PlanError>> = std::thread::scope(|s| {
        let handles: Vec<_> = hosts
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || part.iter().map(|&h| plan_host(spec, index, h, &view.hosts[h], view)).collect())
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("planner thread")).collect()
    });
    let mut rows = Vec::with_capacity(hosts.len());
    for part in parts {
        rows.extend(part?);
    }
    Ok(rows)
}

/// The plan of one spec on one host.
pub fn plan_host(
    spec: &DriveSpec,
    index: usize,
    host: usize,
    inv: &HostInventory,
    view: &ClusterView,
) -> Result<PlanRow, PlanError> {
    let name = inv.name.as_str();
    let existing = view.existing(spec.service_id.as_deref().unwrap_or(""), name);
    let mut selection = select(spec, &inv.devices, existing)
        .map_err(|e| (e.field, format!("host {}: {}", excerpt(name), e.message)))?;
    // Beyond cephadm, after its choice: new disks wait for their probe.
    if let Some(gate) = &spec.probe {
        hold_back(gate, &inv.devices, &mut selection);
    }
    if let Some(msg) = raw_ratio_error(spec, &selection, name) {
        return Err(("method".into(), msg));
    }
    let commands = ceph_volume_commands(spec, &selection, view.claims(name));
    Ok(PlanRow { spec: index, host, layout: planned_osds(&commands, &inv.devices, spec.release), commands, selection })
}
