//! The ceph-volume command cephadm 16.2 runs for a host's selection
//! (`translate.to_ceph_volume`), flag for flag and in the same order, so that
//! osdkeeper creates the same OSDs cephadm would.

use crate::domain::selection::Selection;
use crate::domain::spec::{DriveSpec, Method};
use crate::domain::value::excerpt;

/// The commands for one host; empty when nothing was selected as data.
/// cephadm's dry-run variant appends `plan::PREVIEW_SUFFIX`.
pub fn ceph_volume_commands(spec: &DriveSpec, sel: &Selection, osd_id_claims: &[String]) -> Vec<String> {
    if sel.data.is_empty() {
        return Vec::new();
    }
    let raw = spec.method == Some(Method::Raw);
    let mut cmds: Vec<String> = if raw {
        sel.data
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let mut c = format!("raw prepare --bluestore --data {d}");
                if let Some(db) = sel.db.get(i) {
                    c.push_str(&format!(" --block.db {db}"));
                }
                if let Some(wal) = sel.wal.get(i) {
                    c.push_str(&format!(" --block.wal {wal}"));
                }
                c
            })
            .collect()
    } else {
        let mut c = format!("lvm batch --no-auto {}", sel.data.join(" "));
        if !sel.db.is_empty() {
            c.push_str(&format!(" --db-devices {}", sel.db.join(" ")));
        }
        if !sel.wal.is_empty() {
            c.push_str(&format!(" --wal-devices {}", sel.wal.join(" ")));
        }
        if let Some(v) = &spec.block_wal_size {
            c.push_str(&format!(" --block-wal-size {v}"));
        }
        if let Some(v) = &spec.block_db_size {
            c.push_str(&format!(" --block-db-size {v}"));
        }
        vec![c]
    };
    for (i, c) in cmds.iter_mut().enumerate() {
        if spec.encrypted {
            c.push_str(" --dmcrypt");
        }
        if let Some(n) = &spec.osds_per_device {
            c.push_str(&format!(" --osds-per-device {n}"));
        }
        if let Some(f) = &spec.data_allocate_fraction {
            c.push_str(&format!(" --data-allocate-fraction {f}"));
        }
        if raw {
            // One prepare per disk, so one claimed id each: `raw prepare`
            // takes `--osd-id` (cephadm 16.2 passes all as `--osd-ids`,
            // which `raw prepare` refuses).
            if let Some(id) = osd_id_claims.get(i) {
                c.push_str(&format!(" --osd-id {id}"));
            }
        } else if !osd_id_claims.is_empty() {
            c.push_str(&format!(" --osd-ids {}", osd_id_claims.join(" ")));
        }
        if !raw {
            c.push_str(" --yes --no-systemd");
        }
        if let Some(class) = &spec.crush_device_class {
            c.push_str(&format!(" --crush-device-class {class}"));
        }
    }
    cmds
}

/// cephadm refuses raw mode unless data and db (and wal) pair up one to one.
pub fn raw_ratio_error(spec: &DriveSpec, sel: &Selection, host: &str) -> Option<String> {
    if spec.method != Some(Method::Raw) {
        return None;
    }
    let nd = sel.data.len();
    for (kind, n) in [("db", sel.db.len()), ("wal", sel.wal.len())] {
        if nd > 0 && n > 0 && nd != n {
            return Some(format!(
                "Raw mode only supports a 1:1 ratio of data to {kind} devices. Found {nd} potential data device(s) and {n} potential {kind} device(s) on host {}",
                excerpt(host)
            ));
        }
    }
    None
}
