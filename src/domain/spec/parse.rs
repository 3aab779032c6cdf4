//! From a YAML document to a `DriveSpec`, following the steps of cephadm's
//! `ServiceSpec.from_json` -> `DriveGroupSpec._from_json_impl` -> `validate`
//! so that a document is invalid here exactly when it is invalid there
//! (plus the documented stricter checks).

use super::error::{FieldError, SpecError};
use super::host_spec::{is_host_spec, read_host_spec, HostSpec};
use super::placement::Placement;
use super::since_pacific;
use super::size::SizeFilter;
use super::{DeviceFilter, DriveSpec, FilterLogic, Method};
use crate::domain::ceph_release::Release;
use crate::domain::value::{excerpt, Value};
use crate::domain::yaml11::{self, YamlError};

/// Keys cephadm 16.2 accepts in an OSD spec (`DriveGroupSpec._supported_features`).
const FEATURES: &[&str] = &[
    "encrypted",
    "block_wal_size",
    "osds_per_device",
    "db_slots",
    "wal_slots",
    "block_db_size",
    "placement",
    "service_id",
    "service_type",
    "data_devices",
    "db_devices",
    "wal_devices",
    "journal_devices",
    "data_directories",
    "objectstore",
    "osd_id_claims",
    "journal_size",
    "unmanaged",
    "filter_logic",
    "preview_only",
    "extra_container_args",
    "extra_entrypoint_args",
    "data_allocate_fraction",
    "method",
    "crush_device_class",
];

/// The most OSDs osdkeeper makes on one device, the one bound on
/// `osds_per_device` (the spec parser refuses more; the OSD layout planner
/// checks the same number for commands that come from elsewhere). Ceph
/// advises 1, or 2 to 4 on a fast NVMe drive; past 64 each OSD would get
/// under 2% of the disk and the host would need 256 GiB of memory for that
/// one disk alone (`osd_memory_target` is 4 GiB). cephadm has no bound, and
/// the planner lists every OSD it would make: `2147483647` filled memory.
pub const MAX_OSDS_PER_DEVICE: u32 = 64;

/// A positive whole number, written as a number or as digits in a string.
fn is_whole_number(v: &Value) -> bool {
    match v {
        Value::Int(n) => *n > 0,
        Value::Str(s) => {
            !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) && !s.trim_start_matches('0').is_empty()
        }
        _ => false,
    }
}

/// One document of a spec file after validation. Empty documents are left
/// out (cephadm skips them) but keep their place in the numbering.
#[derive(Debug, Clone)]
pub struct SpecDocument {
    pub doc: usize,
    pub line: usize,
    /// The document's text as written, comments included.
    pub source: String,
    pub spec: Result<DriveSpec, SpecError>,
}

/// The file as a whole cannot be read.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SpecFileError {
    #[error("the spec file is not valid YAML: {0}")]
    Yaml(YamlError),
    #[error("the spec file is refused: {0}")]
    Limit(YamlError),
    /// `offset` counts bytes from the start of the file; `column` counts
    /// characters, as an editor shows it.
    #[error("the spec file is not UTF-8 text: {problem} at byte offset {offset} (line {line}, column {column})")]
    NotUtf8 { offset: usize, line: usize, column: usize, problem: String },
}

impl From<YamlError> for SpecFileError {
    fn from(e: YamlError) -> Self {
        if e.limit.is_some() {
            SpecFileError::Limit(e)
        } else {
            SpecFileError::Yaml(e)
        }
    }
}

/// The text of a spec file given as bytes (an HTTP body, a file), or where
/// it stops being UTF-8. PyYAML, and so cephadm, reads specs as UTF-8 too.
pub fn decode_spec(bytes: &[u8]) -> Result<&str, SpecFileError> {
    let e = match std::str::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e,
    };
    let offset = e.valid_up_to();
    let before = std::str::from_utf8(&bytes[..offset]).expect("valid up to the error");
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().count() + 1;
    let problem = match e.error_len() {
        Some(_) => format!("byte 0x{:02x} cannot start or continue a character", bytes[offset]),
        None => "the file ends inside a character".to_string(),
    };
    Err(SpecFileError::NotUtf8 { offset, line, column, problem })
}

/// Reads every document of a spec file given as bytes, as Ceph 16.2's cephadm.
pub fn parse_spec_bytes(bytes: &[u8]) -> Result<Vec<SpecDocument>, SpecFileError> {
    parse_spec_bytes_as(bytes, Release::Pacific)
}

/// `parse_spec_bytes` as the cephadm of `release` reads it.
pub fn parse_spec_bytes_as(bytes: &[u8], release: Release) -> Result<Vec<SpecDocument>, SpecFileError> {
    parse_spec_file_as(decode_spec(bytes)?, release)
}

/// Reads every document of a spec file as Ceph 16.2's cephadm does.
pub fn parse_spec_file(text: &str) -> Result<Vec<SpecDocument>, SpecFileError> {
    parse_spec_file_as(text, Release::Pacific)
}

/// Reads every document of a spec file as the cephadm of `release` does;
/// each document is judged on its own.
pub fn parse_spec_file_as(text: &str, release: Release) -> Result<Vec<SpecDocument>, SpecFileError> {
    Ok(parse_file(text, release, None)?.0)
}

/// A file's OSD specs and host specs (`service_type: host`, which
/// `parse_spec_file_as` leaves out), each judged on its own, the YAML read
/// once; `port`: the one a host's address without a port is given.
pub fn parse_specs_and_hosts(text: &str, release: Release, port: u16) -> Result<SpecsAndHosts, SpecFileError> {
    parse_file(text, release, Some(port))
}

/// What `parse_specs_and_hosts` reads.
pub type SpecsAndHosts = (Vec<SpecDocument>, Vec<Result<HostSpec, SpecError>>);

fn parse_file(text: &str, release: Release, host_port: Option<u16>) -> Result<SpecsAndHosts, SpecFileError> {
    let text = yaml11::without_bom(text);
    let docs = yaml11::load_all(text)?;
    let sources = yaml11::document_sources(text, &docs);
    let mut specs = Vec::new();
    let mut hosts = Vec::new();
    for (i, (d, source)) in docs.iter().zip(sources).enumerate().filter(|(_, (d, _))| !d.value.is_null()) {
        match (is_host_spec(&d.value), host_port) {
            (true, Some(port)) => hosts.push(read_host_spec(&d.value, i, d.line, port)),
            (true, None) => {}
            (false, _) => specs.push(SpecDocument {
                doc: i,
                line: d.line,
                source: source.to_string(),
                spec: parse_spec_document(&d.value, i, d.line, release),
            }),
        }
    }
    Ok((specs, hosts))
}

/// Validates one document (already read from YAML).
pub fn parse_spec_document(doc: &Value, index: usize, line: usize, release: Release) -> Result<DriveSpec, SpecError> {
    let sid = doc.get("service_id").and_then(|v| v.as_str()).map(str::to_string);
    build(doc, release).map_err(|e| e.locate(index, line, sid))
}

/// A value after `_drive_group_spec_from_json`: selections are converted,
/// everything else is kept raw until the constructor.
#[derive(Debug, Clone)]
enum Slot {
    Raw(Value),
    Selection(Option<Selection>),
    Placement(Placement),
}

/// `DeviceSelection` as cephadm builds it, before our stricter reading.
#[derive(Debug, Clone, Default)]
struct Selection {
    field: String,
    paths: Vec<Value>,
    model: Option<Value>,
    vendor: Option<Value>,
    size: Option<Value>,
    rotational: Option<Value>,
    limit: Option<Value>,
    all: Option<Value>,
    actuators: Option<Value>,
}

type Entries = Vec<(Value, Value)>;

fn get<'a>(entries: &'a Entries, key: &str) -> Option<&'a Value> {
    entries.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

fn set(entries: &mut Entries, key: &str, value: Value) {
    match entries.iter_mut().find(|(k, _)| k.as_str() == Some(key)) {
        Some(slot) => slot.1 = value,
        None => entries.push((Value::Str(key.to_string()), value)),
    }
}

fn remove(entries: &mut Entries, key: &str) -> Option<Value> {
    let pos = entries.iter().position(|(k, _)| k.as_str() == Some(key))?;
    Some(entries.remove(pos).1)
}

fn build(doc: &Value, release: Release) -> Result<DriveSpec, FieldError> {
    let Value::Map(entries) = doc else {
        return Err(FieldError::cephadm(
            "",
            None,
            format!("a spec document must be a mapping, got {} {}", doc.type_name(), excerpt(&doc.display())),
        ));
    };
    let mut top = entries.clone();
    // osdkeeper's own options leave before cephadm's reading begins.
    let extensions = match remove(&mut top, super::extension::KEY) {
        Some(v) => super::extension::read(&v)?,
        None => super::extension::Extensions::default(),
    };

    if let Some(name) = get(&top, "service_name").filter(|v| v.truthy()).cloned() {
        let Some(name) = name.as_str() else {
            return Err(FieldError::cephadm(
                "service_name",
                Some(name.display()),
                "service_name must be a string such as 'osd.fast'",
            ));
        };
        let mut parts = name.splitn(2, '.');
        let ty = parts.next().unwrap_or_default().to_string();
        let id = parts.next().map(str::to_string);
        if !get(&top, "service_type").is_some_and(Value::truthy) {
            set(&mut top, "service_type", Value::Str(ty));
        }
        if let (false, Some(id)) = (get(&top, "service_id").is_some_and(Value::truthy), id) {
            set(&mut top, "service_id", Value::Str(id));
        }
        remove(&mut top, "service_name");
    }

    match get(&top, "service_type") {
        Some(Value::Str(t)) if t == "osd" => {}
        Some(v) if v.truthy() => {
            return Err(FieldError::cephadm(
                "service_type",
                Some(v.display()),
                "not an OSD spec: osdkeeper manages OSD specs (service_type: osd) only",
            ))
        }
        _ => return Err(FieldError::cephadm("service_type", None, "Spec needs a \"service_type\" key.")),
    }
    remove(&mut top, "status");

    if get(&top, "host_pattern").is_some() && get(&top, "placement").is_none() {
        let pattern = remove(&mut top, "host_pattern").expect("checked");
        top.push((Value::Str("placement".into()), Value::Map(vec![(Value::Str("host_pattern".into()), pattern)])));
    }

    let spec_slots = match get(&top, "spec") {
        None => None,
        Some(Value::Map(inner)) => {
            if inner.is_empty() {
                return Err(FieldError::cephadm("spec", None, "Didn't find drive selections"));
            }
            Some(convert_features(inner, "spec.", release)?)
        }
        Some(other) => {
            return Err(FieldError::cephadm(
                "spec",
                Some(other.display()),
                format!("spec must be a mapping of OSD settings, got {}", other.type_name()),
            ))
        }
    };
    let outer: Entries = top.iter().filter(|(k, _)| k.as_str() != Some("spec")).cloned().collect();
    let outer_slots = convert_features(&outer, "", release)?;

    // ServiceSpec._from_json_impl: walk the document in order; `spec:` is
    // merged where it stands, so later keys override earlier ones.
    let mut notes = Vec::new();
    let mut kwargs: Vec<(String, Slot)> = Vec::new();
    let put = |kwargs: &mut Vec<(String, Slot)>, k: String, v: Slot| match kwargs.iter_mut().find(|(ek, _)| *ek == k) {
        Some(e) => e.1 = v,
        None => kwargs.push((k, v)),
    };
    for (k, _) in &top {
        let key = k.as_str().expect("feature keys are strings");
        if key == "spec" {
            for (sk, sv) in spec_slots.clone().unwrap_or_default() {
                put(&mut kwargs, sk, sv);
            }
            continue;
        }
        let slot = outer_slots.iter().find(|(ok, _)| ok == key).map(|(_, s)| s.clone()).expect("converted");
        let slot = match (key, slot) {
            ("placement", Slot::Raw(v)) => {
                let mut p = Placement::parse(&v, &mut notes)?;
                p.pattern_narrows_label = release >= Release::Quincy;
                if p.pattern_narrows_label {
                    // 16.2's note on this: both count from 17.2 on.
                    notes.retain(|n| !n.starts_with("placement: host_pattern is ignored"));
                }
                Slot::Placement(p)
            }
            (_, s) => s,
        };
        put(&mut kwargs, key.to_string(), slot);
    }
    let mut spec = construct(kwargs, notes, release)?;
    spec.probe = extensions.probe;
    Ok(spec)
}

/// `_drive_group_spec_from_json`: unknown keys are errors, `*_devices` become selections.
fn convert_features(entries: &Entries, prefix: &str, release: Release) -> Result<Vec<(String, Slot)>, FieldError> {
    let mut out = Vec::new();
    for (k, v) in entries {
        let key = match k.as_str() {
            Some(key) if FEATURES.contains(&key) || since_pacific::is_added_feature(key, release) => key,
            _ => {
                let shown = excerpt(&k.python_str());
                let hint = match shown.as_str() {
                    "config" if release < Release::Quincy => " (OSD specs take it from Ceph 17.2 on)",
                    "tpm2" => " (OSD specs take it from Ceph 19.2.1 on)",
                    "config" | "networks" | "count" | "custom_configs" => {
                        " (cephadm accepts it for other services, not for OSD specs)"
                    }
                    "host_pattern" => " (put it under placement:)",
                    "osdkeeper" => " (osdkeeper's own options go at the top level of the document, not under spec:)",
                    _ => "",
                };
                return Err(FieldError::cephadm(
                    format!("{prefix}{shown}"),
                    None,
                    format!("Feature `{shown}` is not supported{hint}"),
                ));
            }
        };
        let slot = if key.ends_with("_devices") {
            Slot::Selection(selection(v, &format!("{prefix}{key}"), release)?)
        } else {
            Slot::Raw(v.clone())
        };
        out.push((key.to_string(), slot));
    }
    Ok(out)
}

/// `DeviceSelection.from_json` + its constructor.
fn selection(v: &Value, field: &str, release: Release) -> Result<Option<Selection>, FieldError> {
    if !v.truthy() {
        return Ok(None);
    }
    let Some(entries) = v.as_map() else {
        return Err(FieldError::cephadm(
            field,
            Some(v.display()),
            format!("a device selection must be a mapping of filters such as {{rotational: 0}} or {{paths: [/dev/sdb]}}, got {}", v.type_name()),
        ));
    };
    let mut s = Selection { field: field.to_string(), ..Selection::default() };
    for (k, val) in entries {
        let name = excerpt(&k.python_str());
        let filters = since_pacific::filters(release);
        if !k.as_str().is_some_and(|key| filters.contains(&key)) {
            return Err(FieldError::cephadm(
                format!("{field}.{name}"),
                None,
                format!("Filtering for `{name}` is not supported (filters: {})", filters.join(", ")),
            ));
        }
        let slot = Some(val.clone());
        match name.as_str() {
            "paths" => s.paths = paths(val, &format!("{field}.paths"))?,
            "model" => s.model = slot,
            "vendor" => s.vendor = slot,
            "size" => s.size = slot,
            "rotational" => s.rotational = slot,
            "limit" => s.limit = slot,
            "actuators" => s.actuators = slot,
            _ => s.all = slot,
        }
    }
    Ok(Some(s))
}

fn paths(v: &Value, field: &str) -> Result<Vec<Value>, FieldError> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Seq(items) => Ok(items.clone()),
        Value::Str(_) | Value::Map(_) => Err(FieldError::stricter(
            field,
            Some(v.display()),
            "paths must be a list such as [/dev/sdb, /dev/sdc]: cephadm iterates a bare string \
             character by character and would pass '/', 'd', 'e', 'v', ... to ceph-volume",
        )),
        other => Err(FieldError::cephadm(
            field,
            Some(other.display()),
            format!("'{}' object is not iterable", other.type_name()),
        )),
    }
}

fn take(kwargs: &mut Vec<(String, Slot)>, key: &str) -> Option<Slot> {
    let pos = kwargs.iter().position(|(k, _)| k == key)?;
    Some(kwargs.remove(pos).1)
}

fn take_raw(kwargs: &mut Vec<(String, Slot)>, key: &str) -> Option<Value> {
    match take(kwargs, key)? {
        Slot::Raw(Value::Null) => None,
        Slot::Raw(v) => Some(v),
        Slot::Selection(_) | Slot::Placement(_) => None,
    }
}

/// The `DriveGroupSpec` constructor and `validate()`, then our stricter reading.
fn construct(mut kw: Vec<(String, Slot)>, mut notes: Vec<String>, release: Release) -> Result<DriveSpec, FieldError> {
    if let Some(Slot::Raw(t)) = take(&mut kw, "service_type") {
        if !(t.is_null() || t.as_str() == Some("osd")) {
            return Err(FieldError::cephadm("spec.service_type", Some(t.display()), "service_type must be osd"));
        }
    }
    let placement = match take(&mut kw, "placement") {
        None => Placement::default(),
        Some(Slot::Placement(p)) => p,
        Some(Slot::Raw(v)) if v.is_null() => Placement::default(),
        Some(_) => {
            return Err(FieldError::cephadm(
                "spec.placement",
                None,
                "placement must be at the top level of the document, not under spec: (cephadm fails on it)",
            ))
        }
    };

    let service_id = match take_raw(&mut kw, "service_id") {
        None => None,
        Some(Value::Str(s)) => {
            if !s.is_empty() && !s.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) {
                return Err(FieldError::cephadm(
                    "service_id",
                    Some(Value::Str(s).display()),
                    "Service id contains invalid characters, only [a-zA-Z0-9_.-] allowed",
                ));
            }
            Some(s)
        }
        Some(v) => {
            return Err(FieldError::stricter(
                "service_id",
                Some(v.display()),
                format!(
                "service_id must be a string (quote it: '{}'); cephadm fails when it builds the service name from a {}",
                excerpt(&v.python_str()),
                v.type_name()
            ),
            ))
        }
    };

    let filter_logic = match take(&mut kw, "filter_logic").map(|slot| match slot {
        Slot::Raw(v) => v,
        _ => Value::Null,
    }) {
        None => FilterLogic::And,
        Some(Value::Str(s)) => match s.to_uppercase().as_str() {
            "AND" => FilterLogic::And,
            "OR" => FilterLogic::Or,
            _ => {
                return Err(FieldError::cephadm(
                    "filter_logic",
                    Some(Value::Str(s).display()),
                    "filter_logic must be either <AND> or <OR>",
                ))
            }
        },
        Some(v) => {
            return Err(FieldError::cephadm(
                "filter_logic",
                Some(v.display()),
                "filter_logic must be either <AND> or <OR>",
            ))
        }
    };

    // validate(): placement, data_devices, each selection, all, objectstore, sizes, method.
    if placement.is_empty() {
        return Err(FieldError::cephadm("placement", None, "`placement` required (host_pattern, hosts or label)"));
    }
    let mut selections: Vec<(&str, Option<Selection>)> = Vec::new();
    for key in ["data_devices", "db_devices", "wal_devices", "journal_devices"] {
        let sel = match take(&mut kw, key) {
            Some(Slot::Selection(s)) => s,
            _ => None,
        };
        selections.push((key, sel));
    }
    if selections[0].1.is_none() {
        return Err(FieldError::cephadm("data_devices", None, "`data_devices` element is required."));
    }
    for (_, sel) in &selections {
        if let Some(s) = sel {
            validate_selection(s)?;
        }
    }
    for (key, sel) in &selections[1..] {
        if sel.as_ref().is_some_and(|s| s.all.as_ref().is_some_and(Value::truthy)) {
            return Err(FieldError::cephadm(*key, None, "`all` is only allowed for data_devices"));
        }
    }

    match take(&mut kw, "objectstore") {
        None => {}
        Some(Slot::Raw(Value::Str(s))) if s == "bluestore" => {}
        Some(Slot::Raw(Value::Str(s))) if "bluestore".contains(s.as_str()) => {
            return Err(FieldError::stricter(
                "objectstore",
                Some(Value::Str(s).display()),
                "objectstore must be 'bluestore': cephadm only checks that the value is part of the word \
                 'bluestore', accepts this, and then creates no OSD at all",
            ))
        }
        Some(Slot::Raw(v)) => {
            return Err(FieldError::cephadm(
                "objectstore",
                Some(v.display()),
                format!("{} is not supported. Must be one of ('bluestore')", excerpt(&v.python_str())),
            ))
        }
        Some(_) => unreachable!("objectstore is never converted"),
    }

    let mut size_arg = |key: &str| -> Result<Option<String>, FieldError> {
        match take_raw(&mut kw, key) {
            None => Ok(None),
            Some(v @ (Value::Int(_) | Value::Str(_))) => Ok(v.truthy().then(|| v.python_str())),
            Some(v) => Err(FieldError::cephadm(key, Some(v.display()), format!("{key} must be of type int or string"))),
        }
    };
    let block_wal_size = size_arg("block_wal_size")?;
    let block_db_size = size_arg("block_db_size")?;
    let journal_size = size_arg("journal_size")?;

    let method = match take_raw(&mut kw, "method") {
        None => None,
        Some(Value::Str(s)) if s == "lvm" => Some(Method::Lvm),
        Some(Value::Str(s)) if s == "raw" => Some(Method::Raw),
        Some(v) => {
            return Err(FieldError::cephadm("method", Some(v.display()), "method must be one of None, lvm, raw"))
        }
    };

    // Beyond cephadm: values it would accept and misuse.
    let encrypted = flag(&mut kw, "encrypted")?;
    let tpm2 = flag(&mut kw, "tpm2")?;
    since_pacific::check_tpm2(tpm2, encrypted)?;
    since_pacific::config(take_raw(&mut kw, "config"))?;
    let unmanaged = flag(&mut kw, "unmanaged")?;
    let preview_only = flag(&mut kw, "preview_only")?;
    let most = i128::from(MAX_OSDS_PER_DEVICE);
    let osds_per_device = match take_raw(&mut kw, "osds_per_device") {
        None => None,
        Some(Value::Int(0)) => None,
        Some(Value::Int(n)) if (1..=most).contains(&n) => Some(n.to_string()),
        Some(Value::Str(s))
            if !s.is_empty()
                && s.chars().all(|c| c.is_ascii_digit())
                && s.parse::<i128>().is_ok_and(|n| (1..=most).contains(&n)) =>
        {
            notes.push(format!(
                "osds_per_device is the string '{s}'; cephadm passes it on verbatim, write {s} without quotes"
            ));
            Some(s)
        }
        Some(v @ (Value::Int(_) | Value::Str(_))) if is_whole_number(&v) => {
            return Err(FieldError::stricter(
                "osds_per_device",
                Some(v.display()),
                format!(
                    "osds_per_device must be at most {MAX_OSDS_PER_DEVICE}: each OSD needs its own memory \
                     (4 GiB by default) and a share of the disk, so more OSDs on one device only make them \
                     slower; cephadm passes any number on, and ceph-volume tries to make them all"
                ),
            ))
        }
        Some(v) => {
            return Err(FieldError::stricter(
                "osds_per_device",
                Some(v.display()),
                "osds_per_device must be a whole number of at least 1: cephadm pastes any value into the \
                 ceph-volume command, which then fails",
            ))
        }
    };
    let data_allocate_fraction = match take_raw(&mut kw, "data_allocate_fraction") {
        None => None,
        Some(v @ (Value::Int(_) | Value::Float(_))) => {
            let f = match v {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                _ => unreachable!(),
            };
            if f == 0.0 {
                None
            } else if f > 0.0 && f <= 1.0 {
                Some(v.python_str())
            } else {
                return Err(FieldError::stricter(
                    "data_allocate_fraction",
                    Some(v.display()),
                    "data_allocate_fraction must be in (0, 1]: cephadm does not check it and ceph-volume refuses it when creating the OSD",
                ));
            }
        }
        Some(v) => {
            return Err(FieldError::stricter(
                "data_allocate_fraction",
                Some(v.display()),
                "data_allocate_fraction must be a number in (0, 1], such as 0.9",
            ))
        }
    };
    let crush_device_class = match take_raw(&mut kw, "crush_device_class") {
        None => None,
        Some(Value::Str(s)) if s.is_empty() => None,
        Some(Value::Str(s)) => Some(s),
        Some(v) => {
            return Err(FieldError::stricter(
                "crush_device_class",
                Some(v.display()),
                "crush_device_class must be a string such as ssd, hdd or nvme",
            ))
        }
    };
    let string_list = |v: Option<Value>| -> Vec<String> {
        match v {
            Some(Value::Seq(items)) => items.iter().map(Value::python_str).collect(),
            _ => Vec::new(),
        }
    };
    let extra_container_args = string_list(take_raw(&mut kw, "extra_container_args"));
    let extra_entrypoint_args = string_list(take_raw(&mut kw, "extra_entrypoint_args"));
    for (key, why) in [
        ("db_slots", "cephadm 16.2 never passes it to ceph-volume"),
        ("wal_slots", "cephadm 16.2 never passes it to ceph-volume"),
        ("osd_id_claims", "cephadm 16.2 takes id claims from destroyed OSDs in the CRUSH map instead"),
        ("data_directories", "it only applied to filestore"),
    ] {
        if take_raw(&mut kw, key).is_some() {
            notes.push(format!("{key} is accepted but ignored: {why}"));
        }
    }
    if journal_size.is_some() {
        notes.push("journal_size is accepted but ignored: journals only exist for filestore".into());
    }

    let mut filters = selections.into_iter().map(|(_, s)| s.map(|s| strict_filter(s, release)).transpose());
    let data = filters.next().expect("four roles")?.expect("data checked above");
    let db = filters.next().expect("four roles")?;
    let wal = filters.next().expect("four roles")?;
    let journal = filters.next().expect("four roles")?;
    if journal.is_some() {
        notes.push(
            "journal_devices only apply to filestore: cephadm still reserves the matching disks, but never uses them"
                .into(),
        );
    }
    Ok(DriveSpec {
        release,
        service_id,
        placement,
        unmanaged,
        preview_only,
        data,
        wal,
        db,
        journal,
        filter_logic,
        encrypted,
        tpm2,
        method,
        osds_per_device,
        data_allocate_fraction,
        block_db_size,
        block_wal_size,
        crush_device_class,
        extra_container_args,
        extra_entrypoint_args,
        notes,
        probe: None,
    })
}

/// A boolean that cephadm reads by truthiness: the string 'false' would be true.
fn flag(kw: &mut Vec<(String, Slot)>, key: &str) -> Result<bool, FieldError> {
    match take_raw(kw, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(b),
        Some(Value::Int(0)) => Ok(false),
        Some(Value::Int(1)) => Ok(true),
        Some(v) => Err(FieldError::stricter(
            key,
            Some(v.display()),
            format!(
                "{key} must be true or false without quotes: cephadm treats any non-empty value as true{}",
                if v.as_str().is_some() {
                    ", so the string '{v}' means true".replace("{v}", &excerpt(&v.python_str()))
                } else {
                    String::new()
                }
            ),
        )),
    }
}

/// `DeviceSelection.validate` (cephadm's checks).
fn validate_selection(s: &Selection) -> Result<(), FieldError> {
    // cephadm: `paths` conflicts with any property that is not None, but a
    // property equal to [] does not make the selection non-empty.
    let given = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null());
    let counts = |v: &Option<Value>| given(v) && !matches!(v, Some(Value::Seq(items)) if items.is_empty());
    let props = [&s.actuators, &s.model, &s.vendor, &s.size, &s.rotational];
    let any_prop = props.iter().any(|p| given(p));
    if !s.paths.is_empty() && any_prop {
        return Err(FieldError::cephadm(
            s.field.clone(),
            None,
            "device selection: `paths` and other parameters are mutually exclusive",
        ));
    }
    let is_empty = s.paths.is_empty() && !props.iter().any(|p| counts(p));
    let all = s.all.as_ref().is_some_and(Value::truthy);
    if !all && is_empty {
        return Err(FieldError::cephadm(
            s.field.clone(),
            None,
            "device selection cannot be empty (give rotational, size, model, vendor, paths or all: true)",
        ));
    }
    if all && !is_empty {
        return Err(FieldError::cephadm(
            s.field.clone(),
            None,
            "device selection: `all` and other parameters are mutually exclusive",
        ));
    }
    Ok(())
}

/// Our reading of a selection cephadm accepted.
fn strict_filter(s: Selection, release: Release) -> Result<DeviceFilter, FieldError> {
    let f = |name: &str| format!("{}.{}", s.field, name);
    let mut out = DeviceFilter::default();
    let data = s.field.ends_with("data_devices");
    let mut classes = Vec::with_capacity(s.paths.len());
    for (i, p) in s.paths.iter().enumerate() {
        let (path, class) = since_pacific::path_entry(p, &format!("{}[{i}]", f("paths")), data, release)?;
        out.paths.push(path);
        classes.push(class);
    }
    if classes.iter().any(Option::is_some) {
        out.path_classes = classes;
    }
    since_pacific::actuators(s.actuators, &f("actuators"))?;
    out.size = match s.size {
        None | Some(Value::Null) => None,
        Some(Value::Str(text)) => Some(
            SizeFilter::parse(&text)
                .map_err(|m| FieldError::stricter(f("size"), Some(Value::Str(text.clone()).display()), m))?,
        ),
        Some(v) => {
            let hint = if matches!(v, Value::Int(_)) {
                " (YAML reads an unquoted 10:20 as the number 620 and 100 as a number)"
            } else {
                ""
            };
            return Err(FieldError::stricter(
                f("size"),
                Some(v.display()),
                format!("size must be a quoted string such as '2TB:' or '500G:4T'{hint}; cephadm fails with a TypeError when it compares a {}", v.type_name()),
            ));
        }
    };
    out.model = text_filter(s.model, &f("model"))?;
    out.vendor = text_filter(s.vendor, &f("vendor"))?;
    out.rotational = match s.rotational {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(b),
        Some(Value::Int(0)) => Some(false),
        Some(Value::Int(1)) => Some(true),
        Some(v) => {
            let msg = match &v {
                Value::Str(t) => format!(
                    "rotational must be 0 or 1 (or true/false) without quotes: cephadm treats any non-empty string \
                     as true, so '{}' would select rotating disks (HDDs)",
                    excerpt(t)
                ),
                _ => "rotational must be 0 (SSD/NVMe) or 1 (HDD)".to_string(),
            };
            return Err(FieldError::stricter(f("rotational"), Some(v.display()), msg));
        }
    };
    out.limit = match s.limit {
        None | Some(Value::Null) | Some(Value::Int(0)) => None,
        // A limit past u64 caps nothing, as in Python; `as` would wrap it
        // round to a small one.
        Some(Value::Int(n)) if n > 0 => Some(u64::try_from(n).unwrap_or(u64::MAX)),
        Some(v) => {
            let msg = match &v {
                Value::Str(t) => format!(
                    "limit must be a whole number without quotes (limit: {t}): cephadm fails with a TypeError \
                     when it compares the string '{t}' with a number",
                    t = excerpt(t)
                ),
                _ => "limit must be a whole number of at least 1 (leave it out for no limit)".to_string(),
            };
            return Err(FieldError::stricter(f("limit"), Some(v.display()), msg));
        }
    };
    out.all = match s.all {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => b,
        Some(Value::Int(0)) => false,
        Some(Value::Int(1)) => true,
        Some(v) => {
            return Err(FieldError::stricter(
                f("all"),
                Some(v.display()),
                "all must be true or false without quotes: cephadm treats any non-empty value as true",
            ))
        }
    };
    Ok(out)
}

fn text_filter(v: Option<Value>, field: &str) -> Result<Option<String>, FieldError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) if !s.is_empty() => Ok(Some(s)),
        Some(Value::Int(i)) if i != 0 => Ok(Some(i.to_string())),
        Some(v) => Err(FieldError::stricter(
            field,
            Some(v.display()),
            if v.truthy() {
                "must be a string: cephadm matches it as a case-sensitive substring of the disk's value".to_string()
            } else {
                "an empty value makes cephadm skip this filter, so with AND it matches every disk; remove the key or give a value".to_string()
            },
        )),
    }
}

#[cfg(test)]
mod tests;
