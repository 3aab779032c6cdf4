//! Where a host's inventory comes from, one scan at a time: a fixed file
//! (`--inventory-file`), or the host itself, through ceph-volume when it
//! works and through the kernel's view otherwise. Either all devices, or
//! only those cephadm would consider (`batch_filter`).

pub mod batch_filter;
pub mod device_list;
pub mod kernel;
pub mod mounts;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::agent_server::ceph_volume::release::KnownRelease;
use crate::agent_server::ceph_volume::CephVolume;
use crate::agent_server::inventory::batch_filter::BatchFilter;
use crate::agent_server::inventory::device_list::Devices;
use crate::agent_server::inventory::kernel::gather::{self, KernelError, Tools};
use crate::agent_server::inventory::kernel::KernelPaths;
use crate::agent_server::inventory::mounts::Mounts;
use crate::wire::agent::{InventoryReport, InventorySource};
use crate::wire::ceph_volume::{reports_of, CephRelease, DeviceReport};

/// After ceph-volume failed, the kernel's view is used without asking it
/// again for this long (a failing ceph-volume costs seconds per scan).
const CEPH_VOLUME_RETRY: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error("cannot read the inventory file {path}: {source}")]
    FileRead { path: String, source: std::io::Error },
    #[error("the inventory file {path} is not a ceph-volume inventory (a JSON list of devices): {message}")]
    FileFormat { path: String, message: String },
    #[error("cannot read the host's devices: {0}")]
    Kernel(#[from] KernelError),
    #[error("the kernel's view of the host's devices does not read as ceph-volume's: {0}")]
    KernelReport(serde_json::Error),
    #[error("cannot read the mount table: {0}")]
    Mounts(std::io::Error),
    #[error("the inventory scan stopped unexpectedly: {0}")]
    Task(String),
}

/// Which devices an inventory lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Every device, as `ceph-volume inventory` lists them.
    All,
    /// Only what `ceph-volume inventory --filter-for-batch` lists, which is
    /// what cephadm matches specs against.
    ForBatch,
}

/// Where devices are read from.
pub enum Source {
    /// A file, read again for every inventory so that tests and demos can
    /// change a host's disks by editing it.
    File { path: PathBuf },
    /// The host's own disks.
    Host(Box<HostScanner>),
}

/// Reads the host's disks: ceph-volume first, the kernel's view when
/// ceph-volume fails or when loop devices were named (ceph-volume skips
/// those).
pub struct HostScanner {
    pub ceph_volume: CephVolume,
    pub kernel_paths: KernelPaths,
    pub tools: Tools,
    /// Skip ceph-volume: `--devices` names loop devices.
    pub kernel_only: bool,
    /// `/proc`, for the mount table.
    pub proc_root: PathBuf,
    /// When ceph-volume last failed, and why.
    failing: std::sync::Mutex<Option<(Instant, String)>>,
    /// The release of ceph-volume's Ceph, shared with the activations.
    pub release: Arc<KnownRelease>,
}

impl HostScanner {
    pub fn new(ceph_volume: CephVolume, kernel_paths: KernelPaths, tools: Tools, kernel_only: bool) -> Self {
        HostScanner {
            ceph_volume,
            kernel_paths,
            tools,
            kernel_only,
            proc_root: PathBuf::from("/proc"),
            failing: std::sync::Mutex::new(None),
            release: Arc::default(),
        }
    }
}

/// A host's inventory as the API serves it.
pub struct Inventory {
    pub host: String,
    pub source: Source,
    /// `--devices`: the only devices reported and touched.
    pub allowed: Option<BTreeSet<String>>,
    scan: tokio::sync::Mutex<()>,
    /// The device paths of the last whole scan, and when it was taken.
    last_paths: std::sync::Mutex<Option<(Instant, BTreeSet<String>)>>,
}

/// How old the last scan's device paths may be for a listing, an
/// activation or a start: the daemon asks for an inventory every minute by
/// default, and a new disk is scanned for before anything is made on it.
pub const PATHS_KEPT_FOR: Duration = Duration::from_secs(600);

/// One scan's devices with where they came from.
struct Scan {
    source: InventorySource,
    devices: Devices,
    notes: Vec<String>,
    /// ceph-volume's Ceph, for a scan by ceph-volume.
    release: Option<CephRelease>,
}

/// A fresh inventory: the report as the API sends it, and its devices as
/// read (`devices[i]` is `report.devices[i]`).
#[derive(Debug)]
pub struct Taken {
    pub report: InventoryReport,
    pub devices: Vec<DeviceReport>,
}

impl Taken {
    /// The device at `path`, if the inventory lists it.
    pub fn device(&self, path: &str) -> Option<&DeviceReport> {
        self.devices.iter().find(|d| &*d.path == path)
    }

    /// The paths of its devices and of their partitions. ceph-volume lists
    /// partitions as devices of their own up to 16.2 and only with
    /// `--list-all` from 18.2 on; cephadm does not pass it (its selection
    /// never sees partitions, nor does ours), but an OSD whose DB is on a
    /// partition, and the commands that name one, are this host's all the
    /// same.
    pub fn paths(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for d in &self.devices {
            let dir = d.path.rsplit_once('/').map(|(dir, _)| dir).unwrap_or("/dev");
            out.extend(d.partitions.iter().filter(|p| !p.is_empty()).map(|p| format!("{dir}/{p}")));
            out.insert(d.path.to_string());
        }
        out
    }
}

impl Inventory {
    pub fn new(host: String, source: Source, allowed: Option<BTreeSet<String>>) -> Self {
        Inventory { host, source, allowed, scan: tokio::sync::Mutex::new(()), last_paths: Default::default() }
    }

    /// The device paths of a whole scan younger than `max_age`, or of a
    /// fresh one. A `ceph-volume inventory` starts Python and reads every
    /// disk: on an emulated host a minute, before each OSD listing.
    pub async fn recent_paths(&self, max_age: Duration) -> Result<BTreeSet<String>, InventoryError> {
        let kept = self.last_paths.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some((at, paths)) = kept.filter(|(at, _)| at.elapsed() < max_age) {
            tracing::trace!(age_s = at.elapsed().as_secs(), "the last scan's device paths");
            return Ok(paths);
        }
        Ok(self.take().await?.paths())
    }

    /// Why this agent cannot create OSDs, if it cannot.
    pub fn refusal(&self) -> Option<String> {
        match &self.source {
            Source::File { path, .. } => Some(format!(
                "this agent serves a fixed inventory from --inventory-file {} and cannot create OSDs; \
                 run it without --inventory-file on the storage host",
                path.display()
            )),
            Source::Host(_) => None,
        }
    }

    /// The file this agent serves instead of the host's disks, if any.
    pub fn fixed_file(&self) -> Option<&Path> {
        match &self.source {
            Source::File { path } => Some(path),
            Source::Host(_) => None,
        }
    }

    /// A fresh inventory of all devices.
    pub async fn take(&self) -> Result<Taken, InventoryError> {
        self.take_with(View::All).await
    }

    /// A fresh inventory. Concurrent callers wait for each other, so the
    /// host's disks are never scanned twice at once.
    pub async fn take_with(&self, view: View) -> Result<Taken, InventoryError> {
        let _one_at_a_time = self.scan.lock().await;
        let for_batch = view == View::ForBatch;
        let mut scan = match &self.source {
            Source::File { path } => {
                let path = path.clone();
                let devices = tokio::task::spawn_blocking(move || read_inventory_file(&path))
                    .await
                    .map_err(|e| InventoryError::Task(e.to_string()))??;
                Scan { source: InventorySource::File, devices, notes: Vec::new(), release: None }
            }
            Source::Host(h) => self.scan_host(h, for_batch).await?,
        };
        if for_batch {
            self.filter_for_batch(&mut scan).await?;
        }
        if let Some(allowed) = &self.allowed {
            scan.devices.retain(|d| allowed.contains(&*d.path));
            let missing: Vec<&str> = allowed
                .iter()
                .filter(|p| !scan.devices.reports.iter().any(|d| &*d.path == p.as_str()))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                scan.notes.push(format!("not found on this host: {}", missing.join(", ")));
            }
        }
        let refusal = self.refusal();
        let can_create_osds = refusal.is_none();
        scan.notes.extend(refusal);
        let report = InventoryReport {
            host: self.host.clone(),
            source: scan.source,
            taken_at_ms: chrono::Utc::now().timestamp_millis(),
            devices: scan.devices.json,
            can_create_osds,
            note: (!scan.notes.is_empty()).then(|| scan.notes.join("; ")),
            ceph_release: scan.release.map(|r| r.to_string()),
        };
        let taken = Taken { report, devices: scan.devices.reports };
        if !for_batch {
            *self.last_paths.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), taken.paths()));
        }
        Ok(taken)
    }

    /// ceph-volume filters its own list; the kernel's view and files are
    /// filtered here the same way.
    async fn filter_for_batch(&self, scan: &mut Scan) -> Result<(), InventoryError> {
        let proc_root = match (&self.source, scan.source) {
            (_, InventorySource::CephVolume) => return Ok(()),
            (Source::Host(h), InventorySource::Kernel) => Some(h.proc_root.clone()),
            _ => {
                scan.notes.push(
                    "filter_for_batch: an inventory file has no mount table, so mounted devices are not left out"
                        .into(),
                );
                None
            }
        };
        let named = self.allowed.clone();
        let mut devices = std::mem::take(&mut scan.devices);
        // Reading the mount table and resolving device links touch the
        // file system.
        scan.devices = tokio::task::spawn_blocking(move || {
            let mounts = proc_root.map(|root| Mounts::read(&root)).transpose().map_err(InventoryError::Mounts)?;
            let filter = BatchFilter { named: named.as_ref(), mounts: mounts.as_ref(), resolve: &mounts::resolve };
            for (path, why) in filter.apply(&mut devices) {
                tracing::debug!(device = %path, "filter_for_batch leaves it out: {why}");
            }
            Ok::<_, InventoryError>(devices)
        })
        .await
        .map_err(|e| InventoryError::Task(e.to_string()))??;
        Ok(())
    }

    async fn scan_host(&self, h: &HostScanner, for_batch: bool) -> Result<Scan, InventoryError> {
        let mut notes = Vec::new();
        if !h.kernel_only {
            match self.try_ceph_volume(h, for_batch).await {
                Ok((devices, release)) => {
                    return Ok(Scan { source: InventorySource::CephVolume, devices, notes, release })
                }
                Err(why) => notes
                    .push(format!("ceph-volume inventory is not usable here ({why}); devices read from the kernel")),
            }
        }
        let scan = gather::scan(&h.kernel_paths, &h.tools, self.allowed.as_ref()).await?;
        let reports = reports_of(&scan.devices, None).map_err(InventoryError::KernelReport)?;
        let devices = Devices { json: scan.devices, reports };
        Ok(Scan { source: InventorySource::Kernel, devices, notes, release: None })
    }

    /// ceph-volume's inventory, unless it failed recently. Logs when it
    /// starts or stops working, not on every scan.
    async fn try_ceph_volume(
        &self,
        h: &HostScanner,
        for_batch: bool,
    ) -> Result<(Devices, Option<CephRelease>), String> {
        let recent = h
            .failing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(at, _)| at.elapsed() < CEPH_VOLUME_RETRY)
            .map(|(_, why)| why.clone());
        if let Some(why) = recent {
            return Err(why);
        }
        let release = h.release.get(&h.ceph_volume).await;
        let result = h.ceph_volume.inventory(for_batch, release.as_ref()).await;
        let mut failing = h.failing.lock().unwrap_or_else(|p| p.into_inner());
        match result {
            Ok(devices) => {
                if failing.take().is_some() {
                    tracing::info!("ceph-volume inventory works again; reporting its view");
                }
                Ok((devices, release))
            }
            Err(e) => {
                let why = e.to_string();
                if failing.is_none() {
                    tracing::warn!(
                        "ceph-volume inventory is not usable: {why}; reporting the kernel's view \
                         (ceph-volume is tried again every {} s)",
                        CEPH_VOLUME_RETRY.as_secs()
                    );
                } else {
                    tracing::debug!("ceph-volume inventory still fails: {why}");
                }
                *failing = Some((Instant::now(), why.clone()));
                Err(why)
            }
        }
    }
}

/// Reads an inventory file: what `ceph-volume inventory --format json`
/// printed, which the daemon must be able to read too.
pub fn read_inventory_file(path: &Path) -> Result<Devices, InventoryError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| InventoryError::FileRead { path: shown.clone(), source })?;
    let format = |message: String| InventoryError::FileFormat { path: shown.clone(), message };
    let json: Vec<Value> = serde_json::from_slice(&bytes).map_err(|e| format(e.to_string()))?;
    let reports = reports_of(&json, None).map_err(|e| format(e.to_string()))?;
    if let Some(i) = reports.iter().position(|d| d.path.is_empty()) {
        return Err(format(format!("device {} has no \"path\"", i + 1)));
    }
    Ok(Devices { json, reports })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_inventory(dir: &Path, allowed: Option<&[&str]>) -> Inventory {
        let path = dir.join("inv.json");
        std::fs::write(&path, r#"[{"path": "/dev/sdb", "available": true}, {"path": "/dev/sdc", "available": false}]"#)
            .unwrap();
        let allowed = allowed.map(|a| a.iter().map(|s| s.to_string()).collect());
        Inventory::new("h1".into(), Source::File { path }, allowed)
    }

    #[tokio::test]
    async fn a_file_inventory_cannot_create_osds() {
        let dir = tempfile::tempdir().unwrap();
        let r = file_inventory(dir.path(), None).take().await.unwrap();
        assert_eq!(r.report.source, InventorySource::File);
        assert_eq!(r.report.host, "h1");
        assert!(!r.report.can_create_osds);
        assert!(r.report.note.as_deref().unwrap().contains("cannot create OSDs"));
        assert_eq!(r.paths().len(), 2);
    }

    #[tokio::test]
    async fn only_allowed_devices_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = file_inventory(dir.path(), Some(&["/dev/sdc", "/dev/sdz"])).take().await.unwrap();
        assert_eq!(r.paths().into_iter().collect::<Vec<_>>(), ["/dev/sdc"]);
        assert!(r.report.note.unwrap().contains("not found on this host: /dev/sdz"));
    }

    #[tokio::test]
    async fn the_file_is_read_for_every_inventory() {
        let dir = tempfile::tempdir().unwrap();
        let inv = file_inventory(dir.path(), None);
        std::fs::write(dir.path().join("inv.json"), r#"[{"path": "/dev/sdq"}]"#).unwrap();
        let r = inv.take().await.unwrap();
        assert_eq!(r.paths().into_iter().collect::<Vec<_>>(), ["/dev/sdq"]);
        std::fs::write(dir.path().join("inv.json"), "[").unwrap();
        let e = inv.take().await.unwrap_err().to_string();
        assert!(e.contains("is not a ceph-volume inventory"), "{e}");
    }

    /// A host with no disks and a scripted ceph-volume that counts its calls.
    fn host_inventory(script: &str, kernel_only: bool) -> (tempfile::TempDir, Inventory) {
        let dir = tempfile::tempdir().unwrap();
        let cv = dir.path().join("ceph-volume");
        let calls = dir.path().join("calls");
        std::fs::write(&cv, format!("#!/bin/sh\necho x >> {}\n{script}\n", calls.display())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cv, std::fs::Permissions::from_mode(0o755)).unwrap();
        for d in ["sys", "dev", "udev"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        let paths = KernelPaths {
            sys_block: dir.path().join("sys"),
            dev: dir.path().join("dev"),
            udev_data: dir.path().join("udev"),
        };
        let tools = Tools { pvs: "/nonexistent/pvs".into(), ..Tools::default() };
        let ceph_volume = CephVolume {
            program: cv.display().to_string(),
            inventory_timeout: Duration::from_secs(10),
            command_timeout: Duration::from_secs(10),
        };
        let scanner = HostScanner::new(ceph_volume, paths, tools, kernel_only);
        (dir, Inventory::new("h1".into(), Source::Host(Box::new(scanner)), None))
    }

    fn calls(dir: &tempfile::TempDir) -> usize {
        std::fs::read_to_string(dir.path().join("calls")).unwrap_or_default().lines().count()
    }

    #[tokio::test]
    async fn ceph_volume_when_it_works() {
        let (dir, inv) = host_inventory(r#"echo '[{"path": "/dev/sdb", "available": true}]'"#, false);
        let r = inv.take().await.unwrap();
        assert_eq!(r.report.source, InventorySource::CephVolume);
        assert!(r.report.can_create_osds && r.report.note.is_none());
        assert_eq!(r.paths().into_iter().collect::<Vec<_>>(), ["/dev/sdb"]);
        inv.take().await.unwrap();
        assert_eq!(calls(&dir), 2, "asked for every inventory");
    }

    #[tokio::test]
    async fn the_release_of_ceph_volumes_ceph_is_told() {
        let (dir, inv) = host_inventory(r#"echo '[{"path": "/dev/sdb", "available": true}]'"#, false);
        let r = inv.take().await.unwrap();
        assert_eq!((r.report.ceph_release.as_deref(), r.devices[0].release), (None, None), "no ceph beside it");
        let ceph = dir.path().join("ceph");
        std::fs::write(
            &ceph,
            "#!/bin/sh\necho 'ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)'\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ceph, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The answer (none) is kept a while; a new agent asks at once.
        assert_eq!(inv.take().await.unwrap().report.ceph_release, None);
        let Source::Host(h) = inv.source else { unreachable!("a host inventory") };
        let inv = Inventory::new(
            "h1".into(),
            Source::Host(Box::new(HostScanner::new(h.ceph_volume, h.kernel_paths, h.tools, false))),
            None,
        );
        let r = inv.take().await.unwrap();
        assert_eq!(r.report.ceph_release.as_deref(), Some("18.2.7 (reef)"));
        assert_eq!(r.devices[0].release, Some(crate::wire::ceph_volume::Release::Reef));
    }

    #[tokio::test]
    async fn the_kernel_view_when_ceph_volume_fails() {
        for script in ["echo '--> udevadm not found' >&2; exit 1", "echo '{not json'", "sleep 30"] {
            let (dir, mut inv) = host_inventory(script, false);
            if let Source::Host(h) = &mut inv.source {
                h.ceph_volume.inventory_timeout = Duration::from_millis(300);
            }
            let r = inv.take().await.unwrap();
            assert_eq!(r.report.source, InventorySource::Kernel, "{script}");
            assert!(r.report.can_create_osds);
            let note = r.report.note.unwrap();
            assert!(note.starts_with("ceph-volume inventory is not usable here ("), "{note}");
            assert!(note.ends_with("devices read from the kernel"), "{note}");
            // Not asked again right away: a failing ceph-volume costs seconds.
            let again = inv.take().await.unwrap();
            assert_eq!(again.report.source, InventorySource::Kernel);
            assert_eq!(calls(&dir), 1, "{script}");
        }
    }

    #[tokio::test]
    async fn loop_devices_go_straight_to_the_kernel() {
        let (dir, inv) = host_inventory("exit 0", true);
        let r = inv.take().await.unwrap();
        assert_eq!(r.report.source, InventorySource::Kernel);
        assert!(r.report.note.is_none());
        assert_eq!(calls(&dir), 0);
    }

    /// ceph-volume 18.2.7 lists a partitioned disk without its partitions
    /// (no `--list-all`; shape of `inventory_reef_18.2.7_loop.json`).
    #[test]
    fn partitions_of_listed_disks_are_the_hosts_too() {
        let json = serde_json::json!([{"path": "/dev/nvme0n1", "available": false,
            "sys_api": {"partitions": {"nvme0n1p1": {"start": "2048"}, "nvme0n1p2": {}}}},
            {"path": "/dev/sdb", "available": true, "sys_api": {"partitions": {}}}]);
        let devices: Vec<Value> = json.as_array().unwrap().clone();
        let reports = reports_of(&devices, None).unwrap();
        let taken = Taken {
            report: InventoryReport {
                host: "h".into(),
                source: InventorySource::CephVolume,
                taken_at_ms: 0,
                devices,
                can_create_osds: true,
                note: None,
                ceph_release: None,
            },
            devices: reports,
        };
        assert_eq!(
            taken.paths().into_iter().collect::<Vec<_>>(),
            ["/dev/nvme0n1", "/dev/nvme0n1p1", "/dev/nvme0n1p2", "/dev/sdb"]
        );
        assert!(taken.device("/dev/nvme0n1p1").is_none(), "listed as the host's, not as a device of the inventory");
    }

    fn paths_of(r: &Taken) -> Vec<&str> {
        let read: Vec<&str> = r.devices.iter().map(|d| &*d.path).collect();
        let sent: Vec<&str> = r.report.devices.iter().map(|d| d["path"].as_str().unwrap()).collect();
        assert_eq!(read, sent, "each device as read beside its JSON");
        read
    }

    #[tokio::test]
    async fn a_recent_scan_s_paths_serve_until_they_are_too_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.json");
        let write = |paths: &[&str]| {
            let devices: Vec<Value> =
                paths.iter().map(|p| serde_json::json!({"path": p, "sys_api": {"partitions": {}}})).collect();
            std::fs::write(&path, serde_json::to_vec(&devices).unwrap()).unwrap();
        };
        write(&["/dev/sdb"]);
        let inv = Inventory::new("h1".into(), Source::File { path: path.clone() }, None);
        let hour = Duration::from_secs(3600);
        assert_eq!(inv.recent_paths(hour).await.unwrap(), ["/dev/sdb".to_string()].into(), "none kept: a scan");
        write(&["/dev/sdb", "/dev/sdc"]);
        assert_eq!(inv.recent_paths(hour).await.unwrap().len(), 1, "the last scan's, not read again");
        assert_eq!(inv.recent_paths(Duration::ZERO).await.unwrap().len(), 2, "too old: scanned again");
        inv.take_with(View::ForBatch).await.unwrap();
        assert_eq!(inv.recent_paths(hour).await.unwrap().len(), 2, "a filtered scan does not replace the whole one");
    }

    #[tokio::test]
    async fn a_file_is_filtered_for_batch_without_mounts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.json");
        std::fs::write(
            &path,
            r#"[{"path": "/dev/sda", "sys_api": {"type": "disk", "partitions": {"sda1": {}}}},
                {"path": "/dev/sda1", "sys_api": {"type": "part", "partitions": {}}},
                {"path": "/dev/sdb", "sys_api": {"type": "disk", "partitions": {}}, "available": false},
                {"path": "/dev/loop3", "sys_api": {"type": "loop", "partitions": {}}}]"#,
        )
        .unwrap();
        let inv = Inventory::new("h1".into(), Source::File { path: path.clone() }, None);
        assert_eq!(paths_of(&inv.take().await.unwrap()).len(), 4);
        let r = inv.take_with(View::ForBatch).await.unwrap();
        assert_eq!(paths_of(&r), ["/dev/sdb"]);
        assert!(r.report.note.unwrap().contains("no mount table"));
        let named = Some(["/dev/loop3".to_string(), "/dev/sda".to_string()].into());
        let inv = Inventory::new("h1".into(), Source::File { path }, named);
        let r = inv.take_with(View::ForBatch).await.unwrap();
        assert_eq!(paths_of(&r), ["/dev/loop3"], "a named loop device stays");
    }

    #[tokio::test]
    async fn ceph_volume_filters_its_own_list() {
        let (dir, inv) = host_inventory(
            r#"if [ "$4" = --filter-for-batch ]; then echo '[{"path": "/dev/sdb"}]';
               else echo '[{"path": "/dev/sda"}, {"path": "/dev/sdb"}]'; fi"#,
            false,
        );
        assert_eq!(paths_of(&inv.take().await.unwrap()), ["/dev/sda", "/dev/sdb"]);
        let r = inv.take_with(View::ForBatch).await.unwrap();
        assert_eq!(r.report.source, InventorySource::CephVolume);
        assert_eq!(paths_of(&r), ["/dev/sdb"]);
        assert_eq!(calls(&dir), 2);
    }

    #[tokio::test]
    async fn the_kernel_view_is_filtered_with_the_mount_table() {
        use crate::agent_server::inventory::kernel::fake_host::{Disk, FakeHost, Part};
        const GB: u64 = 1_000_000_000;
        let host = FakeHost::new();
        let mut sda = Disk::new("sda", "8:0", 100 * GB);
        sda.partitions.push(Part::new("sda1", "8:1", 1, 2048, 50 * GB));
        host.add(&sda).add(&Disk::new("sdb", "8:16", 100 * GB)).add(&Disk::new("sdc", "8:32", 100 * GB));
        let lsblk = host.root().join("lsblk");
        std::fs::write(
            &lsblk,
            r#"#!/bin/sh
echo '{"blockdevices": [
  {"name": "sda", "kname": "sda", "type": "disk", "children": [{"name": "sda1", "kname": "sda1", "pkname": "sda", "type": "part"}]},
  {"name": "sdb", "kname": "sdb", "type": "disk"},
  {"name": "sdc", "kname": "sdc", "type": "disk", "fstype": "xfs", "mountpoints": ["/srv"]}]}'
"#,
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&lsblk, std::fs::Permissions::from_mode(0o755)).unwrap();
        let proc_root = host.root().join("proc");
        std::fs::create_dir(&proc_root).unwrap();
        std::fs::write(
            proc_root.join("mounts"),
            "/dev/sdc /srv xfs rw 0 0
",
        )
        .unwrap();
        let tools = Tools {
            lsblk: lsblk.display().to_string(),
            blkid: "/nonexistent/blkid".into(),
            pvs: "/nonexistent/pvs".into(),
            ..Tools::default()
        };
        let cv = CephVolume {
            program: "/nonexistent/ceph-volume".into(),
            inventory_timeout: Duration::from_secs(5),
            command_timeout: Duration::from_secs(5),
        };
        let mut scanner = HostScanner::new(cv, host.paths(), tools, true);
        scanner.proc_root = proc_root.clone();
        let inv = Inventory::new("h1".into(), Source::Host(Box::new(scanner)), None);
        let all = inv.take().await.unwrap();
        assert_eq!(all.report.source, InventorySource::Kernel);
        let mut listed = paths_of(&all);
        listed.sort();
        assert_eq!(listed, ["/dev/sda", "/dev/sda1", "/dev/sdb", "/dev/sdc"]);
        let r = inv.take_with(View::ForBatch).await.unwrap();
        assert_eq!(paths_of(&r), ["/dev/sdb"], "partitioned, partition and mounted devices are left out");
        assert!(r.report.note.is_none());
        std::fs::remove_file(proc_root.join("mounts")).unwrap();
        let e = inv.take_with(View::ForBatch).await.unwrap_err();
        assert!(e.to_string().starts_with("cannot read the mount table"), "{e}");
    }

    #[test]
    fn inventory_files_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("inv.json");
        std::fs::write(&p, r#"[{"path": "/dev/sdb", "available": true, "rejected_reasons": []}]"#).unwrap();
        assert_eq!(read_inventory_file(&p).unwrap().reports.len(), 1);
        std::fs::write(&p, r#"{"hosts": {}}"#).unwrap();
        let e = read_inventory_file(&p).unwrap_err().to_string();
        assert!(e.contains("is not a ceph-volume inventory"), "{e}");
        std::fs::write(&p, r#"[{"available": true}]"#).unwrap();
        assert!(read_inventory_file(&p).unwrap_err().to_string().contains("device 1 has no \"path\""));
        assert!(matches!(read_inventory_file(&dir.path().join("nope")), Err(InventoryError::FileRead { .. })));
    }
}
