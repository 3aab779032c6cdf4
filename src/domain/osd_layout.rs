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

use std::sync::Arc;

use crate::domain::inventory::Device;
use crate::domain::selection::Selection;
use crate::domain::spec::{DriveSpec, Method};

#[derive(Debug, Clone, PartialEq)]
pub struct PlannedOsd {
    pub data: Arc<str>,
    pub db: Option<Arc<str>>,
    pub wal: Option<Arc<str>>,
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
                osd_id: claims.get(i).cloned(),
            })
            .collect());
    }
    let find = |path: &Arc<str>| devices.iter().find(|d| d.path == *path);
    let per_device: usize = spec.osds_per_device.as_deref().and_then(|n| n.parse().ok()).unwrap_or(1);
    let mut ids: Vec<String> = claims.to_vec();
    let mut osds = Vec::new();
    for data in sel.data.iter().filter(|p| find(p).is_some_and(lvm_available)) {
        for _ in 0..per_device {
            osds.push(PlannedOsd { data: data.clone(), db: None, wal: None, osd_id: ids.pop() });
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
        let per_fast = requested.div_ceil(fast.len());
        let mut slots: Vec<Arc<str>> = Vec::new();
        for path in fast {
            let Some(dev) = find(path).filter(|d| lvm_available(d)) else { continue };
            let free = per_fast.saturating_sub(dev.lvs.len());
            let room = osds.len().saturating_sub(slots.len());
            slots.extend(std::iter::repeat_n(path.clone(), free.min(room)));
        }
        if slots.is_empty() {
            return Ok(Vec::new());
        }
        if slots.len() != osds.len() {
            let kind = if is_db { "db" } else { "wal" };
            return Err(format!("ceph-volume would fail: {} {kind} slots for {} OSDs", slots.len(), osds.len()));
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

/// ceph-volume's LVM availability: a disk that already carries a volume
/// group only needs free extents; any other disk must have no reject reason.
fn lvm_available(d: &Device) -> bool {
    let has = |r: &str| d.rejected_reasons.iter().any(|x| &**x == r);
    if has("LVM detected") {
        !has("Insufficient space (<10 extents) on vgs")
    } else {
        d.rejected_reasons.is_empty()
    }
}
