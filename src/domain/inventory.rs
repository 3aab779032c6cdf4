//! What a host reports about its disks (one ceph-volume inventory entry per
//! disk), reduced to what planning and display need.
//!
//! cephadm's matchers look values up with a recursive search over the whole
//! device report, so `model` could in theory come from somewhere other than
//! `sys_api`. The wire reader performs that same search once, when the
//! inventory is read, and stores the results in `Lookups`.

use std::collections::HashMap;
use std::sync::Arc;

/// A value found by cephadm's recursive key search (`Matcher._get_disk_key`).
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// Shared: models, vendors and sizes repeat across thousands of disks.
    Str(Arc<str>),
    Number(f64),
    Bool(bool),
    Null,
    /// A list or a mapping: cephadm cannot compare it sensibly.
    Composite,
}

impl Found {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Found::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Python truthiness, which cephadm applies to a size value before reading it.
    pub fn truthy(&self) -> bool {
        match self {
            Found::Str(s) => !s.is_empty(),
            Found::Number(n) => *n != 0.0,
            Found::Bool(b) => *b,
            Found::Null => false,
            Found::Composite => true,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Found::Str(s) => format!("'{s}'"),
            Found::Number(n) => n.to_string(),
            Found::Bool(b) => b.to_string(),
            Found::Null => "null".into(),
            Found::Composite => "a list or mapping".into(),
        }
    }
}

/// The first value of each key cephadm's matchers ask for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lookups {
    pub model: Option<Found>,
    pub vendor: Option<Found>,
    pub rotational: Option<Found>,
    pub human_readable_size: Option<Found>,
    pub size: Option<Found>,
}

/// The `osdspec_affinity` of one logical volume on a disk.
#[derive(Debug, Clone, PartialEq)]
pub enum Affinity {
    /// The LV report has no such key (an LV not made by ceph-volume).
    Absent,
    Value(Found),
    /// The LV entry is not a mapping; cephadm fails on it.
    Malformed,
}

/// cephadm's `human_readable_type`, from `sys_api.rotational`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceType {
    Hdd,
    /// SSDs and NVMe alike.
    Ssd,
    #[default]
    Unknown,
}

impl DeviceType {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceType::Hdd => "hdd",
            DeviceType::Ssd => "ssd",
            DeviceType::Unknown => "unknown",
        }
    }
}

/// A logical volume on a disk, as ceph-volume reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lv {
    pub affinity: Affinity,
    /// The `osd_id` tag, for LVs that belong to an OSD.
    pub osd_id: Option<Arc<str>>,
    /// `block`, `db`, `wal`, ... (`type` in the report).
    pub kind: Option<Arc<str>>,
    /// The `osd_fsid` tag: which OSD (by its uuid) the LV belongs to; an
    /// id is given again to a new OSD once the old one is purged, a uuid never.
    pub osd_fsid: Option<Arc<str>>,
    /// The `cluster_fsid` tag: the cluster the OSD was made for.
    pub cluster_fsid: Option<Arc<str>>,
}

impl Lv {
    /// An LV of the OSD `osd_id` (its `type`), without the fsid tags.
    pub fn of_osd(osd_id: &str, kind: &str) -> Lv {
        Lv {
            affinity: Affinity::Absent,
            osd_id: Some(Arc::from(osd_id)),
            kind: Some(Arc::from(kind)),
            osd_fsid: None,
            cluster_fsid: None,
        }
    }
}

/// What libstoragemgmt says of a disk (`lsm_data`; ceph-volume fills it
/// only with `--with-lsm`), as text: `device ls` shows it as it comes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LsmData {
    pub transport: Option<Arc<str>>,
    pub rpm: Option<Arc<str>>,
    pub health: Option<Arc<str>>,
    /// `ledSupport.IDENTstatus` and `ledSupport.FAILstatus`.
    pub ident_led: Option<Arc<str>>,
    pub fault_led: Option<Arc<str>>,
}

/// One disk as ceph-volume's `inventory --format json` reports it: the
/// fields osdkeeper reads, and nothing of osdkeeper's own. The agent, the
/// daemon, the listing, the planner and the simulator all read a report
/// into this, through the one reader (`wire::ceph_volume`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceReport {
    /// Empty when the report has no path.
    pub path: Arc<str>,
    /// Python's truth of `available`, as cephadm tests it.
    pub available: bool,
    /// `ceph_device`, which ceph-volume names `ceph_device_lvm` from Squid
    /// on: either one true makes a Ceph device (read as cephadm did not,
    /// which then never zapped such disks).
    pub ceph_device: bool,
    /// `being_replaced` (19.2.1+, with the reject reason "Is being
    /// replaced"): `ceph orch device replace` marked the disk; the cephadm
    /// of 19.2.1 on never selects it.
    pub being_replaced: bool,
    /// Sorted, as cephadm stores them.
    pub rejected_reasons: Vec<Arc<str>>,
    /// One entry per LV on the disk.
    pub lvs: Vec<Lv>,
    pub device_id: Box<str>,
    /// `sys_api.size` in bytes (the true size).
    pub size_bytes: Option<f64>,
    pub kind: DeviceType,
    /// `sys_api.type` (`disk`, `part`, `mpath`, `loop`, ...); empty when
    /// missing or not a string.
    pub dev_type: Arc<str>,
    /// The names of `sys_api.partitions`. A value there that is no
    /// mapping but that Python finds true (ceph-volume never writes one)
    /// counts as one partition without a name, so that a disk is never
    /// taken for unpartitioned on a report's say-so it cannot read.
    pub partitions: Box<[Arc<str>]>,
    /// Shared: thousands of disks of one model look up the same values,
    /// and a plan over a big inventory holds every device.
    pub lookups: Arc<Lookups>,
    /// Boxed and absent unless `lsm_data` says something: most reports
    /// have `{}` there.
    pub lsm: Option<Box<LsmData>>,
    /// The release of the ceph-volume that wrote it, where the reader was
    /// told (the agent knows its own; a stored inventory does not say yet).
    pub release: Option<crate::domain::ceph_release::Release>,
}

impl DeviceReport {
    pub fn human_type(&self) -> &'static str {
        self.kind.as_str()
    }

    pub fn model(&self) -> &str {
        self.lookups.model.as_ref().and_then(Found::as_str).unwrap_or("")
    }

    pub fn vendor(&self) -> &str {
        self.lookups.vendor.as_ref().and_then(Found::as_str).unwrap_or("")
    }

    pub fn human_size(&self) -> &str {
        self.lookups.human_readable_size.as_ref().and_then(Found::as_str).unwrap_or("")
    }

    /// OSD ids with a data (block) volume on this disk.
    pub fn osd_ids(&self) -> impl Iterator<Item = &str> {
        self.lvs.iter().filter(|lv| lv.kind.as_deref() == Some("block")).filter_map(|lv| lv.osd_id.as_deref())
    }

    /// OSD ids of every volume on this disk (data, db, wal).
    pub fn all_osd_ids(&self) -> impl Iterator<Item = &str> {
        self.lvs.iter().filter_map(|lv| lv.osd_id.as_deref())
    }

    pub fn has_partitions(&self) -> bool {
        !self.partitions.is_empty()
    }
}

/// One disk of a host as the planner sees it: its report, and what
/// osdkeeper itself marks on it. It reads as its report (`Deref`), so
/// that the planner names report fields directly.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Device {
    pub report: DeviceReport,
    /// Set when osdkeeper holds the device back from every spec (it zapped
    /// it, or removed its OSD), with the reason. cephadm has no such notion.
    pub held: Option<Arc<str>>,
    /// What osdkeeper's disk probes say of this disk (set by the daemon's
    /// planning view; a spec's `osdkeeper.probe` gate reads it).
    pub probe: Option<Arc<crate::domain::probe::ProbeStatus>>,
}

impl std::ops::Deref for Device {
    type Target = DeviceReport;
    fn deref(&self) -> &DeviceReport {
        &self.report
    }
}

impl From<DeviceReport> for Device {
    fn from(report: DeviceReport) -> Device {
        Device { report, held: None, probe: None }
    }
}

impl Device {
    /// The same physical disk reported twice: cephadm compares every report
    /// field; we compare every field we keep.
    pub fn same_report(&self, other: &Device) -> bool {
        self == other
    }
}

/// Sorts devices by path as plain strings (cephadm's `Devices` order, a
/// stable sort). Sorts positions rather than the large device values.
pub fn sort_devices(devices: &mut Vec<DeviceReport>) {
    if devices.is_sorted_by(|a, b| a.path <= b.path) {
        return;
    }
    let mut order: Vec<usize> = (0..devices.len()).collect();
    order.sort_by(|&a, &b| devices[a].path.cmp(&devices[b].path));
    let mut slots: Vec<Option<DeviceReport>> = std::mem::take(devices).into_iter().map(Some).collect();
    *devices = order.into_iter().map(|i| slots[i].take().expect("each device once")).collect();
}

/// One host and what the planner needs to know about it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostInventory {
    pub name: String,
    pub labels: Vec<String>,
    /// Sorted by path. Shared with the daemon's cache of parsed
    /// inventories: a planning view is built per request without copying
    /// 24 devices per host (copied only where holds or probes mark them).
    pub devices: Arc<Vec<Device>>,
}

impl HostInventory {
    pub fn schedulable(&self) -> bool {
        !self.labels.iter().any(|l| l == crate::domain::spec::NO_SCHEDULE)
    }

    /// How many OSDs each spec (by `osdspec_affinity`) has on this host,
    /// counted from the OSD data volumes in the inventory.
    pub fn osds_by_affinity(&self) -> HashMap<String, u64> {
        // A host has OSDs of one spec or a few, and tens of OSDs at most:
        // short lists instead of hashing (this runs for every host of
        // every dry-run; a profile of one over 2000 hosts had it at 8 %).
        let mut seen: Vec<(&str, Vec<&str>)> = Vec::new();
        for lv in self.devices.iter().flat_map(|d| &d.lvs) {
            let (Some(id), Some("block")) = (lv.osd_id.as_deref(), lv.kind.as_deref()) else { continue };
            let affinity = match &lv.affinity {
                Affinity::Value(Found::Str(s)) => &**s,
                _ => "",
            };
            match seen.iter_mut().find(|(a, _)| *a == affinity) {
                Some((_, ids)) if !ids.contains(&id) => ids.push(id),
                Some(_) => {}
                None => seen.push((affinity, vec![id])),
            }
        }
        seen.into_iter().map(|(a, ids)| (a.to_string(), ids.len() as u64)).collect()
    }
}

/// Everything the planner reads: hosts in the order they were added, how
/// many OSDs each service already has per host, and destroyed OSD ids per
/// host (re-used by the next OSDs created there).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterView {
    pub hosts: Vec<HostInventory>,
    /// service_id -> host -> number of OSD daemons of that service.
    pub existing_daemons: HashMap<String, HashMap<String, u64>>,
    /// short host name -> OSD ids to claim.
    pub osd_id_claims: HashMap<String, Vec<String>>,
}

impl ClusterView {
    pub fn existing(&self, service_id: &str, host: &str) -> u64 {
        self.existing_daemons.get(service_id).and_then(|m| m.get(host)).copied().unwrap_or(0)
    }

    pub fn claims(&self, host: &str) -> &[String] {
        let short = host.split('.').next().unwrap_or(host);
        self.osd_id_claims.get(short).map(Vec::as_slice).unwrap_or(&[])
    }
}
