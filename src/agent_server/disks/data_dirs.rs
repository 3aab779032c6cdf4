//! OSD data directories (`/var/lib/ceph/osd/CLUSTER-ID`) left behind by a
//! removed OSD. ceph-volume's prepare mounts a tmpfs there, and activate
//! primes it from the BlueStore label: keyring, `whoami`, and a `block`
//! link to the device. Once the OSD is purged or destroyed and its device
//! zapped, that tmpfs is stale, and because prepare mounts a new tmpfs
//! without looking, the next OSD made with the same id (a `--replace`)
//! gets a second layer over it, one more on every replacement. So a zap
//! also releases them: every tmpfs layer on a data dir whose `block` leads
//! to the zapped device, while no ceph-osd of that id runs here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::agent_server::host_roots::HostRoots;
use crate::agent_server::inventory::mounts::{resolve, Mounts};
use crate::agent_server::osd::status::{join_pids, osd_pids};
use crate::agent_server::process::{self, Keep, Limits};

/// A data dir whose `block` leads to a given device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    pub path: PathBuf,
    /// From its `whoami` file; `None` when it has none or cannot be read.
    pub osd_id: Option<u32>,
}

/// Why a data dir was not released. The wipe is done by then.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("the data dir {dir} belongs to osd.{osd_id}, whose ceph-osd runs on this host (pids {pids})")]
    OsdRunning { dir: String, osd_id: u32, pids: String },
    #[error("cannot list the host's processes: {0}")]
    Scan(std::io::Error),
    #[error("cannot read the mount table: {0}")]
    Mounts(std::io::Error),
    #[error("`umount {dir}` failed: {reason}")]
    Umount { dir: String, reason: String },
}

/// The data dirs under `root` whose `block` link resolves to `device`
/// (already resolved by the caller). Entries that cannot be read are not
/// ours to judge and are passed over.
pub fn of_device(root: &Path, device: &str) -> Vec<DataDir> {
    let Ok(entries) = std::fs::read_dir(root) else {
        // No data root (a host that never ran ceph-volume): nothing to release.
        return Vec::new();
    };
    let mut found: Vec<DataDir> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|dir| {
            let block = dir.join("block");
            resolve(&block.to_string_lossy()).as_deref() == Some(device)
        })
        .map(|path| {
            let osd_id = std::fs::read_to_string(path.join("whoami")).ok().and_then(|t| t.trim().parse().ok());
            DataDir { path, osd_id }
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The first data dir of `device` whose OSD runs here, with its pids: the
/// zap refuses before writing anything.
pub fn running_owner(roots: &HostRoots, device: &str) -> std::io::Result<Option<(u32, Vec<u32>)>> {
    let Some(real) = resolve(device) else {
        return Ok(None);
    };
    for osd_id in of_device(&roots.osd_data, &real).into_iter().filter_map(|d| d.osd_id) {
        let pids = osd_pids(roots, osd_id)?;
        if !pids.is_empty() {
            return Ok(Some((osd_id, pids)));
        }
    }
    Ok(None)
}

/// Unmounts every tmpfs layer of each data dir of `device` and removes the
/// dirs left empty; says what it did, one line each. Safe to repeat: a
/// released dir is no longer found.
pub async fn release(roots: &HostRoots, device: &str) -> Result<Vec<String>, ReleaseError> {
    let Some(real) = resolve(device) else {
        return Ok(Vec::new());
    };
    let mut steps = Vec::new();
    for dir in of_device(&roots.osd_data, &real) {
        let shown = dir.path.display().to_string();
        if let Some(osd_id) = dir.osd_id {
            let pids = osd_pids(roots, osd_id).map_err(ReleaseError::Scan)?;
            if !pids.is_empty() {
                return Err(ReleaseError::OsdRunning { dir: shown, osd_id, pids: join_pids(&pids) });
            }
        }
        let mut layers = tmpfs_layers(roots, &shown)?;
        let stacked = layers;
        while layers > 0 {
            umount(&shown).await?;
            let left = tmpfs_layers(roots, &shown)?;
            if left >= layers {
                return Err(ReleaseError::Umount {
                    dir: shown,
                    reason: "it succeeded, but the mount is still there".into(),
                });
            }
            layers = left;
        }
        let whose = dir.osd_id.map(|id| format!(" of osd.{id}")).unwrap_or_default();
        if stacked > 0 {
            let times = if stacked == 1 { String::new() } else { format!(" ({stacked} layers)") };
            steps.push(format!("unmounted the stale tmpfs data dir {shown}{whose}{times}"));
        }
        // Only an emptied mount point goes: a data dir on disk (prepared
        // with --no-tmpfs) keeps its files for whoever looks at it.
        if std::fs::remove_dir(&dir.path).is_ok() {
            steps.push(format!("removed the empty data dir {shown}"));
        }
    }
    Ok(steps)
}

fn tmpfs_layers(roots: &HostRoots, dir: &str) -> Result<usize, ReleaseError> {
    Ok(Mounts::read(&roots.proc).map_err(ReleaseError::Mounts)?.layers(dir, "tmpfs"))
}

async fn umount(dir: &str) -> Result<(), ReleaseError> {
    let mut cmd = tokio::process::Command::new("umount");
    cmd.arg(dir).kill_on_drop(true);
    let limits = Limits { timeout: Duration::from_secs(30), max_output: 64 * 1024, keep: Keep::Tail };
    let failed = |reason: String| ReleaseError::Umount { dir: dir.to_string(), reason };
    match process::run(cmd, limits).await {
        Ok(f) if f.status.success() => Ok(()),
        Ok(f) => Err(failed(format!("exit status {}: {}", f.exit_code(), f.stderr.last_line()))),
        Err(e) => Err(failed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_data_dirs_whose_block_leads_to_the_device() {
        let root = tempfile::tempdir().unwrap();
        let disks = tempfile::tempdir().unwrap();
        let ours = disks.path().join("disk-a");
        let other = disks.path().join("disk-b");
        std::fs::write(&ours, b"").unwrap();
        std::fs::write(&other, b"").unwrap();
        let make = |name: &str, block: Option<&Path>, whoami: Option<&str>| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            if let Some(b) = block {
                std::os::unix::fs::symlink(b, dir.join("block")).unwrap();
            }
            if let Some(w) = whoami {
                std::fs::write(dir.join("whoami"), w).unwrap();
            }
        };
        make("ceph-6", Some(&ours), Some("6\n"));
        make("ceph-7", Some(&other), Some("7\n"));
        make("ceph-8", None, Some("8\n"));
        make("ceph-9", Some(&ours), Some("not a number"));
        let real = resolve(&ours.to_string_lossy()).unwrap();
        let found = of_device(root.path(), &real);
        assert_eq!(
            found,
            [
                DataDir { path: root.path().join("ceph-6"), osd_id: Some(6) },
                DataDir { path: root.path().join("ceph-9"), osd_id: None },
            ]
        );
        assert!(of_device(&root.path().join("missing"), &real).is_empty());
    }
}
