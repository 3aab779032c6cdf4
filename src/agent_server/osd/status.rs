//! Whether an OSD's daemon runs on this host, judged from the host's own
//! processes: the monitors' `up` lags behind (and says nothing about a
//! daemon that is starting), and an OSD the cluster has marked down may
//! still hold its disk.

use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::osd::argv::{is_ceph_osd, served_osd};
use crate::agent_server::osd::proc_scan::{processes, ProcessInfo};
use crate::wire::agent::OsdDaemonStatus;

/// The pids of the live ceph-osd processes of our cluster serving `osd_id`.
pub fn osd_pids(roots: &HostRoots, osd_id: u32) -> std::io::Result<Vec<u32>> {
    Ok(pids_serving(roots, &processes(&roots.proc)?, osd_id))
}

pub fn pids_serving(roots: &HostRoots, procs: &[ProcessInfo], osd_id: u32) -> Vec<u32> {
    procs
        .iter()
        .filter(|p| is_ceph_osd(p) && served_osd(&p.argv) == Some(osd_id) && roots.of_our_cluster(p))
        .map(|p| p.pid)
        .collect()
}

/// The OSD a process serves, when it is a ceph-osd.
pub fn osd_of(p: &ProcessInfo) -> Option<u32> {
    if is_ceph_osd(p) {
        served_osd(&p.argv)
    } else {
        None
    }
}

/// `GET /v1/osd/{id}`.
pub fn status(roots: &HostRoots, osd_id: u32) -> std::io::Result<OsdDaemonStatus> {
    let pids = osd_pids(roots, osd_id)?;
    Ok(OsdDaemonStatus { osd_id, running: !pids.is_empty(), detail: describe(osd_id, &pids), pids })
}

/// "ceph-osd for osd.4 runs (pid 123)" or "no ceph-osd process serves osd.4".
pub fn describe(osd_id: u32, pids: &[u32]) -> String {
    match pids {
        [] => format!("no ceph-osd process serves osd.{osd_id} on this host"),
        [pid] => format!("ceph-osd for osd.{osd_id} runs (pid {pid})"),
        many => format!("ceph-osd for osd.{osd_id} runs (pids {})", join_pids(many)),
    }
}

pub fn join_pids(pids: &[u32]) -> String {
    pids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::proc_scan::fake::FakeProc;

    fn roots_at(p: &FakeProc) -> HostRoots {
        HostRoots { proc: p.root(), ..HostRoots::default() }
    }

    #[test]
    fn with_a_cluster_conf_only_that_clusters_daemons_count() {
        let p = FakeProc::new();
        p.add(100, 'S', "ceph-osd", &["ceph-osd", "-i", "4", "-c", "/tmp/ours/ceph.conf"]);
        p.add(101, 'S', "ceph-osd", &["ceph-osd", "-i", "4", "-c", "/tmp/theirs/ceph.conf"]);
        p.add(102, 'S', "ceph-osd", &["ceph-osd", "-f", "--cluster", "ceph", "--id", "4"]);
        assert_eq!(osd_pids(&roots_at(&p), 4).unwrap(), [100, 101, 102], "by default every ceph-osd counts");
        let ours = HostRoots { cluster_conf: Some("/tmp/ours/ceph.conf".into()), ..roots_at(&p) };
        assert_eq!(osd_pids(&ours, 4).unwrap(), [100]);
        let host = HostRoots { cluster_conf: Some("/etc/ceph/ceph.conf".into()), ..roots_at(&p) };
        assert_eq!(osd_pids(&host, 4).unwrap(), [102], "a packaged OSD runs with the default conf");
    }

    #[test]
    fn finds_the_daemon_of_one_osd() {
        let p = FakeProc::new();
        p.add(100, 'S', "ceph-osd", &["ceph-osd", "-i", "1", "-c", "/tmp/sb/ceph.conf"]);
        p.add(101, 'S', "ceph-osd", &["ceph-osd", "-i", "12", "-c", "/tmp/sb/ceph.conf"]);
        p.add(102, 'S', "ceph-osd", &["/usr/bin/ceph-osd", "-n", "osd.1", "-f"]);
        p.add(103, 'Z', "ceph-osd", &[]);
        p.add(104, 'S', "ceph-mon", &["ceph-mon", "-i", "1"]);
        p.add(105, 'S', "bash", &["bash", "-c", "ceph-osd -i 1"]);
        let s = status(&roots_at(&p), 1).unwrap();
        assert!(s.running);
        assert_eq!(s.pids, [100, 102]);
        assert_eq!(s.detail, "ceph-osd for osd.1 runs (pids 100, 102)");
        let s = status(&roots_at(&p), 12).unwrap();
        assert_eq!((s.pids, s.detail), (vec![101], "ceph-osd for osd.12 runs (pid 101)".to_string()));
        let s = status(&roots_at(&p), 2).unwrap();
        assert!(!s.running && s.pids.is_empty());
        assert_eq!(s.detail, "no ceph-osd process serves osd.2 on this host");
    }

    #[test]
    fn a_zombie_does_not_run() {
        let p = FakeProc::new();
        // A zombie keeps its name; its arguments are gone, but even a
        // stat that still showed them must not count.
        let d = p.add(200, 'Z', "ceph-osd", &["ceph-osd", "-i", "3"]);
        assert!(d.join("stat").exists());
        assert!(!status(&roots_at(&p), 3).unwrap().running);
    }
}
