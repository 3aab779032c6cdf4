//! OSD deployment in the daemon: the reconciler starts a deployment for
//! each (spec, host, set of disks) its plan creates OSDs on; the worker
//! here drives each through `domain::deploy::advance` (prepare, activate,
//! start, verify), and `events` records what happens in cephadm's words.

mod events;
mod worker;
