//! Which devices of one host a spec takes, exactly as cephadm 16.2's
//! `DriveSelection` decides, and why every other device was not taken.
//!
//! cephadm walks the host's devices (sorted by path) once per role, in the
//! order data, wal, db, journal; a device taken by one role leaves the pool.
//! Explicit `paths` bypass all of that. We follow the same walk and record a
//! reason at every point where cephadm silently moves on.

use crate::domain::inventory::{Affinity, Device, Found};
use crate::domain::spec::{
    cephadm_disk_bytes, DeviceFilter, DriveSpec, FilterLogic, Role, SizeFilter,
};

/// The devices chosen for each role, as paths, in cephadm's order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    pub data: Vec<String>,
    pub wal: Vec<String>,
    pub db: Vec<String>,
    pub journal: Vec<String>,
    /// Every device of the host that no role took, with the reasons.
    pub skipped: Vec<Skipped>,
    /// Outcomes decided by one of cephadm's quirks, and other things worth a look.
    pub warnings: Vec<String>,
}

impl Selection {
    pub fn role(&self, role: Role) -> &[String] {
        match role {
            Role::Data => &self.data,
            Role::Wal => &self.wal,
            Role::Db => &self.db,
            Role::Journal => &self.journal,
        }
    }

    fn role_mut(&mut self, role: Role) -> &mut Vec<String> {
        match role {
            Role::Data => &mut self.data,
            Role::Wal => &mut self.wal,
            Role::Db => &mut self.db,
            Role::Journal => &mut self.journal,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub path: String,
    /// One reason per role that looked at the device, e.g.
    /// "data_devices: rotational is 1, want 0".
    pub reasons: Vec<String>,
}

/// What cephadm would raise for this host (the whole spec then fails).
#[derive(Debug, Clone, PartialEq)]
pub struct SelectionError {
    pub field: String,
    pub message: String,
}

/// Why a device was passed over by one role.
#[derive(Debug, Clone, PartialEq)]
enum Pass {
    Unavailable(Vec<String>),
    OtherSpec(String),
    Limit {
        limit: u64,
        picked: usize,
        existing: u64,
    },
    Duplicate,
    Mismatch(String),
    NotInPaths,
}

impl Pass {
    fn text(&self) -> String {
        match self {
            Pass::Unavailable(r) if r.is_empty() => "unavailable".into(),
            Pass::Unavailable(r) => format!("unavailable: {}", r.join(", ")),
            Pass::OtherSpec(s) => format!("holds an OSD of another spec ({s})"),
            Pass::Limit {
                limit,
                picked,
                existing,
            } => {
                format!("limit {limit} reached ({picked} taken here + {existing} existing OSDs of this service on the host)")
            }
            Pass::Duplicate => "listed twice in the inventory".into(),
            Pass::Mismatch(m) => m.clone(),
            Pass::NotInPaths => "not among the listed paths".into(),
        }
    }
}

/// Runs cephadm's selection for one host. `existing` is the number of OSD
/// daemons of this spec's service already on the host (it counts toward `limit`).
pub fn select(
    spec: &DriveSpec,
    devices: &[Device],
    existing: u64,
) -> Result<Selection, SelectionError> {
    let mut out = Selection::default();
    let mut pool: Vec<usize> = (0..devices.len()).collect();
    let mut passes: Vec<Vec<(Role, Pass)>> = vec![Vec::new(); devices.len()];
    let mut taken_by: Vec<Option<Role>> = vec![None; devices.len()];

    for role in Role::ASSIGNMENT_ORDER {
        let Some(filter) = spec.filter(role) else {
            continue;
        };
        if !filter.paths.is_empty() {
            out.role_mut(role).extend(filter.paths.iter().cloned());
            for (i, d) in devices.iter().enumerate() {
                if !filter.paths.contains(&d.path) {
                    passes[i].push((role, Pass::NotInPaths));
                }
            }
            check_paths(role, filter, devices, &mut out.warnings);
            continue;
        }
        let mut picked: Vec<usize> = Vec::new();
        let mut limit_hit = false;
        for &i in &pool {
            let d = &devices[i];
            if limit_hit {
                passes[i].push((role, limit_reason(spec, filter, d, picked.len(), existing)?));
                continue;
            }
            if !d.available && !d.ceph_device {
                passes[i].push((role, Pass::Unavailable(d.rejected_reasons.clone())));
                continue;
            }
            if !d.available && d.ceph_device {
                if let Some(other) = other_spec(spec, d, role)? {
                    passes[i].push((role, Pass::OtherSpec(other)));
                    continue;
                }
            }
            if d.path.is_empty() {
                return Err(SelectionError {
                    field: role.key().into(),
                    message: "a device in the inventory has no 'path' (cephadm: Disk doesn't have a 'path' identifier)".into(),
                });
            }
            if let Some(limit) = filter.limit {
                if picked.len() as u64 + existing >= limit {
                    limit_hit = true;
                    passes[i].push((role, limit_reason(spec, filter, d, picked.len(), existing)?));
                    continue;
                }
            }
            if picked.iter().any(|&p| devices[p].same_report(d)) {
                passes[i].push((role, Pass::Duplicate));
                continue;
            }
            match evaluate(spec, filter, role, d)? {
                Verdict::Match => picked.push(i),
                Verdict::NoMatch(why) => {
                    passes[i].push((role, Pass::Mismatch(why)));
                    if let Some(w) = size_quirk(spec, filter, role, d, false) {
                        out.warnings.push(w);
                    }
                    continue;
                }
            }
            if let Some(w) = size_quirk(spec, filter, role, d, true) {
                out.warnings.push(w);
            }
        }
        pool.retain(|i| !picked.contains(i));
        let mut paths: Vec<&Device> = picked.iter().map(|&i| &devices[i]).collect();
        paths.sort_by(|a, b| a.path.cmp(&b.path));
        out.role_mut(role)
            .extend(paths.iter().map(|d| d.path.clone()));
        for &i in &picked {
            taken_by[i] = Some(role);
            if !devices[i].available {
                out.warnings.push(format!(
                    "{} already holds OSD volumes of this spec; cephadm offers it to ceph-volume again as {} (ceph-volume fills only free space){}",
                    devices[i].path,
                    role.short(),
                    if filter.limit.is_some() { " and it counts toward the limit" } else { "" }
                ));
            }
        }
        if role == Role::Data {
            if let Some(limit) = filter.limit {
                let found = out.data.len() as u64;
                if found < limit && filter.paths.is_empty() {
                    out.warnings.push(format!(
                        "did not find enough disks matching data_devices to reach the limit (found {found}, limit {limit})"
                    ));
                }
            }
        }
    }

    for (i, d) in devices.iter().enumerate() {
        if taken_by[i].is_some() || spec_paths_contain(spec, &d.path) {
            continue;
        }
        let reasons = passes[i]
            .iter()
            .map(|(role, p)| format!("{}: {}", role.key(), p.text()))
            .collect();
        out.skipped.push(Skipped {
            path: d.path.clone(),
            reasons,
        });
    }
    let overlaps = check_disjoint(&out);
    out.warnings.extend(overlaps);
    Ok(out)
}

fn spec_paths_contain(spec: &DriveSpec, path: &str) -> bool {
    Role::ASSIGNMENT_ORDER
        .iter()
        .filter_map(|r| spec.filter(*r))
        .any(|f| f.paths.iter().any(|p| p == path))
}

/// The reason to show for a device cephadm never looked at because the limit
/// stopped its walk: say "limit" only if the device would otherwise qualify.
fn limit_reason(
    spec: &DriveSpec,
    filter: &DeviceFilter,
    d: &Device,
    picked: usize,
    existing: u64,
) -> Result<Pass, SelectionError> {
    let limit = filter.limit.unwrap_or(0);
    if !d.available && !d.ceph_device {
        return Ok(Pass::Unavailable(d.rejected_reasons.clone()));
    }
    // Evaluating here must not raise where cephadm would not look at all.
    let verdict = evaluate(spec, filter, Role::Data, d).unwrap_or(Verdict::Match);
    Ok(match verdict {
        Verdict::Match => Pass::Limit {
            limit,
            picked,
            existing,
        },
        Verdict::NoMatch(why) => Pass::Mismatch(why),
    })
}

/// cephadm skips a used disk when the first LV whose `osdspec_affinity`
/// differs from this spec's id names another (non-empty) spec.
fn other_spec(spec: &DriveSpec, d: &Device, role: Role) -> Result<Option<String>, SelectionError> {
    for lv in &d.lvs {
        let value =
            match lv {
                Affinity::Absent => continue,
                Affinity::Malformed => return Err(SelectionError {
                    field: role.key().into(),
                    message: format!(
                        "device {} has an LV entry that is not a mapping; cephadm cannot read it",
                        d.path
                    ),
                }),
                Affinity::Value(v) => v,
            };
        let same = matches!((value, &spec.service_id), (Found::Str(a), Some(id)) if a == id);
        if same {
            continue;
        }
        return Ok(value.truthy().then(|| match value {
            Found::Str(s) => s.clone(),
            other => other.describe(),
        }));
    }
    Ok(None)
}

enum Verdict {
    Match,
    NoMatch(String),
}

/// One matcher's answer for a device, or cephadm's exception.
fn matcher(
    m: &Matcher,
    spec: &DriveSpec,
    role: Role,
    d: &Device,
    honest_size: bool,
) -> Result<(bool, String), SelectionError> {
    let fail = |field: &str, message: String| SelectionError {
        field: format!("{}.{field}", role.key()),
        message,
    };
    match m {
        Matcher::Size(f) => {
            let value = d
                .lookups
                .human_readable_size
                .as_ref()
                .or(d.lookups.size.as_ref());
            let Some(value) = value else {
                return Err(fail(
                    "size",
                    format!(
                        "device {}: No value found for human_readable_size or size",
                        d.path
                    ),
                ));
            };
            if !value.truthy() {
                return Ok((false, format!("size of {} is unknown", d.path)));
            }
            let Some(text) = value.as_str() else {
                return Err(fail(
                    "size",
                    format!(
                        "device {}: cephadm cannot read the size {}",
                        d.path,
                        value.describe()
                    ),
                ));
            };
            let bytes = if honest_size {
                d.size_bytes.unwrap_or(0.0)
            } else {
                cephadm_disk_bytes(text)
                    .map_err(|e| fail("size", format!("device {}: {e}", d.path)))?
            };
            Ok((
                f.contains(bytes),
                format!("size {text} is outside {}", f.text),
            ))
        }
        Matcher::Model(want) | Matcher::Vendor(want) => {
            let (key, found) = match m {
                Matcher::Model(_) => ("model", d.lookups.model.as_ref()),
                _ => ("vendor", d.lookups.vendor.as_ref()),
            };
            let Some(found) = found else {
                return Err(fail(
                    key,
                    format!("device {}: No value found for {key} or None", d.path),
                ));
            };
            let Some(text) = found.as_str() else {
                return Err(fail(
                    key,
                    format!(
                        "device {}: cephadm cannot search {} for '{want}'",
                        d.path,
                        found.describe()
                    ),
                ));
            };
            Ok((
                text.contains(want.as_str()),
                format!("{key} '{text}' does not contain '{want}'"),
            ))
        }
        Matcher::Rotational(want) => {
            let Some(found) = d.lookups.rotational.as_ref() else {
                return Err(fail(
                    "rotational",
                    format!("device {}: No value found for rotational or None", d.path),
                ));
            };
            let want_s = if *want { "1" } else { "0" };
            let ok = found.as_str() == Some(want_s);
            Ok((
                ok,
                format!(
                    "rotational is {}, want {want_s}",
                    found
                        .as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| found.describe())
                ),
            ))
        }
        Matcher::All => {
            let _ = spec;
            Ok((true, String::new()))
        }
    }
}

enum Matcher<'a> {
    Size(&'a SizeFilter),
    Model(&'a String),
    Vendor(&'a String),
    Rotational(bool),
    All,
}

/// cephadm's FilterGenerator order: size, model, vendor, rotational, all.
fn matchers(f: &DeviceFilter) -> Vec<Matcher<'_>> {
    let mut v = Vec::with_capacity(5);
    if let Some(s) = &f.size {
        v.push(Matcher::Size(s));
    }
    if let Some(m) = &f.model {
        v.push(Matcher::Model(m));
    }
    if let Some(m) = &f.vendor {
        v.push(Matcher::Vendor(m));
    }
    if let Some(r) = f.rotational {
        v.push(Matcher::Rotational(r));
    }
    if f.all {
        v.push(Matcher::All);
    }
    v
}

fn evaluate(
    spec: &DriveSpec,
    f: &DeviceFilter,
    role: Role,
    d: &Device,
) -> Result<Verdict, SelectionError> {
    evaluate_with(spec, f, role, d, false)
}

/// AND stops at the first failing matcher and OR at the first passing one,
/// as Python's `all()`/`any()` do; a matcher that would raise is only an
/// error if cephadm gets to it.
fn evaluate_with(
    spec: &DriveSpec,
    f: &DeviceFilter,
    role: Role,
    d: &Device,
    honest: bool,
) -> Result<Verdict, SelectionError> {
    let ms = matchers(f);
    match spec.filter_logic {
        FilterLogic::And => {
            for m in &ms {
                let (ok, why) = matcher(m, spec, role, d, honest)?;
                if !ok {
                    return Ok(Verdict::NoMatch(why));
                }
            }
            Ok(Verdict::Match)
        }
        FilterLogic::Or => {
            let mut whys = Vec::new();
            for m in &ms {
                let (ok, why) = matcher(m, spec, role, d, honest)?;
                if ok {
                    return Ok(Verdict::Match);
                }
                whys.push(why);
            }
            Ok(Verdict::NoMatch(if whys.is_empty() {
                "OR with no filters matches nothing".into()
            } else {
                format!("matches none of the OR filters ({})", whys.join("; "))
            }))
        }
    }
}

/// A warning when comparing the disk's true byte size instead of cephadm's
/// reading of "3.64 TB" would have flipped this role's decision.
fn size_quirk(
    spec: &DriveSpec,
    f: &DeviceFilter,
    role: Role,
    d: &Device,
    matched: bool,
) -> Option<String> {
    let size = f.size.as_ref()?;
    let true_bytes = d.size_bytes?;
    if true_bytes <= 0.0 {
        return None;
    }
    let honest = matches!(evaluate_with(spec, f, role, d, true).ok()?, Verdict::Match);
    if honest == matched {
        return None;
    }
    let shown = d.human_size();
    let real = decimal_size(true_bytes);
    Some(if matched {
        format!(
            "{}: {} takes this {real} disk although it is outside '{}' by its real size: cephadm compares \
             ceph-volume's binary-unit size ({shown}) with decimal units",
            d.path,
            role.key(),
            size.text
        )
    } else {
        format!(
            "{}: {} misses this {real} disk although it is within '{}' by its real size: cephadm compares \
             ceph-volume's binary-unit size ({shown}) with decimal units; lower the bound to match",
            d.path,
            role.key(),
            size.text
        )
    })
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
        match devices.iter().find(|d| &d.path == p) {
            None => warnings.push(format!(
                "{}: {p} is not in this host's inventory; cephadm passes paths to ceph-volume unchecked",
                role.key()
            )),
            Some(d) if !d.available => warnings.push(format!(
                "{}: {p} is not available ({}); cephadm passes paths to ceph-volume unchecked",
                role.key(),
                if d.rejected_reasons.is_empty() { "no reason given".to_string() } else { d.rejected_reasons.join(", ") }
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
