//! When the reconciler runs a plan: once per spec version and host, and
//! again when the host's inventory changed (cephadm's `osdspec_needs_apply`).
//! A plan only names disks that are available, so the same plan on the same
//! disks comes back only when they are free again (their OSD was removed and
//! the disk released) or the inventory lags behind a creation; the
//! deployment lists the disks before it prepares one, so the second case
//! makes no second OSD.

use crate::domain::command::{shown, Argv};
use crate::domain::inventory::HostInventory;
use crate::domain::plan::PlanRow;
use crate::domain::spec::{DriveSpec, Method};

/// What the reconciler last ran for a spec on a host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastRun<'a> {
    pub spec_version: i64,
    pub inventory_fingerprint: &'a str,
}

/// Whether the plan row creates OSDs at all.
pub fn creates_osds(row: &PlanRow) -> bool {
    !row.commands.is_empty() && matches!(&row.layout, Ok(layout) if !layout.osds.is_empty())
}

/// The identity of a run: its commands and the ids of the disks they name.
pub fn run_key(row: &PlanRow, host: &HostInventory) -> String {
    let sel = &row.selection;
    let ids: Vec<&str> = sel
        .data
        .iter()
        .chain(&sel.db)
        .chain(&sel.wal)
        .filter_map(|p| host.devices.iter().find(|d| d.path == *p).map(|d| &*d.device_id))
        .collect();
    let commands: Vec<String> = row.commands.iter().map(|c| shown(c)).collect();
    format!("{} [disks: {}]", commands.join(" && "), ids.join(","))
}

/// The deployment's steps: each planned command with the data devices it
/// makes OSDs on (raw: one command per data device; lvm batch: one for all).
pub fn deploy_steps(spec: &DriveSpec, row: &PlanRow) -> Vec<(Argv, Vec<String>)> {
    let data: Vec<String> = row.selection.data.iter().map(|p| p.to_string()).collect();
    if spec.method == Some(Method::Raw) {
        row.commands.iter().cloned().zip(data.into_iter().map(|d| vec![d])).collect()
    } else {
        row.commands.iter().map(|c| (c.clone(), data.clone())).collect()
    }
}

/// What a spec's probe gate has seen of a host's disks (each disk's
/// latest finished probe, one under way, a failure): folded into what
/// `should_run` compares for a spec with the gate, so that a probe that
/// lets a disk through makes the plan run again, though neither the spec
/// nor the inventory changed.
pub fn probe_marker(host: &HostInventory) -> String {
    let mut marks: Vec<String> = host
        .devices
        .iter()
        .filter_map(|d| {
            let p = d.probe.as_ref()?;
            let done = p.done.as_ref().map(|d| d.probe_id.to_string()).unwrap_or_default();
            let pending = if p.pending { "+" } else { "" };
            let failed = if p.failure.is_some() { "!" } else { "" };
            Some(format!("{}={done}{pending}{failed}", d.path))
        })
        .collect();
    marks.sort();
    marks.join(",")
}

/// Whether to run now: not when the same spec version already ran on the
/// same inventory (a failure is not retried in a loop).
pub fn should_run(last: Option<LastRun<'_>>, spec_version: i64, inventory_fingerprint: &str) -> bool {
    let Some(last) = last else { return true };
    !(last.spec_version == spec_version && last.inventory_fingerprint == inventory_fingerprint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(version: i64, fingerprint: &'static str) -> Option<LastRun<'static>> {
        Some(LastRun { spec_version: version, inventory_fingerprint: fingerprint })
    }

    #[test]
    fn runs_once_per_spec_version_and_inventory() {
        assert!(should_run(None, 1, "fp1"), "never ran");
        assert!(!should_run(last(1, "fp1"), 1, "fp1"), "nothing changed (also after a failure: no loop)");
        assert!(should_run(last(1, "fp1"), 2, "fp1"), "a new spec version");
    }

    #[test]
    fn a_probe_changes_what_a_gated_spec_compares() {
        use crate::domain::inventory::Device;
        use crate::domain::probe::{ProbeDone, ProbeFigures, ProbeMode, ProbeStatus};
        let disk = |probe: Option<ProbeStatus>| Device {
            report: crate::domain::inventory::DeviceReport { path: "/dev/sdb".into(), ..Default::default() },
            probe: probe.map(std::sync::Arc::new),
            ..Device::default()
        };
        let host = |d: Device| HostInventory {
            name: "h".into(),
            devices: std::sync::Arc::new(vec![d]),
            ..HostInventory::default()
        };
        let figures = ProbeFigures { seq_write_bps: 1.0, seq_read_bps: 1.0, rand_read_iops: 1.0, sync_write_iops: 1.0 };
        let done = ProbeDone { probe_id: 4, mode: ProbeMode::Quick, figures, finished_at: 0, outlier: None };
        let none = probe_marker(&host(disk(None)));
        let pending = probe_marker(&host(disk(Some(ProbeStatus { pending: true, ..ProbeStatus::default() }))));
        let finished = probe_marker(&host(disk(Some(ProbeStatus { done: Some(done), ..ProbeStatus::default() }))));
        assert_eq!((none.as_str(), pending.as_str(), finished.as_str()), ("", "/dev/sdb=+", "/dev/sdb=4"));
    }

    #[test]
    fn a_changed_inventory_plans_again() {
        // A new disk, or the same disk freed by a removal and released: the
        // plan names it again and runs (the deployment lists the disk first,
        // so a disk that still holds an OSD is never prepared twice).
        assert!(should_run(last(1, "fp1"), 1, "fp2"));
    }
}
