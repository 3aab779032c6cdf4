//! Slow disks for real: a blkio cgroup (this machine runs cgroup v1) that
//! limits the writes of some processes to some devices.

use std::path::{Path, PathBuf};

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// The group; its processes go back to the root group and it is removed
/// when dropped.
pub struct Throttle {
    group: PathBuf,
    pids: Vec<String>,
}

impl Throttle {
    /// Writes of `pids` to each of `devices` limited to `bytes_per_sec`.
    pub fn writes(pids: &[String], devices: &[String], bytes_per_sec: u64, name: &str) -> Throttle {
        let group = Path::new(BLKIO).join(name);
        std::fs::create_dir(&group).unwrap_or_else(|e| panic!("mkdir {}: {e}", group.display()));
        let throttle = Throttle { group: group.clone(), pids: pids.to_vec() };
        for device in devices {
            let out = std::process::Command::new("lsblk").args(["-dno", "MAJ:MIN", device]).output().unwrap();
            let major_minor = String::from_utf8_lossy(&out.stdout).trim().to_string();
            assert!(major_minor.contains(':'), "lsblk {device}: {major_minor:?}");
            // One device per write: the file keeps a line per device.
            std::fs::write(group.join("blkio.throttle.write_bps_device"), format!("{major_minor} {bytes_per_sec}"))
                .unwrap();
        }
        for pid in pids {
            std::fs::write(group.join("cgroup.procs"), pid).unwrap_or_else(|e| panic!("move {pid} into {name}: {e}"));
        }
        throttle
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        for pid in &self.pids {
            // A process that ended has left the group already.
            if let Err(e) = std::fs::write(Path::new(BLKIO).join("cgroup.procs"), pid) {
                eprintln!("cannot move {pid} back to the root blkio group: {e}");
            }
        }
        if let Err(e) = std::fs::remove_dir(&self.group) {
            eprintln!("cannot remove {}: {e}", self.group.display());
        }
    }
}
