//! `POST /v1/replace-header`: the mark ceph-volume 19.2.1+ reads as "this
//! disk is being replaced". Its `Device.is_being_replaced` reads the first
//! 26 bytes of the disk and compares them, NULs dropped, with
//! `CEPH_DEVICE_BEING_REPLACED`; such a disk is reported `being_replaced`
//! with the reject reason "Is being replaced", so that no spec takes it
//! (`ceph-volume lvm zap --replace-block` writes it, `--clear-replace-header`
//! zeroes it).
//!
//! The header is written here, not through ceph-volume's zap: it must be
//! the last thing written on the disk (the removal's own wipe of the disk
//! would take it), ceph-volume writes it on LVM OSDs' disks only, and only
//! while it removes their last LV. It is written on a blank disk only
//! (`claim`: checked with the disk held exclusively, the write made through
//! that same handle), on the disk the daemon named (its id), over zeros or
//! over the header itself; erasing zeroes those 26 bytes only where the
//! header is, and leaves a disk without it alone, whatever is on it.

use std::sync::Arc;

use axum::http::StatusCode;

use crate::agent_server::disks::claim::{blkid_signatures, claim_blank, facts_of, ClaimError};
use crate::agent_server::disks::exclusive::{ExclusiveDevice, ExclusiveError};
use crate::agent_server::disks::zap::ZapError;
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::kernel::signatures;
use crate::agent_server::inventory::{Inventory, InventoryError};
use crate::wire::agent::{ReplaceHeaderRequest, ReplaceHeaderResult};
use crate::wire::ceph_volume::same_disk;

/// ceph-volume's `BEING_REPLACED_HEADER`, at the start of the disk.
pub const HEADER: &[u8] = b"CEPH_DEVICE_BEING_REPLACED";

#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// Not a device path, not among `--devices`, or a fixed inventory.
    #[error("{0}")]
    Target(ZapError),
    #[error("device_id is required: the id of the disk the header is meant for ({0})")]
    NoDeviceId(String),
    #[error("{0} is not a device in this host's current inventory")]
    NotInInventory(String),
    #[error("refusing to mark {path}: the disk there now is {found:?}, not {expected:?}; nothing was written")]
    OtherDisk { path: String, expected: String, found: String },
    #[error("refusing to mark {path}: it is not blank: {why}; nothing was written")]
    NotBlank { path: String, why: String },
    #[error(
        "refusing to mark {path}: its first bytes are neither zeros nor the header ({found}); nothing was written"
    )]
    Unknown { path: String, found: String },
    #[error("{path}: {source}")]
    Device { path: String, source: ExclusiveError },
    #[error("the header on {path} reads {found} after it was written: the write did not stick")]
    NotStuck { path: String, found: String },
    #[error("{}", crate::agent_server::host_lock::BUSY)]
    AgentBusy,
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    #[error("the header write stopped unexpectedly: {0}")]
    Task(String),
}

impl HeaderError {
    pub fn status(&self) -> StatusCode {
        match self {
            HeaderError::Target(e) => e.status(),
            HeaderError::NoDeviceId(_) => StatusCode::BAD_REQUEST,
            HeaderError::NotInInventory(_) => StatusCode::NOT_FOUND,
            HeaderError::OtherDisk { .. }
            | HeaderError::NotBlank { .. }
            | HeaderError::Unknown { .. }
            | HeaderError::AgentBusy
            | HeaderError::Device { source: ExclusiveError::Busy { .. }, .. } => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// What the start of a disk holds, as far as the header goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    Marked,
    Zeros,
    Other,
}

/// ceph-volume's reading: the first 26 bytes with their NULs dropped.
pub fn head_of(bytes: &[u8]) -> Head {
    let first = &bytes[..bytes.len().min(HEADER.len())];
    let kept: Vec<u8> = first.iter().copied().filter(|b| *b != 0).collect();
    if kept == HEADER {
        Head::Marked
    } else if kept.is_empty() {
        Head::Zeros
    } else {
        Head::Other
    }
}

/// The checks that need nothing but the request and the settings.
pub fn check_request(
    req: &ReplaceHeaderRequest,
    allowed: Option<&std::collections::BTreeSet<String>>,
    fixed_file: Option<&std::path::Path>,
) -> Result<(), HeaderError> {
    crate::agent_server::disks::zap::check_target(&req.path, allowed, fixed_file).map_err(HeaderError::Target)?;
    if req.device_id.trim().is_empty() {
        return Err(HeaderError::NoDeviceId(req.path.clone()));
    }
    Ok(())
}

pub struct HeaderMarker {
    pub inventory: Arc<Inventory>,
    pub roots: HostRoots,
    pub blkid: String,
}

impl HeaderMarker {
    /// Writes or erases the header. The caller has made `check_request` and
    /// holds the agent's one-command-at-a-time lock. Safe to repeat: a disk
    /// already as asked is left alone.
    pub async fn set(&self, req: &ReplaceHeaderRequest) -> Result<ReplaceHeaderResult, HeaderError> {
        let path = req.path.clone();
        let taken = self.inventory.take().await?;
        let Some(device) = taken.device(&path) else {
            return Err(HeaderError::NotInInventory(path));
        };
        if !same_disk(&device.device_id, &req.device_id) {
            return Err(HeaderError::OtherDisk {
                path,
                expected: req.device_id.clone(),
                found: device.device_id.to_string(),
            });
        }
        if !req.mark {
            // A disk without the header is left alone, whatever is on it
            // (the OSD of a replacement stopped before its zap).
            let node = std::path::Path::new(&path);
            let head = signatures::read_head(node).map_err(|e| HeaderError::Device {
                path: path.clone(),
                source: ExclusiveError::Io { what: "read", path: path.clone(), source: e },
            })?;
            if head_of(&head) != Head::Marked {
                let steps = vec![format!("{path} has no header: nothing to erase")];
                return Ok(ReplaceHeaderResult { path, marked: false, changed: false, steps });
            }
        }
        let mut facts = facts_of(device);
        facts.signatures = blkid_signatures(&self.blkid, &path).await;
        let roots = self.roots.clone();
        let mark = req.mark;
        let result = tokio::task::spawn_blocking(move || {
            let claimed = claim_blank(&path, &roots, facts).map_err(|e| match e {
                ClaimError::NotBlank(reasons) => HeaderError::NotBlank { path: path.clone(), why: reasons.join("; ") },
                ClaimError::Device(source) => HeaderError::Device { path: path.clone(), source },
            })?;
            let mut steps = vec![format!("held {path} exclusively (O_EXCL) and found it blank")];
            let changed = write(&claimed.dev, mark, &mut steps)?;
            steps.push(format!("released {path}"));
            Ok(ReplaceHeaderResult { path, marked: mark, changed, steps })
        })
        .await
        .map_err(|e| HeaderError::Task(e.to_string()))?;
        if let Ok(r) = &result {
            tracing::info!(device = %r.path, mark, changed = r.changed, reason = req.reason.as_deref().unwrap_or(""), "replacement header");
        }
        result
    }
}

/// Writes (or zeroes) the header through the claimed handle, flushes it and
/// reads it back; whether anything was written.
fn write(dev: &ExclusiveDevice, mark: bool, steps: &mut Vec<String>) -> Result<bool, HeaderError> {
    let io = |source| HeaderError::Device { path: dev.path.clone(), source };
    let head = dev.read_head(HEADER.len()).map_err(io)?;
    let wanted = if mark { Head::Marked } else { Head::Zeros };
    match (head_of(&head), mark) {
        (now, _) if now == wanted => {
            steps.push(format!(
                "{} {}: nothing to write",
                dev.path,
                if mark { "has the header" } else { "has no header" }
            ));
            return Ok(false);
        }
        (Head::Other, true) => return Err(HeaderError::Unknown { path: dev.path.clone(), found: shown(&head) }),
        (Head::Other, false) => {
            steps.push(format!("{} has no header (its first bytes are {}): nothing to erase", dev.path, shown(&head)));
            return Ok(false);
        }
        _ => {}
    }
    if mark {
        dev.write_at(0, HEADER).map_err(io)?;
    } else {
        dev.zero(0, HEADER.len() as u64).map_err(io)?;
    }
    dev.sync().map_err(io)?;
    let after = dev.read_head(HEADER.len()).map_err(io)?;
    if head_of(&after) != wanted {
        return Err(HeaderError::NotStuck { path: dev.path.clone(), found: shown(&after) });
    }
    steps.push(if mark {
        format!("wrote {} at the start of {} and flushed it", String::from_utf8_lossy(HEADER), dev.path)
    } else {
        format!("zeroed the header at the start of {} and flushed it", dev.path)
    });
    Ok(true)
}

/// Bytes as an operator can read them: text where printable, else hex.
fn shown(bytes: &[u8]) -> String {
    if bytes.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?}", String::from_utf8_lossy(bytes))
    } else {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_is_read_as_ceph_volume_reads_it() {
        let mut disk = vec![0u8; 512];
        assert_eq!(head_of(&disk), Head::Zeros);
        disk[..HEADER.len()].copy_from_slice(HEADER);
        assert_eq!(head_of(&disk), Head::Marked);
        // ceph-volume drops NULs before comparing.
        let spaced: Vec<u8> = HEADER.iter().flat_map(|b| [0, *b]).take(HEADER.len()).collect();
        assert_eq!(head_of(&spaced), Head::Other, "26 bytes with NULs among them hold only half the header");
        disk[0] = b'X';
        assert_eq!(head_of(&disk), Head::Other);
        assert_eq!(head_of(b"\x00\x00LVM2"), Head::Other);
    }

    #[test]
    fn a_request_names_a_device_path_and_the_disk() {
        let req = |path: &str, id: &str| ReplaceHeaderRequest {
            path: path.into(),
            mark: true,
            device_id: id.into(),
            reason: None,
        };
        let e = check_request(&req("/etc/passwd", "QEMU_HDD_1"), None, None).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        let e = check_request(&req("/dev/sdb", " "), None, None).unwrap_err();
        assert_eq!(e.to_string(), "device_id is required: the id of the disk the header is meant for (/dev/sdb)");
        assert!(check_request(&req("/dev/sdb", "QEMU_HDD_1"), None, None).is_ok());
    }

    #[test]
    fn shown_bytes_are_text_or_hex() {
        assert_eq!(shown(b"LABELONE"), "\"LABELONE\"");
        assert_eq!(shown(&[0, 0xff]), "00ff");
    }
}
