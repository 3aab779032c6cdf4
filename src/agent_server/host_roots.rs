//! Where the agent reads the host's live state: `/proc` (processes, open
//! files, mounts) and `/sys/class/block` (who holds a device). Tests point
//! these at directories they build, so the scans are checked without
//! depending on what happens to run on the test machine.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoots {
    /// `/proc`.
    pub proc: PathBuf,
    /// `/sys/class/block`: every block device, partitions included.
    pub sys_class_block: PathBuf,
}

impl Default for HostRoots {
    fn default() -> Self {
        HostRoots { proc: PathBuf::from("/proc"), sys_class_block: PathBuf::from("/sys/class/block") }
    }
}
