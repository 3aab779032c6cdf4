//! Claiming a device to write on it only while it is blank (a probe, the
//! replacement header): the facts the inventory has, what `blkid -p` finds,
//! then an exclusive open (`exclusive`) under which its label, holders and
//! partitions are looked at, so that nothing can take the disk between the
//! check and the write.

use std::time::Duration;

use crate::agent_server::disks::blank::{refusals, BlankFacts};
use crate::agent_server::disks::exclusive::{ExclusiveDevice, ExclusiveError};
use crate::agent_server::disks::holders;
use crate::agent_server::disks::label::{whoami, LABEL_LEN};
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::kernel::{signatures, sysfs, Blkid};
use crate::agent_server::inventory::mounts::resolve;
use crate::agent_server::process::{self, Keep, Limits};
use crate::wire::ceph_volume::DeviceReport;

/// How long a process may have the disk open before it counts as a user:
/// an LVM scan keeps every disk open for its whole run, seconds on a busy
/// host; a real user (a dd, a mount helper) stays longer.
const HOLDER_LOOKS: u32 = 20;
const HOLDER_PAUSE: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("{0}")]
    Device(ExclusiveError),
    /// Why it is not blank, one reason per finding.
    #[error("it is not blank: {}", .0.join("; "))]
    NotBlank(Vec<String>),
}

/// A blank device held exclusively.
pub struct Claimed {
    pub dev: ExclusiveDevice,
    /// Processes that had it open only for a moment (a scan, not a user).
    pub brief: Vec<String>,
}

/// What the inventory taken now says of the device.
pub fn facts_of(device: &DeviceReport) -> BlankFacts {
    BlankFacts {
        lvs: device.lvs.len(),
        ceph_device: device.ceph_device,
        partitions: device.partitions.iter().map(|p| p.to_string()).collect(),
        ..BlankFacts::default()
    }
}

/// What `blkid -p` finds on the device (filesystems, LVM, RAID members,
/// partition tables). It exits 2 when it finds nothing; a blkid that
/// cannot run leaves the on-disk checks under the claim.
pub async fn blkid_signatures(blkid: &str, path: &str) -> Vec<String> {
    let mut cmd = tokio::process::Command::new(blkid);
    cmd.args(["-c", "/dev/null", "-p", "-o", "export", path]).kill_on_drop(true);
    let limits = Limits { timeout: Duration::from_secs(30), max_output: 64 * 1024, keep: Keep::Head };
    match process::run(cmd, limits).await {
        Ok(out) if out.status.success() => {
            let found = Blkid::parse_export(&out.stdout.text());
            let info = found.get(path).cloned().unwrap_or_default();
            ["TYPE", "PTTYPE"].iter().filter_map(|k| info.get(*k).cloned()).collect()
        }
        Ok(out) if out.exit_code() == 2 => Vec::new(),
        Ok(out) => {
            tracing::warn!(device = path, code = out.exit_code(), "blkid -p failed: {}", out.stderr.last_line());
            Vec::new()
        }
        Err(e) => {
            tracing::warn!(device = path, "cannot run blkid before writing on the device: {e}");
            Vec::new()
        }
    }
}

/// On a blocking thread: claims the device, completes the facts with what
/// only the host can see while it is held (its label, its holders, the
/// kernel's partitions), and keeps it only if it is blank.
pub fn claim_blank(path: &str, roots: &HostRoots, mut facts: BlankFacts) -> Result<Claimed, ClaimError> {
    let real = resolve(path);
    let name = real.as_deref().unwrap_or(path).rsplit('/').next().unwrap_or("").to_string();
    for p in sysfs::partition_names(&roots.sys_class_block.join(&name)) {
        if !facts.partitions.contains(&p) {
            facts.partitions.push(p);
        }
    }
    let mut brief = Vec::new();
    let (dev, head, label) = match ExclusiveDevice::open(path) {
        Ok(dev) => {
            // A ceph-osd may hold its disk exclusively or only with flock:
            // the claim sees the first, the open files both. Looked at
            // while held, so nothing new can claim it in between.
            let (lasting, gone) =
                holders::lasting(roots, path, real.as_deref(), std::process::id(), HOLDER_LOOKS, || {
                    std::thread::sleep(HOLDER_PAUSE)
                });
            facts.holders = lasting;
            brief = gone.iter().map(|g| format!("{} pid {}", g.comm, g.pid)).collect();
            let head = dev.read_head(LABEL_LEN + 512).map_err(ClaimError::Device)?;
            let label = signatures::find_label(dev.size, |o, n| dev.read_at(o, n)).map_err(ClaimError::Device)?;
            (Some(dev), head, label)
        }
        Err(ExclusiveError::Busy { .. }) => {
            // Read (only) to say what is on it, too.
            facts.busy = true;
            facts.holders = holders::find(roots, path, real.as_deref(), std::process::id());
            let node = std::path::Path::new(path);
            (None, signatures::read_head(node).unwrap_or_default(), signatures::read_label(node).unwrap_or_default())
        }
        Err(e) => return Err(ClaimError::Device(e)),
    };
    if let Some((offset, block)) = label {
        facts.bluestore = Some(whoami(&block));
        facts.bluestore_at = offset;
    }
    facts.gpt = signatures::has_gpt_header(&head);
    let reasons = refusals(&facts);
    match dev {
        Some(dev) if reasons.is_empty() => Ok(Claimed { dev, brief }),
        _ => Err(ClaimError::NotBlank(reasons)),
    }
}
