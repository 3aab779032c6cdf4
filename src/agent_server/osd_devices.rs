//! Which devices a running OSD serves from, seen on the host: the block
//! devices its ceph-osd process holds open, directly (a raw OSD) or through
//! a device stacked on one (an LVM OSD's logical volume). An agent limited
//! to some devices (`--devices`) stops only OSDs served from them.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::holders::stacked;
use super::host_roots::HostRoots;
use super::osd_status::osd_of;
use super::proc_scan::{open_files, processes};

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

#[cfg(test)]
mod tests {
    use super::super::proc_scan::fake::FakeProc;
    use super::*;

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
}
