//! One command that changes the host's disks or daemons at a time
//! (`AgentState::busy`): what a request is answered while another runs.

/// The answer while another command holds the one-at-a-time lock.
pub const BUSY: &str = "another command that changes this host's disks or daemons (ceph-volume, a zap, a probe, a \
                        replacement header or an OSD stop) is still running on this host; retry when it has finished";
