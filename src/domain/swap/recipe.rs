//! How a swap makes its new OSDs. By default the way the old ones were
//! made: raw where their disks hold no LV of theirs, LVM otherwise
//! (ceph-volume's and cephadm's default); encrypted when asked. The
//! commands are the ones a spec saying so would give on the cluster's
//! release (`command.rs`), so that release flags (`--objectstore` on
//! 20.2) and the claim of a destroyed id (`--osd-id` for raw, `--osd-ids`
//! for LVM) come out as for any deployment.

use std::sync::Arc;

use crate::domain::ceph_release::Release;
use crate::domain::command::{ceph_volume_commands, Argv};
use crate::domain::inventory::Device;
use crate::domain::removal::zap_plan;
use crate::domain::selection::Selection;
use crate::domain::spec::{DeviceFilter, DriveSpec, FilterLogic, Method, Placement};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recipe {
    pub method: Method,
    pub encrypted: bool,
}

impl Default for Recipe {
    /// What a swap stored before recipes existed made: LVM, not encrypted.
    fn default() -> Recipe {
        Recipe { method: Method::Lvm, encrypted: false }
    }
}

/// The method the old OSD was made with, read from its host's inventory
/// as the removal's zap reads it (`zap_plan`): raw only where every one of
/// its devices is known there and none holds an LV of it (a device the
/// inventory does not know says nothing).
pub fn method_of(osd: u32, devices: &[String], inventory: &[Device]) -> Method {
    if zap_plan::plan(osd, devices, inventory).iter().any(|d| !d.own.is_empty()) {
        return Method::Lvm;
    }
    let all_known = !devices.is_empty() && devices.iter().all(|p| inventory.iter().any(|d| &*d.path == p));
    if all_known {
        Method::Raw
    } else {
        Method::Lvm
    }
}

/// The commands that make OSDs on `disks`, each with the disks it takes;
/// with `osd_ids` (in place) the destroyed ids they take.
pub fn deploy_commands(
    recipe: Recipe,
    release: Release,
    disks: &[String],
    osd_ids: &[u32],
) -> Vec<(Argv, Vec<String>)> {
    let spec = DriveSpec {
        release,
        service_id: None,
        placement: Placement::default(),
        unmanaged: false,
        preview_only: false,
        data: DeviceFilter { paths: disks.to_vec(), ..DeviceFilter::default() },
        wal: None,
        db: None,
        journal: None,
        filter_logic: FilterLogic::And,
        encrypted: recipe.encrypted,
        tpm2: false,
        method: Some(recipe.method),
        osds_per_device: None,
        data_allocate_fraction: None,
        block_db_size: None,
        block_wal_size: None,
        crush_device_class: None,
        extra_container_args: Vec::new(),
        extra_entrypoint_args: Vec::new(),
        notes: Vec::new(),
        probe: None,
    };
    let sel = Selection { data: disks.iter().map(|d| Arc::from(d.as_str())).collect(), ..Selection::default() };
    let claims: Vec<String> = osd_ids.iter().map(u32::to_string).collect();
    let commands = ceph_volume_commands(&spec, &sel, &claims);
    match recipe.method {
        // One `raw prepare` per disk, in the disks' order.
        Method::Raw => commands.into_iter().zip(disks).map(|(c, d)| (c, vec![d.clone()])).collect(),
        Method::Lvm => commands.into_iter().map(|c| (c, disks.to_vec())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::inventory::Lv;

    fn device(path: &str, lv_of: Option<&str>) -> Device {
        let mut d = Device::default();
        d.report.path = path.into();
        d.report.lvs = lv_of.map(|o| Lv::of_osd(o, "block")).into_iter().collect();
        d
    }

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn an_osd_is_raw_only_where_its_devices_are_known_and_hold_no_lv_of_it() {
        let inv = vec![device("/dev/sdb", Some("3")), device("/dev/sdc", None), device("/dev/sdd", Some("4"))];
        assert_eq!(method_of(3, &strings(&["/dev/sdb"]), &inv), Method::Lvm);
        assert_eq!(method_of(5, &strings(&["/dev/sdc"]), &inv), Method::Raw);
        // Another OSD's LV on a device says nothing of this one.
        assert_eq!(method_of(5, &strings(&["/dev/sdd"]), &inv), Method::Raw);
        assert_eq!(method_of(5, &strings(&["/dev/sdz"]), &inv), Method::Lvm, "unknown device");
        assert_eq!(method_of(5, &[], &inv), Method::Lvm, "no device known");
    }

    #[test]
    fn raw_disks_get_a_prepare_each_and_lvm_ones_one_batch_as_a_spec_would() {
        let disks = strings(&["/dev/sdg", "/dev/sdh"]);
        let raw = Recipe { method: Method::Raw, encrypted: true };
        let got = deploy_commands(raw, Release::Pacific, &disks, &[7, 9]);
        assert_eq!(
            got,
            vec![
                (
                    strings(&["raw", "prepare", "--bluestore", "--data", "/dev/sdg", "--dmcrypt", "--osd-id", "7"]),
                    strings(&["/dev/sdg"])
                ),
                (
                    strings(&["raw", "prepare", "--bluestore", "--data", "/dev/sdh", "--dmcrypt", "--osd-id", "9"]),
                    strings(&["/dev/sdh"])
                ),
            ]
        );
        let got = deploy_commands(Recipe::default(), Release::Tentacle, &disks, &[]);
        let want = "lvm batch --no-auto /dev/sdg /dev/sdh --objectstore bluestore --yes --no-systemd";
        assert_eq!(got, vec![(want.split(' ').map(str::to_string).collect::<Vec<_>>(), disks.clone())]);
    }
}
