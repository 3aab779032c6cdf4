//! OSD service specs (cephadm's `DriveGroupSpec`), read from YAML and
//! validated the way the cephadm of a given Ceph release validates them
//! (16.2 unless told otherwise; `since_pacific` holds what 17.2 to 20.2
//! added), plus a short list of values cephadm accepts and then misuses,
//! which we refuse (each such error carries `stricter_than_cephadm`; the
//! list is docs/differences-from-cephadm.md). Host specs (`service_type:
//! host`) of the same files are read by `host_spec`.

mod error;
pub mod extension;
mod host_spec;
mod parse;
mod placement;
mod placement_check;
mod since_pacific;
mod size;

use crate::domain::ceph_release::Release;
pub use error::{FieldError, SpecError};
pub use host_spec::HostSpec;
pub use parse::{
    decode_spec, parse_spec_bytes, parse_spec_bytes_as, parse_spec_document, parse_spec_file, parse_spec_file_as,
    parse_specs_and_hosts, SpecDocument, SpecFileError, SpecsAndHosts, MAX_OSDS_PER_DEVICE,
};
pub use placement::{valid_host as valid_host_name, HostEntry, HostRef, Placement};
pub use placement_check::{check_placement, PlacementProblem, NO_SCHEDULE};
pub use size::{cephadm_disk_bytes, SizeBounds, SizeFilter};

/// How the filters of one device selection combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterLogic {
    And,
    Or,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Lvm,
    Raw,
}

impl Method {
    pub const ALL: [Method; 2] = [Method::Lvm, Method::Raw];

    /// Its name in a spec (`method: raw`).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Lvm => "lvm",
            Method::Raw => "raw",
        }
    }

    pub fn parse(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// One of the four device roles of a spec, in cephadm's assignment order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Data,
    Wal,
    Db,
    Journal,
}

impl Role {
    /// cephadm assigns data first, then wal, db and journal.
    pub const ASSIGNMENT_ORDER: [Role; 4] = [Role::Data, Role::Wal, Role::Db, Role::Journal];

    pub fn key(self) -> &'static str {
        match self {
            Role::Data => "data_devices",
            Role::Wal => "wal_devices",
            Role::Db => "db_devices",
            Role::Journal => "journal_devices",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            Role::Data => "data",
            Role::Wal => "wal",
            Role::Db => "db",
            Role::Journal => "journal",
        }
    }
}

/// The filters of one role (`data_devices: {...}`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceFilter {
    /// Explicit paths: used verbatim on every host, bypassing the inventory.
    pub paths: Vec<String>,
    /// Each path's own `crush_device_class` (17.2+: `paths: [{path,
    /// crush_device_class}]`), by position; empty when none names one.
    pub path_classes: Vec<Option<String>>,
    pub size: Option<SizeFilter>,
    /// Case-sensitive substring of `sys_api.model`.
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub rotational: Option<bool>,
    /// Per-host cap counting this service's existing OSDs; `None` = no cap.
    pub limit: Option<u64>,
    pub all: bool,
}

impl DeviceFilter {
    /// Number of matchers cephadm's FilterGenerator would yield.
    pub fn matcher_count(&self) -> usize {
        usize::from(self.size.is_some())
            + usize::from(self.model.is_some())
            + usize::from(self.vendor.is_some())
            + usize::from(self.rotational.is_some())
            + usize::from(self.all)
    }
}

/// A validated OSD spec.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveSpec {
    /// The release whose cephadm this spec is read and planned as: the
    /// same document selects and commands differently in 16.2, 18.2 and
    /// 20.2 (docs/differences-from-cephadm.md).
    pub release: Release,
    pub service_id: Option<String>,
    pub placement: Placement,
    pub unmanaged: bool,
    pub preview_only: bool,
    pub data: DeviceFilter,
    pub wal: Option<DeviceFilter>,
    pub db: Option<DeviceFilter>,
    pub journal: Option<DeviceFilter>,
    pub filter_logic: FilterLogic,
    pub encrypted: bool,
    /// `tpm2` (20.2+): the dm-crypt key is enrolled in the host's TPM.
    pub tpm2: bool,
    pub method: Option<Method>,
    /// Values cephadm pastes into the ceph-volume command verbatim (`str(v)`).
    pub osds_per_device: Option<String>,
    pub data_allocate_fraction: Option<String>,
    pub block_db_size: Option<String>,
    pub block_wal_size: Option<String>,
    pub crush_device_class: Option<String>,
    pub extra_container_args: Vec<String>,
    pub extra_entrypoint_args: Vec<String>,
    /// Things the operator should know that do not make the spec invalid
    /// (keys cephadm 16.2 accepts but ignores, for instance).
    pub notes: Vec<String>,
    /// `osdkeeper.probe` (`extension`): new disks wait for a probe and are
    /// judged by it. Not a cephadm notion.
    pub probe: Option<crate::domain::probe::gate::ProbeGate>,
}

impl DriveSpec {
    /// cephadm's `service_name()`: `osd` or `osd.<service_id>`.
    pub fn service_name(&self) -> String {
        match &self.service_id {
            Some(id) if !id.is_empty() => format!("osd.{id}"),
            _ => "osd".to_string(),
        }
    }

    pub fn filter(&self, role: Role) -> Option<&DeviceFilter> {
        match role {
            Role::Data => Some(&self.data),
            Role::Wal => self.wal.as_ref(),
            Role::Db => self.db.as_ref(),
            Role::Journal => self.journal.as_ref(),
        }
    }
}
