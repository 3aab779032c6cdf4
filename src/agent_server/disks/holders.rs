//! Who holds a busy device, for the refusal message: processes with it
//! open (`/proc/*/fd`), the kernel's holders (`/sys/class/block/X/holders`:
//! device-mapper, md) and mounts. Only asked after an exclusive open has
//! failed; the open is the check, this is the explanation.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::mounts::Mounts;
use crate::agent_server::osd::proc_scan::{open_files, processes};
use crate::agent_server::osd::status::osd_of;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessHolder {
    pub pid: u32,
    pub comm: String,
    /// The OSD it serves, for a ceph-osd.
    pub osd: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holders {
    pub processes: Vec<ProcessHolder>,
    /// Kernel names of the devices stacked on it (`dm-0`).
    pub kernel: Vec<String>,
    pub mount_points: Vec<String>,
}

impl Holders {
    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.kernel.is_empty() && self.mount_points.is_empty()
    }

    /// The OSDs among the holders.
    pub fn osds(&self) -> Vec<u32> {
        self.processes.iter().filter_map(|p| p.osd).collect()
    }
}

impl fmt::Display for Holders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if !self.processes.is_empty() {
            let shown: Vec<String> = self
                .processes
                .iter()
                .map(|p| match p.osd {
                    Some(id) => format!("{} pid {} (osd.{id})", p.comm, p.pid),
                    None => format!("{} pid {}", p.comm, p.pid),
                })
                .collect();
            parts.push(format!("held open by {}", shown.join(", ")));
        }
        if !self.kernel.is_empty() {
            parts.push(format!("in use by {}", self.kernel.join(", ")));
        }
        if !self.mount_points.is_empty() {
            parts.push(format!("mounted at {}", self.mount_points.join(", ")));
        }
        if parts.is_empty() {
            f.write_str("no holder found")
        } else {
            f.write_str(&parts.join("; "))
        }
    }
}

/// Everything found holding `path` (whose real path is `resolved`), except
/// the process `except` (the agent itself).
pub fn find(roots: &HostRoots, path: &str, resolved: Option<&str>, except: u32) -> Holders {
    let names: Vec<PathBuf> = std::iter::once(path).chain(resolved).map(PathBuf::from).collect();
    let mut out = Holders::default();
    match processes(&roots.proc) {
        Ok(procs) => {
            for p in procs.iter().filter(|p| p.pid != except) {
                if open_files(&roots.proc, p.pid).iter().any(|f| names.contains(f)) {
                    out.processes.push(ProcessHolder { pid: p.pid, comm: p.comm.clone(), osd: osd_of(p) });
                }
            }
        }
        Err(e) => tracing::debug!("cannot list processes: {e}"),
    }
    let kernel_name = resolved.unwrap_or(path).rsplit('/').next().unwrap_or("");
    if !kernel_name.is_empty() {
        out.kernel = list(&roots.sys_class_block.join(kernel_name).join("holders"));
    }
    match Mounts::read(&roots.proc) {
        Ok(m) => out.mount_points = m.mount_points(path, resolved).into_iter().map(str::to_string).collect(),
        Err(e) => tracing::debug!("cannot read the mount table: {e}"),
    }
    out
}

/// Like `find`, but a process counts only while it keeps the device open.
/// LVM's and blkid's scans and udev workers open every disk for a moment
/// (an agent's inventory on the host next door did, in a test); a name
/// must not decide that a holder is harmless, time does: the processes are
/// looked at again, `pause()` apart, up to `looks` times, and the ones
/// still there in every look are the holders. Returns them and, for the
/// log, the ones that let go.
pub fn lasting(
    roots: &HostRoots,
    path: &str,
    resolved: Option<&str>,
    except: u32,
    looks: u32,
    mut pause: impl FnMut(),
) -> (Holders, Vec<ProcessHolder>) {
    let mut out = find(roots, path, resolved, except);
    let first = out.processes.clone();
    for _ in 1..looks {
        if out.processes.is_empty() {
            break;
        }
        pause();
        let now = find(roots, path, resolved, except);
        out.processes.retain(|p| now.processes.iter().any(|q| q.pid == p.pid && q.comm == p.comm));
        out.kernel = now.kernel;
        out.mount_points = now.mount_points;
    }
    let gone = first.into_iter().filter(|p| !out.processes.contains(p)).collect();
    (out, gone)
}

/// The kernel names of the devices stacked on a device or on one of its
/// `partitions` (device-mapper LVs, md arrays), each once.
pub fn stacked(roots: &HostRoots, kernel_name: &str, partitions: &[String]) -> Vec<String> {
    let mut out: Vec<String> = std::iter::once(kernel_name)
        .chain(partitions.iter().map(String::as_str))
        .filter(|n| !n.is_empty() && !n.contains('/'))
        .flat_map(|n| list(&roots.sys_class_block.join(n).join("holders")))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_server::osd::proc_scan::fake::FakeProc;

    fn roots(p: &FakeProc) -> HostRoots {
        HostRoots {
            proc: p.root(),
            sys_class_block: p.dir.path().join("sys-class-block"),
            cluster_conf: None,
            ..HostRoots::default()
        }
    }

    #[test]
    fn names_processes_kernel_holders_and_mounts() {
        let p = FakeProc::new();
        p.add(16544, 'S', "ceph-osd", &["ceph-osd", "-i", "4", "-c", "/tmp/sb/ceph.conf"]);
        p.open(16544, 33, "/dev/loop4");
        p.open(16544, 34, "/dev/loop4");
        p.add(700, 'S', "dd", &["dd", "of=/dev/loop4"]);
        p.open(700, 1, "/dev/loop4");
        p.add(701, 'S', "cat", &["cat"]);
        p.open(701, 3, "/dev/loop40");
        // The agent itself is not a holder.
        p.add(702, 'S', "osdkeeper", &["osdkeeper", "agent"]);
        p.open(702, 9, "/dev/loop4");
        std::fs::write(p.dir.path().join("mounts"), "/dev/loop4 /mnt/x ext4 rw 0 0\n").unwrap();
        std::fs::create_dir_all(p.dir.path().join("sys-class-block/loop4/holders/dm-0")).unwrap();
        let h = find(&roots(&p), "/dev/loop4", Some("/dev/loop4"), 702);
        assert_eq!(h.osds(), [4]);
        assert_eq!(h.kernel, ["dm-0"]);
        assert_eq!(
            h.to_string(),
            "held open by dd pid 700, ceph-osd pid 16544 (osd.4); in use by dm-0; mounted at /mnt/x"
        );
    }

    #[test]
    fn devices_stacked_on_a_disk_and_its_partitions() {
        let p = FakeProc::new();
        let sys = p.dir.path().join("sys-class-block");
        for d in ["sdc/holders/dm-0", "sdc/holders/dm-1", "sdd1/holders/dm-1", "sdd1/holders/md0", "sdd/holders"] {
            std::fs::create_dir_all(sys.join(d)).unwrap();
        }
        let r = roots(&p);
        assert_eq!(stacked(&r, "sdc", &[]), ["dm-0", "dm-1"]);
        assert_eq!(stacked(&r, "sdd", &["sdd1".into(), "sdd2".into()]), ["dm-1", "md0"]);
        assert!(stacked(&r, "sde", &[]).is_empty());
        assert!(stacked(&r, "../sdc", &[]).is_empty());
    }

    #[test]
    fn a_link_is_matched_by_its_real_path() {
        let p = FakeProc::new();
        p.add(800, 'S', "lvm", &["lvm"]);
        p.open(800, 3, "/dev/dm-3");
        let h = find(&roots(&p), "/dev/mapper/vg-lv", Some("/dev/dm-3"), 1);
        assert_eq!(h.processes.len(), 1);
        let none = find(&roots(&p), "/dev/sdz", None, 1);
        assert!(none.is_empty());
        assert_eq!(none.to_string(), "no holder found");
    }
    #[test]
    fn a_scan_that_lets_go_is_not_a_holder_but_one_that_stays_is() {
        let p = FakeProc::new();
        p.add(4602, 'S', "pvs", &["pvs"]);
        p.open(4602, 5, "/dev/loop8");
        p.add(700, 'S', "dd", &["dd", "of=/dev/loop8"]);
        p.open(700, 1, "/dev/loop8");
        let mut pauses = 0;
        let (h, gone) = lasting(&roots(&p), "/dev/loop8", None, 1, 5, || {
            pauses += 1;
            let _ = std::fs::remove_file(p.dir.path().join("4602/fd/5"));
        });
        assert_eq!(pauses, 4, "a lasting holder is looked at every time");
        assert_eq!(h.to_string(), "held open by dd pid 700");
        assert_eq!(gone.iter().map(|g| g.comm.as_str()).collect::<Vec<_>>(), ["pvs"]);

        let q = FakeProc::new();
        q.add(4602, 'S', "pvs", &["pvs"]);
        q.open(4602, 5, "/dev/loop8");
        let mut pauses = 0;
        let (h, gone) = lasting(&roots(&q), "/dev/loop8", None, 1, 5, || {
            pauses += 1;
            let _ = std::fs::remove_file(q.dir.path().join("4602/fd/5"));
        });
        assert_eq!(pauses, 1, "the looks stop once nothing holds it");
        assert!(h.is_empty(), "{h}");
        assert_eq!(gone.len(), 1);
    }
}
