//! Which devices a running OSD serves from, seen on the host: the block
//! devices its ceph-osd process holds open, directly (a raw OSD) or through
//! a device stacked on one (an LVM OSD's logical volume). An agent limited
//! to some devices (`--devices`) stops only OSDs served from them; a stop
//! that names the OSD's fsid stops only the daemon whose label says so.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::agent_server::disks::holders::stacked;
use crate::agent_server::disks::label::osd_uuid;
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::kernel::signatures;
use crate::agent_server::osd::proc_scan::{open_files, processes};
use crate::agent_server::osd::status::osd_of;

/// Whether a ceph-osd serving `osd_id` holds one of `devices` open.
pub fn serves_from(roots: &HostRoots, osd_id: u32, devices: &BTreeSet<String>) -> std::io::Result<bool> {
    let mut names: BTreeSet<PathBuf> = devices.iter().map(PathBuf::from).collect();
    for d in devices {
        let kernel = d.rsplit('/').next().unwrap_or("");
        names.extend(stacked(roots, kernel, &[]).into_iter().map(|k| PathBuf::from(format!("/dev/{k}"))));
    }
    let procs = processes(&roots.proc)?;
    Ok(procs
        .iter()
        .filter(|p| osd_of(p) == Some(osd_id) && roots.of_our_cluster(p))
        .any(|p| open_files(&roots.proc, p.pid).iter().any(|f| names.contains(f))))
}

/// The OSD uuids named by the BlueStore labels of what the running
/// ceph-osd serving `osd_id` holds open: its block device (a raw OSD's
/// disk, an LVM OSD's LV) or a file-backed OSD's `block` file. Empty when
/// none can be read (no such process, or a store without a label).
pub fn running_fsids(roots: &HostRoots, osd_id: u32) -> std::io::Result<Vec<String>> {
    let procs = processes(&roots.proc)?;
    let mut out: Vec<String> = Vec::new();
    for p in procs.iter().filter(|p| osd_of(p) == Some(osd_id) && roots.of_our_cluster(p)) {
        for file in open_files(&roots.proc, p.pid) {
            if !may_hold_data(&file) {
                continue;
            }
            let Ok(head) = signatures::read_head(&file) else { continue };
            if let Some(uuid) = osd_uuid(&head).filter(|u| !out.contains(u)) {
                out.push(uuid);
            }
        }
    }
    Ok(out)
}

/// A block device, or a file named `block` (BlueStore's on a file): what an
/// OSD keeps its label on. Sockets, logs and pipes are not read.
fn may_hold_data(file: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let block = std::fs::metadata(file).is_ok_and(|m| m.file_type().is_block_device());
    block || file.file_name().is_some_and(|n| n == "block")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::proc_scan::fake::FakeProc;

    #[test]
    fn an_osd_is_ours_when_it_holds_one_of_our_devices() {
        let p = FakeProc::new();
        p.add(500, 'S', "ceph-osd", &["ceph-osd", "-i", "4"]);
        p.open(500, 7, "/dev/loop4");
        let roots = HostRoots {
            proc: p.root(),
            sys_class_block: p.dir.path().join("sys"),
            cluster_conf: None,
            ..HostRoots::default()
        };
        let mine: BTreeSet<String> = ["/dev/loop4".to_string()].into();
        let other: BTreeSet<String> = ["/dev/loop5".to_string()].into();
        assert!(serves_from(&roots, 4, &mine).unwrap());
        assert!(!serves_from(&roots, 4, &other).unwrap(), "another agent's OSD");
        assert!(!serves_from(&roots, 5, &mine).unwrap(), "no process serves osd.5");
    }

    #[test]
    fn a_running_osd_is_told_by_the_label_of_what_it_holds() {
        let p = FakeProc::new();
        p.add(500, 'S', "ceph-osd", &["ceph-osd", "-i", "4"]);
        let data = p.dir.path().join("osd.4");
        std::fs::create_dir(&data).unwrap();
        std::fs::write(data.join("block"), crate::agent_server::disks::label::test_label(Some("4"), 2)).unwrap();
        std::fs::write(data.join("log"), crate::agent_server::disks::label::test_label(Some("9"), 2)).unwrap();
        p.open(500, 7, data.join("block").to_str().unwrap());
        p.open(500, 8, data.join("log").to_str().unwrap());
        let roots = HostRoots { proc: p.root(), cluster_conf: None, ..HostRoots::default() };
        assert_eq!(running_fsids(&roots, 4).unwrap(), ["f9364872-2ea4-4bec-afa7-b42bb5513f12"]);
        assert!(running_fsids(&roots, 5).unwrap().is_empty(), "no process serves osd.5");
    }
}
