//! `POST /v1/zap`: erasing a device's labels so that it can hold a new OSD.
//! Refused unless forced, for a device this agent does not report or may
//! not touch, by an agent serving a file, for a device in use: a ceph-osd
//! serving an OSD whose data is on it (by its LVM tags or its BlueStore
//! label), or any holder the kernel knows of (the exclusive open); and for
//! a disk that is not what the request names (`zap_identity`: another disk
//! at the path, an LV or a label of another OSD or cluster on it), checked
//! before anything runs and again under the claim. The wipe runs through
//! the exclusive handle (`exclusive`), so nothing can take the device
//! between the check and the wipe.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;

use crate::agent_server::ceph_volume::CephVolume;
use crate::agent_server::disks::data_dirs::{self, ReleaseError};
use crate::agent_server::disks::exclusive::{shown_len, wipe_ranges, ExclusiveDevice, ExclusiveError};
use crate::agent_server::disks::holders;
use crate::agent_server::disks::label::whoami;
use crate::agent_server::disks::zap_identity::{seen_before, seen_under_claim, udev_id, UDEV_DATA};
use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::device_list::is_loop_device;
use crate::agent_server::inventory::kernel::signatures;
use crate::agent_server::inventory::mounts::resolve;
use crate::agent_server::inventory::{Inventory, InventoryError};
use crate::agent_server::osd::status::{join_pids, osd_pids};
use crate::agent_server::process::{self, Keep, Limits, RunError};
use crate::wire::agent::{check_zap, DiskSeen, InventorySource, ZapExpect, ZapMismatch, ZapRequest, ZapResult};
use crate::wire::ceph_volume::DeviceReport;

#[derive(Debug, thiserror::Error)]
pub enum ZapError {
    #[error("must pass force: true to PERMANENTLY ERASE DEVICE DATA (refused to zap {0})")]
    NoForce(String),
    #[error("{0:?} is not a device path (expected /dev/...)")]
    BadPath(String),
    #[error("{0} is not among the devices this agent may touch (--devices)")]
    NotAllowed(String),
    #[error(
        "refusing to zap osd.{osd_id}: it has LVs on {devices}, which this agent may not touch (--devices); \
         nothing was wiped"
    )]
    OsdOutsideDevices { osd_id: u32, devices: String },
    #[error(
        "this agent serves a fixed inventory from --inventory-file {0} and wipes no devices; \
         run it without --inventory-file on the storage host"
    )]
    FixedInventory(String),
    #[error("{0} is not a device in this host's current inventory")]
    NotInInventory(String),
    #[error("{}", crate::agent_server::host_lock::BUSY)]
    AgentBusy,
    #[error(
        "refusing to zap {path}: osd.{osd_id} has its data on it and its ceph-osd runs on this host \
         (pids {pids}); stop the OSD first"
    )]
    OsdRunning { path: String, osd_id: u32, pids: String },
    #[error("refusing to zap {path}: it is busy (an exclusive open failed with EBUSY): {holders}")]
    DeviceBusy { path: String, holders: String },
    #[error("refusing to zap: {0}")]
    Device(ExclusiveError),
    #[error("refusing to zap {path}: {mismatch}; nothing was wiped")]
    NotExpected { path: String, mismatch: ZapMismatch },
    #[error(
        "refusing to zap the LVs of osd.{osd_id} (fsid {fsid}): ceph-volume lists them on {found}, not only on the \
         devices named ({named}); nothing was removed"
    )]
    LvsElsewhere { osd_id: u32, fsid: String, found: String, named: String },
    #[error("`{command}` failed with exit status {code} ({stderr}); nothing was wiped")]
    LvmZap { command: String, code: i32, stderr: String },
    #[error("could not run `{command}`: {source}; nothing was wiped")]
    LvmZapRun { command: String, source: RunError },
    #[error("`{command}` exited 0 but ceph-volume still lists LVs of osd.{osd_id} on {devices}")]
    LvsLeft { command: String, osd_id: u32, devices: String },
    #[error("`{command}` printed something unreadable: {message}")]
    Listing { command: String, message: String },
    #[error("wiped {path}, but {source}; a repeated zap finds the device blank and tries again")]
    DataDir { path: String, source: ReleaseError },
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    #[error("cannot list the host's processes: {0}")]
    Scan(std::io::Error),
    #[error("the zap stopped unexpectedly: {0}")]
    Task(String),
}

impl ZapError {
    pub fn status(&self) -> StatusCode {
        match self {
            ZapError::NoForce(_) | ZapError::BadPath(_) => StatusCode::BAD_REQUEST,
            ZapError::NotAllowed(_) | ZapError::OsdOutsideDevices { .. } => StatusCode::FORBIDDEN,
            ZapError::NotInInventory(_) => StatusCode::NOT_FOUND,
            ZapError::FixedInventory(_)
            | ZapError::AgentBusy
            | ZapError::OsdRunning { .. }
            | ZapError::DeviceBusy { .. }
            | ZapError::NotExpected { .. }
            | ZapError::LvsElsewhere { .. }
            | ZapError::Device(ExclusiveError::NotBlockDevice { .. })
            | ZapError::DataDir { source: ReleaseError::OsdRunning { .. }, .. } => StatusCode::CONFLICT,
            ZapError::LvmZapRun { source: RunError::TimedOut { .. }, .. } => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// The checks that need nothing but the request and the settings, made
/// before the host is looked at.
pub fn check_request(
    req: &ZapRequest,
    allowed: Option<&BTreeSet<String>>,
    fixed_file: Option<&Path>,
) -> Result<(), ZapError> {
    if !req.force {
        return Err(ZapError::NoForce(req.path.clone()));
    }
    check_target(&req.path, allowed, fixed_file)
}

/// Whether a device may be written to at all by this agent: a `/dev/` path,
/// among `--devices`, on an agent that serves the host's own disks (zaps
/// and probes both ask).
pub fn check_target(p: &str, allowed: Option<&BTreeSet<String>>, fixed_file: Option<&Path>) -> Result<(), ZapError> {
    let shaped = p.starts_with("/dev/")
        && p.len() > "/dev/".len()
        && !p.contains('\0')
        && !p.split('/').any(|c| c == ".." || c == ".");
    if !shaped {
        return Err(ZapError::BadPath(p.to_string()));
    }
    if allowed.is_some_and(|a| !a.contains(p)) {
        return Err(ZapError::NotAllowed(p.to_string()));
    }
    if let Some(file) = fixed_file {
        return Err(ZapError::FixedInventory(file.display().to_string()));
    }
    Ok(())
}

/// The OSD ids the inventory's LVM tags put on a device (any volume:
/// data, db or wal).
pub fn lv_osd_ids(device: &DeviceReport) -> BTreeSet<u32> {
    device.all_osd_ids().filter_map(crate::agent_server::osd::argv::parse_id).collect()
}

/// Everything a zap needs.
pub struct Zapper {
    pub inventory: Arc<Inventory>,
    pub ceph_volume: Arc<CephVolume>,
    pub roots: HostRoots,
    pub blkid: String,
}

impl Zapper {
    /// Zaps a device. The caller has made `check_request` and holds the
    /// agent's one-command-at-a-time lock.
    pub async fn zap(&self, req: &ZapRequest) -> Result<ZapResult, ZapError> {
        let path = req.path.clone();
        let reason = req.reason.as_deref().unwrap_or("no reason given");
        let taken = self.inventory.take().await?;
        let Some(device) = taken.device(&path) else {
            return Err(ZapError::NotInInventory(path));
        };
        // What the request names, held against the disk before anything runs.
        let named = match req.expect() {
            Some(expect) => {
                let seen = seen_before(device, &path, &self.blkid).await;
                if let Err(mismatch) = check_zap(&expect, &seen) {
                    return Err(ZapError::NotExpected { path, mismatch });
                }
                Some((expect, seen))
            }
            None => None,
        };
        for osd_id in lv_osd_ids(device) {
            let pids = self.osd_pids(osd_id).await?;
            if !pids.is_empty() {
                return Err(ZapError::OsdRunning { path, osd_id, pids: join_pids(&pids) });
            }
        }
        let roots = self.roots.clone();
        let owner_of = path.clone();
        let owner = tokio::task::spawn_blocking(move || data_dirs::running_owner(&roots, &owner_of))
            .await
            .map_err(|e| ZapError::Task(e.to_string()))?
            .map_err(ZapError::Scan)?;
        if let Some((osd_id, pids)) = owner {
            return Err(ZapError::OsdRunning { path, osd_id, pids: join_pids(&pids) });
        }
        tracing::info!(device = %path, %reason, "zap: checking that the device is free");
        let mut steps = Vec::new();
        if !device.lvs.is_empty() {
            if taken.report.source == InventorySource::CephVolume {
                self.check_stacked(&path, device).await?;
                steps.push(self.lvm_zap(&path).await?);
            } else {
                steps.push(
                    "did not run ceph-volume lvm zap: LVs are listed, but the inventory did not come from \
                     ceph-volume; the wipe below erases the LVM label only"
                        .to_string(),
                );
            }
        }
        let roots = self.roots.clone();
        let wiped_path = path.clone();
        let wiped = tokio::task::spawn_blocking(move || wipe(&wiped_path, &roots, named.as_ref()))
            .await
            .map_err(|e| ZapError::Task(e.to_string()))?;
        steps.extend(wiped?);
        if device.has_partitions() {
            steps.push(reread_partitions(&path).await);
        }
        match data_dirs::release(&self.roots, &path).await {
            Ok(released) => steps.extend(released),
            Err(source) => return Err(ZapError::DataDir { path, source }),
        }
        tracing::info!(device = %path, %reason, steps = %steps.join("; "), "zapped");
        Ok(ZapResult { path, steps })
    }

    async fn osd_pids(&self, osd_id: u32) -> Result<Vec<u32>, ZapError> {
        running_osd_pids(&self.roots, osd_id).await
    }

    /// ceph-volume's zap unmounts and wipes the LVs on a device before the
    /// device itself can be claimed, so each device stacked on it (or on a
    /// partition of it) must be claimable first: a mounted LV or one a
    /// running ceph-osd holds refuses the claim.
    async fn check_stacked(&self, path: &str, device: &DeviceReport) -> Result<(), ZapError> {
        let roots = self.roots.clone();
        let path = path.to_string();
        let partitions: Vec<String> =
            device.partitions.iter().filter(|p| !p.is_empty()).map(|p| p.to_string()).collect();
        tokio::task::spawn_blocking(move || {
            let real = resolve(&path);
            let name = real.as_deref().unwrap_or(&path).rsplit('/').next().unwrap_or("").to_string();
            for holder in holders::stacked(&roots, &name, &partitions) {
                let node = format!("/dev/{holder}");
                match ExclusiveDevice::probe(&node) {
                    Ok(()) => {}
                    Err(ExclusiveError::Busy { .. }) => {
                        let found = holders::find(&roots, &node, None, std::process::id());
                        return Err(ZapError::DeviceBusy {
                            path: format!("{path} ({node} on it)"),
                            holders: found.to_string(),
                        });
                    }
                    Err(e) => return Err(ZapError::Device(e)),
                }
            }
            Ok(())
        })
        .await
        .map_err(|e| ZapError::Task(e.to_string()))?
    }

    /// `ceph-volume lvm zap --destroy PATH`: removes the device's LVs and
    /// VG through LVM, which a raw wipe would leave behind as stale
    /// metadata (and cannot do at all while the LVs are active).
    async fn lvm_zap(&self, path: &str) -> Result<String, ZapError> {
        let args: Vec<String> = ["lvm", "zap", "--destroy", path].map(String::from).into();
        let mut env = Vec::new();
        if is_loop_device(path) {
            env.push(("CEPH_VOLUME_ALLOW_LOOP_DEVICES".to_string(), "1".to_string()));
        }
        let command = crate::agent_server::process::command_line(&self.ceph_volume.program, &args, &env);
        tracing::info!(%command, "running ceph-volume");
        let result = self
            .ceph_volume
            .run(&args, &env)
            .await
            .map_err(|source| ZapError::LvmZapRun { command: command.clone(), source })?;
        if result.exit_code != 0 {
            let stderr = result.stderr.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string();
            return Err(ZapError::LvmZap { command, code: result.exit_code, stderr });
        }
        Ok(format!("ran {command}"))
    }
}

/// The wipe proper, on a blocking thread: claim the device, check again
/// that it is the disk named with only what the request names on it, make
/// sure no daemon of the OSD its label names runs, zero both ends, flush,
/// release.
fn wipe(path: &str, roots: &HostRoots, named: Option<&(ZapExpect, DiskSeen)>) -> Result<Vec<String>, ZapError> {
    let dev = match ExclusiveDevice::open(path) {
        Ok(d) => d,
        Err(ExclusiveError::Busy { .. }) => {
            let real = resolve(path);
            let found = holders::find(roots, path, real.as_deref(), std::process::id());
            return Err(ZapError::DeviceBusy { path: path.to_string(), holders: found.to_string() });
        }
        Err(e) => return Err(ZapError::Device(e)),
    };
    let mut steps = vec![format!("held {path} exclusively (O_EXCL)")];
    // The head's label, or a copy further in (19.2+) when the head was wiped.
    let label = signatures::find_label(dev.size, |o, n| dev.read_at(o, n)).map_err(ZapError::Device)?;
    if let Some((expect, before)) = named {
        let id = dev.rdev().and_then(|rdev| udev_id(rdev, Path::new(UDEV_DATA)));
        let now = seen_under_claim(before, id, label.as_ref().map(|(_, block)| block.as_slice()));
        if let Err(mismatch) = check_zap(expect, &now) {
            return Err(ZapError::NotExpected { path: path.to_string(), mismatch });
        }
        steps.push(format!("checked under the claim that {path} is the disk named, with nothing else's on it"));
    }
    if let Some(osd_id) = label.and_then(|(_, block)| whoami(&block)) {
        // A daemon that has not opened its device yet (starting up) does
        // not make the open fail.
        let pids = osd_pids(roots, osd_id).map_err(ZapError::Scan)?;
        if !pids.is_empty() {
            return Err(ZapError::OsdRunning { path: path.to_string(), osd_id, pids: join_pids(&pids) });
        }
        steps.push(format!("found the BlueStore label of osd.{osd_id}, whose ceph-osd does not run here"));
    }
    for (offset, len) in wipe_ranges(dev.size) {
        dev.zero(offset, len).map_err(ZapError::Device)?;
        let copy = offset > 0 && len == signatures::LABEL_BLOCK;
        let what = if copy { " (where Ceph 19.2+ keeps a copy of the BlueStore label)" } else { "" };
        steps.push(format!("zeroed {} at offset {offset}{what}", shown_len(len)));
    }
    dev.sync().map_err(ZapError::Device)?;
    steps.push("flushed the writes to the device (fsync)".to_string());
    drop(dev);
    steps.push(format!("released {path}"));
    Ok(steps)
}

/// The kernel keeps the partitions it knew until it is told to look again;
/// without that, the zapped disk would still be reported with partitions.
async fn reread_partitions(path: &str) -> String {
    let mut cmd = tokio::process::Command::new("blockdev");
    cmd.args(["--rereadpt", path]).kill_on_drop(true);
    let limits = Limits { timeout: std::time::Duration::from_secs(30), max_output: 64 * 1024, keep: Keep::Tail };
    match process::run(cmd, limits).await {
        Ok(f) if f.status.success() => format!("blockdev --rereadpt {path}: the kernel re-read the partition table"),
        Ok(f) => format!(
            "blockdev --rereadpt {path} failed with exit status {} ({}); stale partitions may show until reboot",
            f.exit_code(),
            f.stderr.last_line()
        ),
        Err(e) => format!("blockdev --rereadpt {path}: {e}; stale partitions may show until reboot"),
    }
}

/// The pids of the host's running `ceph-osd -i ID` (the scan reads /proc:
/// off the runtime's threads).
pub(super) async fn running_osd_pids(roots: &HostRoots, osd_id: u32) -> Result<Vec<u32>, ZapError> {
    let roots = roots.clone();
    tokio::task::spawn_blocking(move || osd_pids(&roots, osd_id))
        .await
        .map_err(|e| ZapError::Task(e.to_string()))?
        .map_err(ZapError::Scan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ceph_volume::report_of;
    use serde_json::json;

    fn req(path: &str, force: bool) -> ZapRequest {
        ZapRequest {
            path: path.into(),
            force,
            reason: Some("test".into()),
            device_id: None,
            osd_fsids: None,
            cluster_fsid: None,
        }
    }

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn request_checks_in_order() {
        let e = check_request(&req("/dev/sdb", false), None, None).unwrap_err();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert!(e.to_string().starts_with("must pass force: true to PERMANENTLY ERASE DEVICE DATA"), "{e}");
        for bad in ["sdb", "/dev/", "/dev/../etc/passwd", "/dev/./sdb", "/etc/passwd", "/dev/sdb\0"] {
            let e = check_request(&req(bad, true), None, None).unwrap_err();
            assert!(matches!(e, ZapError::BadPath(_)), "{bad}: {e}");
            assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        }
        let allowed = set(&["/dev/loop4"]);
        let e = check_request(&req("/dev/sdb", true), Some(&allowed), None).unwrap_err();
        assert_eq!(e.status(), StatusCode::FORBIDDEN);
        assert_eq!(e.to_string(), "/dev/sdb is not among the devices this agent may touch (--devices)");
        assert!(check_request(&req("/dev/loop4", true), Some(&allowed), None).is_ok());
        let e = check_request(&req("/dev/loop4", true), Some(&allowed), Some(Path::new("/x/inv.json"))).unwrap_err();
        assert_eq!(e.status(), StatusCode::CONFLICT);
        assert!(e.to_string().contains("--inventory-file /x/inv.json and wipes no devices"), "{e}");
        // Force comes first: an unforced request learns nothing else.
        let e = check_request(&req("/etc/passwd", false), Some(&allowed), Some(Path::new("/x"))).unwrap_err();
        assert!(matches!(e, ZapError::NoForce(_)));
    }

    #[test]
    fn osd_ids_from_lvm_tags() {
        let read = |v: serde_json::Value| report_of(&v).unwrap();
        let d = read(json!({"path": "/dev/sdc", "lvs": [
            {"name": "osd-block-1", "osd_id": "4", "type": "block"},
            {"name": "osd-db-2", "osd_id": 12, "type": "db"},
            {"name": "home", "comment": "not used by ceph"},
            {"name": "odd", "osd_id": ""},
            {"name": "float", "osd_id": 7.0}
        ]}));
        // A whole number written as a float names its OSD too (the reader
        // writes numbers out; this check once took integers only).
        assert_eq!(lv_osd_ids(&d).into_iter().collect::<Vec<_>>(), [4, 7, 12]);
        assert!(lv_osd_ids(&read(json!({"path": "/dev/sdb", "lvs": []}))).is_empty());
    }

    #[test]
    fn statuses() {
        let busy =
            ZapError::DeviceBusy { path: "/dev/loop4".into(), holders: "held open by ceph-osd pid 1 (osd.4)".into() };
        assert_eq!(busy.status(), StatusCode::CONFLICT);
        assert_eq!(
            busy.to_string(),
            "refusing to zap /dev/loop4: it is busy (an exclusive open failed with EBUSY): held open by ceph-osd pid 1 (osd.4)"
        );
        assert_eq!(ZapError::NotInInventory("/dev/x".into()).status(), StatusCode::NOT_FOUND);
        assert_eq!(ZapError::AgentBusy.status(), StatusCode::CONFLICT);
        let running = ZapError::OsdRunning { path: "/dev/sdc".into(), osd_id: 4, pids: "9".into() };
        assert_eq!(running.status(), StatusCode::CONFLICT);
    }
}
