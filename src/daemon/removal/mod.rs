//! OSD removal in the daemon: scheduling (`osd rm`) and stopping
//! (`osd rm stop`) in `schedule`, the preview `osd rm` checks first (and
//! `--dry-run` shows) in `preview`, the worker that drives every removal
//! through `domain::removal::advance` in `worker`, the recovery boost of
//! fast drains in `boost`, and the events it records in `events`;
//! `host_drain` removes every OSD of a host. The decisions themselves (gates, pacing, which
//! devices, when a disk counts as wiped) are in `domain::removal`.

mod boost;
mod events;
mod host_drain;
mod preview;
mod schedule;
mod worker;

pub use schedule::RemoveRequest;
