//! The OSDs ceph-volume's `lvm batch` would create from a selection: one row
//! per OSD with its data device and the db/wal device it would get. This is
//! what cephadm's dry-run table lists (it asks ceph-volume on the host for a
//! report; we compute it from the inventory without asking anyone).
//!
//! Followed from ceph-volume 16.2's batch planning: unusable data devices are
//! dropped silently, each fast device gets ceil(requested OSDs / fast devices)
//! slots, and slots are handed out from the end of the list, so the first
//! data device lands on the last db device. Sizes (block_db_size against
//! free space) are not checked here.

use crate::domain::inventory::Device;
use crate::domain::selection::Selection;
use crate::domain::spec::{DriveSpec, Method};

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedOsd {
    pub data: String,
    pub db: Option<String>,
    pub wal: Option<String>,
    pub osd_id: Option<String>,
}

/// The rows, or why ceph-volume would refuse the batch.
pub fn planned_osds(
    spec: &DriveSpec,
    sel: &Selection,
    devices: &[Device],
    claims: &[String],
) -> Result<Vec<PlannedOsd>, String> {
    if sel.data.is_empty() {
        return Ok(Vec::new());
    }
    if spec.method == Some(Method::Raw) {
        return Ok(sel
            .data
            .iter()
            .enumerate()
            .map(|(i, d)| PlannedOsd {
                data: d.clone(),
                db: sel.db.get(i).cloned(),
                wal: sel.wal.get(i).cloned(),
                osd_id: None,
            })
            .collect());
    }
    let lvm_ok = |path: &String| {
        devices
            .iter()
            .find(|d| &d.path == path)
            .is_some_and(lvm_available)
    };
    let per_device: usize = spec
        .osds_per_device
        .as_deref()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let mut ids: Vec<String> = claims.to_vec();
    let mut osds = Vec::new();
    for data in sel.data.iter().filter(|p| lvm_ok(p)) {
        for _ in 0..per_device {
            osds.push(PlannedOsd {
                data: data.clone(),
                db: None,
                wal: None,
                osd_id: ids.pop(),
            });
        }
    }
    if osds.is_empty() {
        return Ok(osds);
    }
    let requested = per_device * sel.data.len();
    for (fast, is_db) in [(&sel.db, true), (&sel.wal, false)] {
        if fast.is_empty() {
            continue;
        }
        let mut slots = fast_slots(fast, devices, requested, osds.len());
        if slots.is_empty() {
            return Ok(Vec::new());
        }
        if slots.len() != osds.len() {
            return Err(format!(
                "ceph-volume would fail: {} {} slots for {} OSDs",
                slots.len(),
                if is_db { "db" } else { "wal" },
                osds.len()
            ));
        }
        for osd in &mut osds {
            let slot = slots.pop();
            if is_db {
                osd.db = slot;
            } else {
                osd.wal = slot;
            }
        }
    }
    Ok(osds)
}

fn fast_slots(
    fast: &[String],
    devices: &[Device],
    requested: usize,
    new_osds: usize,
) -> Vec<String> {
    let per_device = requested.div_ceil(fast.len().max(1));
    let mut out = Vec::new();
    for path in fast {
        let Some(dev) = devices.iter().find(|d| &d.path == path) else {
            continue;
        };
        if !lvm_available(dev) {
            continue;
        }
        let mut occupied = dev.lvs.len();
        while out.len() < new_osds && occupied < per_device {
            occupied += 1;
            out.push(path.clone());
        }
    }
    out
}

/// ceph-volume's LVM availability: a disk that already carries a volume
/// group only needs free extents; any other disk must have no reject reason.
fn lvm_available(d: &Device) -> bool {
    let has = |r: &str| d.rejected_reasons.iter().any(|x| x == r);
    if has("LVM detected") {
        !has("Insufficient space (<10 extents) on vgs")
    } else {
        d.rejected_reasons.is_empty()
    }
}
