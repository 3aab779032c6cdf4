//! The host's mount table as the tests check it.

use std::path::Path;

/// How many tmpfs mounts are stacked on `dir` (ceph-volume's OSD data dirs).
pub fn tmpfs_layers(dir: &Path) -> usize {
    let target = dir.to_string_lossy();
    std::fs::read_to_string("/proc/self/mounts")
        .expect("read /proc/self/mounts")
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&target.as_ref()) && f.get(2) == Some(&"tmpfs")
        })
        .count()
}
