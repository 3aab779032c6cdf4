//! Which devices of one host a spec takes, exactly as the `DriveSelection`
//! of the spec's release decides (16.2; 17.2 counts only non-Ceph disks
//! toward `limit` and compares affinity with `str(service_id)`; 19.2.1
//! skips disks being replaced; 20.2 keeps walking past the limit for this
//! spec's own OSD disks), and why every other device was not taken.
//!
//! cephadm walks the host's devices (sorted by path) once per role, in the
//! order data, wal, db, journal; a device taken by one role leaves the pool.
//! Explicit `paths` bypass all of that. We follow the same walk and record,
//! as a small value, the point where cephadm silently moves on; the text is
//! produced only when a reason is shown (`describe`).

use std::fmt;
use std::sync::Arc;

use crate::domain::ceph_release::Release;
use crate::domain::inventory::{Affinity, Device, Found};
use crate::domain::probe::gate::GateMiss;
use crate::domain::spec::{cephadm_disk_bytes, DeviceFilter, DriveSpec, FilterLogic, Role};
use crate::domain::value::excerpt;

/// The devices chosen for each role, as paths, in cephadm's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    pub data: Vec<Arc<str>>,
    pub wal: Vec<Arc<str>>,
    pub db: Vec<Arc<str>>,
    pub journal: Vec<Arc<str>>,
    /// The `crush_device_class` of each data device given as a `paths:`
    /// entry that names one (17.2+), by position in `data`; empty otherwise.
    pub data_classes: Vec<Option<Arc<str>>>,
    /// Every device of the host that no role took.
    pub skipped: Vec<Skipped>,
    /// Outcomes decided by one of cephadm's quirks, and other things worth a look.
    pub warnings: Vec<String>,
}

impl Selection {
    pub fn role(&self, role: Role) -> &[Arc<str>] {
        match role {
            Role::Data => &self.data,
            Role::Wal => &self.wal,
            Role::Db => &self.db,
            Role::Journal => &self.journal,
        }
    }

    fn role_mut(&mut self, role: Role) -> &mut Vec<Arc<str>> {
        match role {
            Role::Data => &mut self.data,
            Role::Wal => &mut self.wal,
            Role::Db => &mut self.db,
            Role::Journal => &mut self.journal,
        }
    }
}

/// A device no role took, with what each role that looked at it decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Index into the host's device list.
    pub device: usize,
    pub passes: Passes,
}

/// At most one decision per role, kept inline: a plan over thousands of
/// hosts has one of these for nearly every disk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Passes {
    items: [(Role, Pass); 4],
    len: u8,
}

impl Default for Passes {
    fn default() -> Self {
        Passes { items: [(Role::Data, Pass::Unavailable); 4], len: 0 }
    }
}

impl Passes {
    /// One role's decision.
    pub fn single(role: Role, pass: Pass) -> Passes {
        let mut p = Passes::default();
        p.push(role, pass);
        p
    }

    fn push(&mut self, role: Role, pass: Pass) {
        self.items[usize::from(self.len)] = (role, pass);
        self.len += 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Role, Pass)> {
        self.items[..usize::from(self.len)].iter()
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Why one role passed a device over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pass {
    /// `available: false` and not a Ceph device: the reject reasons say why.
    Unavailable,
    /// `being_replaced` (19.2.1+): `ceph orch device replace` is under way.
    BeingReplaced,
    /// Holds an LV whose `osdspec_affinity` names another spec.
    OtherSpec,
    Limit {
        limit: u32,
        taken: u32,
        existing: u32,
    },
    /// The same report appears twice in the inventory.
    Duplicate,
    Mismatch(Miss),
    NotInPaths,
    /// Held back by osdkeeper until released (not a cephadm notion).
    Held,
    /// Taken, then kept back by the spec's `osdkeeper.probe` gate (not a
    /// cephadm notion): it waits for a probe, or its probe is refused.
    Probe(GateMiss),
    /// Taken, then kept back with the other disks of the host's OSDs
    /// because one of them waits for its probe or was refused (they share
    /// DB/WAL devices, so they are made together or not at all).
    ProbeShared,
}

/// Which filter did not match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Miss {
    /// With AND, the first filter (in cephadm's order) that failed.
    Size,
    Model,
    Vendor,
    Rotational,
    /// With OR, none of the filters matched.
    NoneOfOr,
}

/// What cephadm would raise for this host (the whole spec then fails).
#[derive(Debug, Clone, PartialEq)]
pub struct SelectionError {
    pub field: String,
    pub message: String,
}

/// Runs cephadm's selection for one host. `existing` is the number of OSD
/// daemons of this spec's service already on the host (it counts toward `limit`).
pub fn select(spec: &DriveSpec, devices: &[Device], existing: u64) -> Result<Selection, SelectionError> {
    let mut out = Selection::default();
    let mut pool: Vec<usize> = (0..devices.len()).collect();
    let mut passes: Vec<Passes> = vec![Passes::default(); devices.len()];
    let mut taken = vec![false; devices.len()];

    for role in Role::ASSIGNMENT_ORDER {
        let Some(filter) = spec.filter(role) else { continue };
        if !filter.paths.is_empty() {
            let held = |p: &str| devices.iter().any(|d| *d.path == *p && d.held.is_some());
            let kept = filter.paths.iter().enumerate().filter(|(_, p)| !held(p));
            if role == Role::Data && !filter.path_classes.is_empty() {
                out.data_classes =
                    kept.clone().map(|(i, _)| filter.path_classes[i].as_deref().map(Arc::from)).collect();
            }
            out.role_mut(role).extend(kept.map(|(_, p)| Arc::from(p.as_str())));
            for (i, d) in devices.iter().enumerate() {
                if d.held.is_some() {
                    passes[i].push(role, Pass::Held);
                } else if filter.paths.iter().any(|p| **p == *d.path) {
                    taken[i] = true;
                } else {
                    passes[i].push(role, Pass::NotInPaths);
                }
            }
            check_paths(role, filter, devices, &mut out.warnings);
            continue;
        }
        let mut picked: Vec<usize> = Vec::new();
        let mut quirks: Vec<(usize, bool)> = Vec::new();
        let mut limit_hit = false;
        for &i in &pool {
            let d = &devices[i];
            let pass = if d.held.is_some() {
                // Beyond cephadm: a disk osdkeeper zapped or freed stays out
                // of every spec until an operator releases it.
                Some(Pass::Held)
            } else if d.being_replaced && spec.release >= Release::Squid {
                Some(Pass::BeingReplaced)
            } else if limit_hit {
                Some(after_limit(spec, filter, d, role, picked.len(), existing))
            } else if !d.available && !d.ceph_device {
                Some(Pass::Unavailable)
            } else if !d.available && d.ceph_device && other_spec(spec, d, role)?.is_some() {
                Some(Pass::OtherSpec)
            } else {
                if d.path.is_empty() {
                    return Err(SelectionError {
                        field: role.key().into(),
                        message:
                            "a device in the inventory has no 'path' (cephadm: Disk doesn't have a 'path' identifier)"
                                .into(),
                    });
                }
                let reached = filter.limit.is_some_and(|l| counted(spec, devices, &picked) + existing >= l);
                if reached && spec.release >= Release::Tentacle && !holds_this_spec(spec, d) {
                    // 20.2 passes over it and walks on: this spec's own
                    // OSD disks further on are still taken.
                    Some(after_limit(spec, filter, d, role, picked.len(), existing))
                } else if reached && spec.release < Release::Tentacle {
                    limit_hit = true;
                    Some(after_limit(spec, filter, d, role, picked.len(), existing))
                } else if duplicate_of_picked(devices, i, &picked) {
                    Some(Pass::Duplicate)
                } else {
                    let verdict = evaluate(spec, filter, d, false).map_err(|e| e.into_error(role, d))?;
                    if filter.size.is_some() && d.size_bytes.is_some_and(|b| b > 0.0) {
                        if let Ok(honest) = evaluate(spec, filter, d, true) {
                            if honest.is_none() != verdict.is_none() {
                                quirks.push((i, verdict.is_none()));
                            }
                        }
                    }
                    match verdict {
                        None => {
                            picked.push(i);
                            None
                        }
                        Some(miss) => Some(Pass::Mismatch(miss)),
                    }
                }
            };
            if let Some(p) = pass {
                passes[i].push(role, p);
            }
        }
        pool.retain(|i| !picked.contains(i));
        picked.sort_by(|a, b| devices[*a].path.cmp(&devices[*b].path));
        out.role_mut(role).reserve_exact(picked.len());
        for &i in &picked {
            taken[i] = true;
            out.role_mut(role).push(devices[i].path.clone());
        }
        note_reused(role, filter, spec.release, &picked, devices, &mut out.warnings);
        note_quirks(role, filter, &quirks, devices, &mut out.warnings);
        if role == Role::Data {
            if let Some(limit) = filter.limit {
                let found = out.data.len() as u64;
                if found < limit {
                    out.warnings.push(format!(
                        "did not find enough disks matching data_devices to reach the limit (found {found}, limit {limit})"
                    ));
                }
            }
        }
    }

    // Sized once: a big plan holds one of these lists per host and spec.
    out.skipped.reserve_exact(taken.iter().filter(|t| !**t).count());
    for (i, p) in passes.into_iter().enumerate() {
        if !taken[i] {
            out.skipped.push(Skipped { device: i, passes: p });
        }
    }
    let overlaps = check_disjoint(&out);
    out.warnings.extend(overlaps);
    Ok(out)
}

/// What counts toward `limit`: every device taken (16.2), or only those
/// that are no Ceph device (17.2+: a disk with an OSD of this spec is
/// counted among the existing daemons already).
fn counted(spec: &DriveSpec, devices: &[Device], picked: &[usize]) -> u64 {
    let n = if spec.release >= Release::Quincy {
        picked.iter().filter(|&&i| !devices[i].ceph_device).count()
    } else {
        picked.len()
    };
    n as u64
}

/// 20.2: a Ceph device with an LV whose affinity is this spec's id.
fn holds_this_spec(spec: &DriveSpec, d: &Device) -> bool {
    d.ceph_device && d.lvs.iter().any(|lv| same_spec(spec, &lv.affinity))
}

/// Whether an LV's `osdspec_affinity` names this spec: 16.2 compares it with
/// the service id itself (`None` equals a null), 17.2+ with `str(service_id)`
/// (so `None` is the string "None").
fn same_spec(spec: &DriveSpec, affinity: &Affinity) -> bool {
    let Affinity::Value(value) = affinity else { return false };
    match (value, &spec.service_id) {
        (Found::Str(a), Some(id)) => **a == **id,
        (Found::Str(a), None) => spec.release >= Release::Quincy && &**a == "None",
        (Found::Null, None) => spec.release < Release::Quincy,
        _ => false,
    }
}

/// cephadm skips a device equal to one it already took (`disk in devices`).
/// Equal reports have equal paths, and devices are sorted by path, so only
/// the run of same-path devices just before `i` needs a look.
fn duplicate_of_picked(devices: &[Device], i: usize, picked: &[usize]) -> bool {
    let d = &devices[i];
    (0..i).rev().take_while(|&j| devices[j].path == d.path).any(|j| picked.contains(&j) && devices[j].same_report(d))
}

/// cephadm stops its walk at the limit and never looks at the remaining
/// devices; for the operator we still say why each would not have been
/// taken, and "limit" only where the device would otherwise qualify. Nothing
/// here may fail, since cephadm does not get this far.
fn after_limit(spec: &DriveSpec, filter: &DeviceFilter, d: &Device, role: Role, taken: usize, existing: u64) -> Pass {
    if !d.available && !d.ceph_device {
        return Pass::Unavailable;
    }
    if !d.available && d.ceph_device && !matches!(other_spec(spec, d, role), Ok(None)) {
        return Pass::OtherSpec;
    }
    match evaluate(spec, filter, d, false) {
        Ok(Some(miss)) => Pass::Mismatch(miss),
        Ok(None) | Err(_) => Pass::Limit {
            limit: u32::try_from(filter.limit.unwrap_or(0)).unwrap_or(u32::MAX),
            taken: u32::try_from(taken).unwrap_or(u32::MAX),
            existing: u32::try_from(existing).unwrap_or(u32::MAX),
        },
    }
}

/// cephadm skips a used disk when the first LV whose `osdspec_affinity`
/// differs from this spec's id names another (non-empty) spec.
fn other_spec<'a>(spec: &DriveSpec, d: &'a Device, role: Role) -> Result<Option<&'a Found>, SelectionError> {
    for lv in &d.lvs {
        let value = match &lv.affinity {
            Affinity::Absent => continue,
            Affinity::Malformed => {
                return Err(SelectionError {
                    field: role.key().into(),
                    message: format!(
                        "device {} has an LV entry that is not a mapping; cephadm cannot read it",
                        excerpt(&d.path)
                    ),
                })
            }
            Affinity::Value(v) => v,
        };
        if same_spec(spec, &lv.affinity) {
            continue;
        }
        return Ok(value.truthy().then_some(value));
    }
    Ok(None)
}

/// A matcher that cephadm would not be able to evaluate.
struct MatchError {
    key: &'static str,
    message: String,
}

impl MatchError {
    fn into_error(self, role: Role, d: &Device) -> SelectionError {
        SelectionError {
            field: format!("{}.{}", role.key(), self.key),
            message: format!("device {}: {}", excerpt(&d.path), self.message),
        }
    }
}

#[derive(Clone, Copy)]
enum Matcher {
    Size,
    Model,
    Vendor,
    Rotational,
    All,
}

/// cephadm's FilterGenerator order: size, model, vendor, rotational, all.
fn matchers(f: &DeviceFilter) -> impl Iterator<Item = Matcher> + '_ {
    [
        f.size.is_some().then_some(Matcher::Size),
        f.model.is_some().then_some(Matcher::Model),
        f.vendor.is_some().then_some(Matcher::Vendor),
        f.rotational.is_some().then_some(Matcher::Rotational),
        f.all.then_some(Matcher::All),
    ]
    .into_iter()
    .flatten()
}

/// One matcher's answer, or cephadm's exception. `honest` compares the true
/// byte size instead of cephadm's reading of the rounded binary size.
fn matches(m: Matcher, f: &DeviceFilter, d: &Device, honest: bool) -> Result<bool, MatchError> {
    let missing = |key: &'static str| MatchError { key, message: format!("No value found for {key} or None") };
    match m {
        Matcher::Size => {
            let size = f.size.as_ref().expect("size matcher");
            let value = d.lookups.human_readable_size.as_ref().or(d.lookups.size.as_ref());
            let Some(value) = value else {
                return Err(MatchError {
                    key: "size",
                    message: "No value found for human_readable_size or size".into(),
                });
            };
            if !value.truthy() {
                return Ok(false);
            }
            let Some(text) = value.as_str() else {
                return Err(MatchError {
                    key: "size",
                    message: format!("cephadm cannot read the size {}", excerpt(&value.describe())),
                });
            };
            let bytes = if honest {
                d.size_bytes.unwrap_or(0.0)
            } else {
                cephadm_disk_bytes(text).map_err(|message| MatchError { key: "size", message })?
            };
            Ok(size.contains(bytes))
        }
        Matcher::Model | Matcher::Vendor => {
            let (key, want, found) = match m {
                Matcher::Model => ("model", f.model.as_deref(), d.lookups.model.as_ref()),
                _ => ("vendor", f.vendor.as_deref(), d.lookups.vendor.as_ref()),
            };
            let want = want.expect("text matcher");
            let found = found.ok_or_else(|| missing(key))?;
            let text = found.as_str().ok_or_else(|| MatchError {
                key,
                message: format!("cephadm cannot search {} for '{}'", excerpt(&found.describe()), excerpt(want)),
            })?;
            Ok(text.contains(want))
        }
        Matcher::Rotational => {
            let found = d.lookups.rotational.as_ref().ok_or_else(|| missing("rotational"))?;
            let want = if f.rotational.expect("rotational matcher") { "1" } else { "0" };
            Ok(found.as_str() == Some(want))
        }
        Matcher::All => Ok(true),
    }
}

/// None when the device matches. AND stops at the first failing matcher
/// and OR at the first passing one, like Python's all()/any(), so a matcher
/// that would raise is only an error if cephadm gets to it.
fn evaluate(spec: &DriveSpec, f: &DeviceFilter, d: &Device, honest: bool) -> Result<Option<Miss>, MatchError> {
    match spec.filter_logic {
        FilterLogic::And => {
            for m in matchers(f) {
                if !matches(m, f, d, honest)? {
                    return Ok(Some(match m {
                        Matcher::Size => Miss::Size,
                        Matcher::Model => Miss::Model,
                        Matcher::Vendor => Miss::Vendor,
                        Matcher::Rotational => Miss::Rotational,
                        Matcher::All => unreachable!("`all` matches every device"),
                    }));
                }
            }
            Ok(None)
        }
        FilterLogic::Or => {
            for m in matchers(f) {
                if matches(m, f, d, honest)? {
                    return Ok(None);
                }
            }
            Ok(Some(Miss::NoneOfOr))
        }
    }
}

/// The text of one role's decision about a device.
pub fn describe<'a>(spec: &'a DriveSpec, role: Role, d: &'a Device, pass: Pass) -> impl fmt::Display + 'a {
    PassText { spec, role, d, pass }
}

struct PassText<'a> {
    spec: &'a DriveSpec,
    role: Role,
    d: &'a Device,
    pass: Pass,
}

impl fmt::Display for PassText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.d;
        write!(f, "{}: ", self.role.key())?;
        match self.pass {
            Pass::BeingReplaced => f.write_str("being replaced (`ceph orch device replace`); cephadm skips it"),
            Pass::Unavailable if d.rejected_reasons.is_empty() => f.write_str("unavailable"),
            Pass::Unavailable => {
                f.write_str("unavailable: ")?;
                for (i, r) in d.rejected_reasons.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(r)?;
                }
                Ok(())
            }
            Pass::OtherSpec => {
                let other = other_spec(self.spec, d, self.role).ok().flatten();
                match other {
                    Some(Found::Str(s)) => write!(f, "holds an OSD of spec '{s}'"),
                    _ => f.write_str("holds an OSD of another spec"),
                }
            }
            Pass::Limit { limit, taken, existing } => write!(
                f,
                "limit {limit} reached ({taken} taken here + {existing} existing OSDs of this service on the host)"
            ),
            Pass::Duplicate => f.write_str("listed twice in the inventory"),
            Pass::NotInPaths => f.write_str("not among the listed paths"),
            Pass::Held => write!(
                f,
                "held by osdkeeper ({}); `osdkeeper device release HOST {}` makes it available to specs again",
                d.held.as_deref().unwrap_or("held"),
                d.path
            ),
            Pass::Probe(miss) => {
                let gate = self.spec.probe.clone().unwrap_or_default();
                f.write_str(&crate::domain::probe::gate::describe(&gate, d.probe.as_deref(), miss, &d.path))
            }
            Pass::ProbeShared => f.write_str(
                "kept back until every disk of this host's new OSDs passes its probe (osdkeeper.probe): \
                 they share DB/WAL devices, so they are made together",
            ),
            Pass::Mismatch(miss) => {
                let filter = self.spec.filter(self.role).expect("a role that looked has a filter");
                match miss {
                    Miss::NoneOfOr => {
                        f.write_str("matches none of the OR filters (")?;
                        let mut first = true;
                        for m in matchers(filter) {
                            if !first {
                                f.write_str("; ")?;
                            }
                            first = false;
                            write_miss(f, m, filter, d)?;
                        }
                        f.write_str(")")
                    }
                    Miss::Size => write_miss(f, Matcher::Size, filter, d),
                    Miss::Model => write_miss(f, Matcher::Model, filter, d),
                    Miss::Vendor => write_miss(f, Matcher::Vendor, filter, d),
                    Miss::Rotational => write_miss(f, Matcher::Rotational, filter, d),
                }
            }
        }
    }
}

fn write_miss(f: &mut fmt::Formatter<'_>, m: Matcher, filter: &DeviceFilter, d: &Device) -> fmt::Result {
    let shown = |v: Option<&Found>| {
        v.map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.describe())).unwrap_or_default()
    };
    match m {
        Matcher::Size => {
            let size = filter.size.as_ref().map(|s| s.text.as_str()).unwrap_or_default();
            match d.lookups.human_readable_size.as_ref().or(d.lookups.size.as_ref()) {
                Some(v) if v.truthy() => write!(f, "size {} is outside {size}", shown(Some(v))),
                _ => write!(f, "size unknown, wanted {size}"),
            }
        }
        Matcher::Model => write!(
            f,
            "model '{}' does not contain '{}'",
            shown(d.lookups.model.as_ref()),
            filter.model.as_deref().unwrap_or_default()
        ),
        Matcher::Vendor => write!(
            f,
            "vendor '{}' does not contain '{}'",
            shown(d.lookups.vendor.as_ref()),
            filter.vendor.as_deref().unwrap_or_default()
        ),
        Matcher::Rotational => {
            let want = if filter.rotational == Some(true) { 1 } else { 0 };
            write!(f, "rotational is {}, want {want}", shown(d.lookups.rotational.as_ref()))
        }
        Matcher::All => Ok(()),
    }
}

/// One warning per role listing the disks whose outcome the size quirk decided.
fn note_quirks(
    role: Role,
    filter: &DeviceFilter,
    quirks: &[(usize, bool)],
    devices: &[Device],
    warnings: &mut Vec<String>,
) {
    let Some(size) = &filter.size else { return };
    for taken in [false, true] {
        let hit: Vec<String> = quirks
            .iter()
            .filter(|(_, t)| *t == taken)
            .map(|(i, _)| {
                let d = &devices[*i];
                format!(
                    "{} ({} real, {} as ceph-volume shows it)",
                    d.path,
                    decimal_size(d.size_bytes.unwrap_or(0.0)),
                    d.human_size()
                )
            })
            .collect();
        if hit.is_empty() {
            continue;
        }
        let verb = if taken { "takes" } else { "misses" };
        let tail = if taken {
            "although their real size is outside it"
        } else {
            "although their real size is within it; lower the bound to include them"
        };
        warnings.push(format!(
            "{} {verb} {} for size '{}' {tail}: cephadm compares ceph-volume's binary-unit size with decimal units",
            role.key(),
            hit.join(", "),
            size.text
        ));
    }
}

fn note_reused(
    role: Role,
    filter: &DeviceFilter,
    release: Release,
    picked: &[usize],
    devices: &[Device],
    warnings: &mut Vec<String>,
) {
    let reused: Vec<&Device> = picked.iter().map(|&i| &devices[i]).filter(|d| !d.available).collect();
    if reused.is_empty() {
        return;
    }
    let paths: Vec<&str> = reused.iter().map(|d| &*d.path).collect();
    let outside_spec = reused
        .iter()
        .any(|d| d.lvs.iter().any(|lv| matches!(&lv.affinity, Affinity::Value(Found::Str(s)) if s.is_empty())));
    let whose = if outside_spec {
        "OSD volumes made outside any spec (empty osdspec_affinity), which cephadm does not treat as another spec's"
    } else {
        "OSD volumes of this spec"
    };
    warnings.push(format!(
        "{} already hold{} {whose}; cephadm passes {} to ceph-volume again as {} (ceph-volume only uses free space){}",
        paths.join(", "),
        if paths.len() == 1 { "s" } else { "" },
        if paths.len() == 1 { "it" } else { "them" },
        role.short(),
        match (filter.limit, release >= Release::Quincy) {
            (None, _) => "",
            (Some(_), false) => "; they count toward the limit",
            (Some(_), true) => "; they do not count toward the limit (their OSDs do, among the existing ones)",
        }
    ));
}

/// "4.00 TB" in decimal units, for messages.
fn decimal_size(bytes: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB", "PB"];
    let mut v = bytes;
    let mut i = 0;
    while v >= 1000.0 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{v:.2} {}", units[i])
}

fn check_paths(role: Role, f: &DeviceFilter, devices: &[Device], warnings: &mut Vec<String>) {
    for p in &f.paths {
        match devices.iter().find(|d| *d.path == **p) {
            None => warnings.push(format!(
                "{}: {p} is not in this host's inventory; cephadm passes paths to ceph-volume unchecked",
                role.key()
            )),
            Some(d) if !d.available => warnings.push(format!(
                "{}: {p} is not available ({}); cephadm passes paths to ceph-volume unchecked",
                role.key(),
                if d.rejected_reasons.is_empty() {
                    "no reason given".to_string()
                } else {
                    d.rejected_reasons.join(", ")
                }
            )),
            Some(_) => {}
        }
    }
}

/// ceph-volume refuses a batch whose device lists overlap, which only
/// `paths` can cause.
fn check_disjoint(sel: &Selection) -> Vec<String> {
    let mut out = Vec::new();
    let roles = [Role::Data, Role::Wal, Role::Db];
    for (i, a) in roles.iter().enumerate() {
        for b in &roles[i + 1..] {
            for p in sel.role(*a) {
                if sel.role(*b).contains(p) {
                    out.push(format!(
                        "{p} is listed as both {} and {}: ceph-volume will fail with 'Device lists are not disjoint'",
                        a.short(),
                        b.short()
                    ));
                }
            }
        }
    }
    out
}
