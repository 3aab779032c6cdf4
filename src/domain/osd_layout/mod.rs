//! The OSDs ceph-volume would make from cephadm's commands for one host:
//! one row per OSD with its data device, its db and wal volumes and their
//! sizes, as `ceph-volume lvm batch --report` lists them (the rows of
//! cephadm's dry-run table), or ceph-volume's refusal in its own words.
//! cephadm asks the host; we compute it from the inventory, and the
//! simulator runs the same function on the commands it is sent, so a plan
//! the dry-run shows is the plan that gets carried out.
//!
//! Planned from the command line (`args.rs`, the one grammar of the
//! command, which the agent checks requests by too), as ceph-volume reads it. What
//! the inventory does not say is taken as the cephadm oracle takes it: a
//! device's volume group spans the whole disk, and every LV on a device
//! fills one of its db/wal slots. That is exact for blank disks; for disks
//! that already carry a VG the real free space is unknown, so sizes there
//! are an estimate.

pub mod args;
mod device;
mod lvm;
mod size;

use std::fmt;
use std::sync::Arc;

use crate::domain::ceph_release::Release;
use crate::domain::inventory::Device;
use crate::domain::spec::Role;

pub use size::display as display_size;

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedOsd {
    pub data: Arc<str>,
    pub db: Option<Arc<str>>,
    pub wal: Option<Arc<str>>,
    pub osd_id: Option<String>,
    /// Bytes ceph-volume's batch gives each volume; `None` for `raw
    /// prepare`, which takes whole devices and reports no sizes.
    pub data_size: Option<f64>,
    pub db_size: Option<f64>,
    pub wal_size: Option<f64>,
    pub encrypted: bool,
}

/// What ceph-volume would do with one host's commands.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// In ceph-volume's order (its report's).
    pub osds: Vec<PlannedOsd>,
    /// Devices the commands pass that ceph-volume would leave alone, with
    /// why (it skips them silently).
    pub unused: Vec<Unused>,
    /// What ceph-volume would do that an operator rarely means.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Unused {
    pub path: Arc<str>,
    /// The role the selection gave it.
    pub role: Role,
    pub why: String,
}

/// Why the commands would make no OSD at all.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// ceph-volume's exit status (2 for a usage error, else 1).
    pub exit_code: i32,
    /// ceph-volume's own words (its exception or last error line).
    pub message: String,
    /// Which device or value it is about, where ceph-volume does not say.
    pub detail: Option<String>,
    /// osdkeeper's own limit rather than ceph-volume's.
    pub by_osdkeeper: bool,
}

impl Refusal {
    fn failed(message: impl Into<String>, detail: Option<String>) -> Refusal {
        Refusal { exit_code: 1, message: message.into(), detail, by_osdkeeper: false }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let who = if self.by_osdkeeper { "osdkeeper refuses" } else { "ceph-volume would fail" };
        write!(f, "{who}: {}", self.message)?;
        match &self.detail {
            Some(d) => write!(f, " ({d})"),
            None => Ok(()),
        }
    }
}

/// The layout of all of one host's commands (`lvm batch` is one; raw is
/// one `raw prepare` per data device). The first refusal stops the rest,
/// as it stops cephadm.
pub fn planned_osds(commands: &[Vec<String>], devices: &[Device], release: Release) -> Result<Layout, Refusal> {
    let mut out = Layout::default();
    for c in commands {
        let one = command_layout(c, devices, release)?;
        out.osds.extend(one.osds);
        out.unused.extend(one.unused);
        out.warnings.extend(one.warnings);
    }
    Ok(out)
}

/// What one ceph-volume invocation (the words after `ceph-volume`) would
/// make, read by the argparse of `release`'s ceph-volume.
pub fn command_layout<S: AsRef<str>>(words: &[S], devices: &[Device], release: Release) -> Result<Layout, Refusal> {
    let invocation = args::parse(words, None, release).map_err(|args::UsageError(message)| Refusal {
        exit_code: 2,
        message,
        detail: None,
        by_osdkeeper: false,
    })?;
    match invocation {
        args::Invocation::Batch(b) => lvm::plan(&b, devices),
        // The oracle pairs raw devices as cephadm passes them; so do we.
        args::Invocation::Raw(r) => Ok(Layout {
            osds: vec![PlannedOsd {
                data: r.data,
                db: r.db,
                wal: r.wal,
                osd_id: r.osd_id,
                data_size: None,
                db_size: None,
                wal_size: None,
                encrypted: r.dmcrypt,
            }],
            ..Layout::default()
        }),
    }
}

#[cfg(test)]
mod tests;
