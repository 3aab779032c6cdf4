//! When the reconciler runs a plan: once per spec version and host, and
//! again only when the host's disks changed in a way the plan cares about
//! (cephadm's `osdspec_needs_apply`). Its own OSD creation changes the
//! inventory too, and that must not make it run the same plan again; a new
//! disk in the same bay has another id, so it does.

use crate::domain::inventory::HostInventory;
use crate::domain::plan::PlanRow;
use crate::domain::spec::{DriveSpec, Method};

/// What the reconciler last ran for a spec on a host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LastRun<'a> {
    pub spec_version: i64,
    pub inventory_fingerprint: &'a str,
    /// The `run_key` of that run.
    pub key: &'a str,
    pub succeeded: bool,
}

/// Whether the plan row creates OSDs at all.
pub fn creates_osds(row: &PlanRow) -> bool {
    !row.commands.is_empty() && matches!(&row.osds, Ok(osds) if !osds.is_empty())
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
    format!("{} [disks: {}]", row.commands.join(" && "), ids.join(","))
}

/// The deployment's steps: each planned command with the data devices it
/// makes OSDs on (raw: one command per data device; lvm batch: one for all).
pub fn deploy_steps(spec: &DriveSpec, row: &PlanRow) -> Vec<(String, Vec<String>)> {
    let data: Vec<String> = row.selection.data.iter().map(|p| p.to_string()).collect();
    if spec.method == Some(Method::Raw) {
        row.commands.iter().cloned().zip(data.into_iter().map(|d| vec![d])).collect()
    } else {
        row.commands.iter().map(|c| (c.clone(), data.clone())).collect()
    }
}

/// Whether to run now. Not when the same spec version ran on the same
/// inventory, nor when the same run on the same disks already succeeded.
pub fn should_run(last: Option<LastRun<'_>>, spec_version: i64, inventory_fingerprint: &str, key: &str) -> bool {
    let Some(last) = last else { return true };
    let same_inventory = last.inventory_fingerprint == inventory_fingerprint;
    let same_run_done = last.key == key && last.succeeded;
    !(last.spec_version == spec_version && (same_inventory || same_run_done))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "lvm batch --no-auto /dev/sdb --yes --no-systemd [disks: S1]";

    fn last(version: i64, fingerprint: &'static str, key: &'static str, succeeded: bool) -> Option<LastRun<'static>> {
        Some(LastRun { spec_version: version, inventory_fingerprint: fingerprint, key, succeeded })
    }

    #[test]
    fn runs_once_per_spec_version_and_change() {
        assert!(should_run(None, 1, "fp1", KEY), "never ran");
        assert!(!should_run(last(1, "fp1", KEY, true), 1, "fp1", KEY), "nothing changed");
        assert!(!should_run(last(1, "fp1", KEY, false), 1, "fp1", KEY), "a failure is not retried in a loop");
        assert!(should_run(last(1, "fp1", KEY, true), 2, "fp1", KEY), "a new spec version");
    }

    #[test]
    fn its_own_osds_do_not_trigger_it_but_a_new_disk_does() {
        // The inventory changed (our OSD now shows) and the same run succeeded: skip.
        assert!(!should_run(last(1, "fp1", KEY, true), 1, "fp2", KEY));
        // The inventory changed after a failed run: try again.
        assert!(should_run(last(1, "fp1", KEY, false), 1, "fp2", KEY));
        // A new disk in the same bay: same command, another id.
        let other = "lvm batch --no-auto /dev/sdb --yes --no-systemd [disks: S2]";
        assert!(should_run(last(1, "fp1", KEY, true), 1, "fp2", other));
    }
}
