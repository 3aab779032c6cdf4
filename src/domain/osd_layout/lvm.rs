//! `ceph-volume lvm batch` planning (16.2, `devices/lvm/batch.py`):
//! `get_physical_osds`, `fast_allocations` / `get_physical_fast_allocs` and
//! `get_deployment_layout`, step for step and in ceph-volume's arithmetic
//! (Python floats, truncation where it truncates), so that sizes print as
//! its report prints them. Alongside, why each device passed to it gets
//! nothing, which ceph-volume does not say.
//!
//! 19.2's `get_deployment_layout` (19.2.3's code, read) differs in two
//! ways, followed here: `--block-db-size` without DB devices carves each
//! OSD's DB from its own data device; and WAL volumes are assigned only
//! when DB devices are given too, and then only to the last OSD (its loop
//! leaves the WAL assignment after the DB loop). 20.2's adds a third: DB or
//! WAL devices with no free slot end the run (exit 1) instead of planning
//! nothing.

use std::sync::Arc;

use super::args::BatchArgs;
use super::device::{lvm_device, note_shared_fast_device, vg_bytes, why_unavailable};
use super::size::display;
use super::{Layout, PlannedOsd, Refusal, Unused};
use crate::domain::ceph_release::Release;
use crate::domain::inventory::Device;
use crate::domain::spec::{Role, MAX_OSDS_PER_DEVICE};

pub(super) fn plan(b: &BatchArgs, devices: &[Device]) -> Result<Layout, Refusal> {
    disjoint(b)?;
    if b.osds_per_device == 0 {
        return Err(Refusal::failed("float division by zero", Some("--osds-per-device 0".into())));
    }
    // The spec parser refuses such specs; this holds the same bound for
    // commands that do not come from a spec (the simulator's agent API).
    if b.osds_per_device > i64::from(MAX_OSDS_PER_DEVICE) {
        return Err(Refusal {
            exit_code: 1,
            message: format!("osdkeeper plans at most {MAX_OSDS_PER_DEVICE} OSDs per device"),
            detail: Some(format!("--osds-per-device {}", b.osds_per_device)),
            by_osdkeeper: true,
        });
    }
    let mut out = Layout::default();
    let mut ids = b.osd_ids.clone();
    let per = b.osds_per_device;
    let rel = b.data_allocate_fraction / per as f64;
    let squid_layout = b.release >= Release::Squid;
    // 19.2 on: a DB size without DB devices puts the DB on the data devices,
    // whose OSDs are then smaller by their DBs.
    let db_on_data = squid_layout && b.block_db_size.is_some() && b.db.is_empty();
    let dbs_on_data = if db_on_data { (b.block_db_size.unwrap_or(0.0) * per as f64).trunc() } else { 0.0 };
    for path in &b.data {
        let Some(dev) = lvm_device(devices, path) else {
            out.unused.push(unused(
                path,
                Role::Data,
                format!("ceph-volume's batch skips it: {}", why_unavailable(devices, path)),
            ));
            continue;
        };
        let size = vg_bytes(dev) as f64;
        let abs = ((size - dbs_on_data) * rel).trunc();
        let mut free = size;
        let mut made = 0;
        for _ in 0..per {
            if abs > free {
                break;
            }
            free -= abs;
            made += 1;
            out.osds.push(PlannedOsd {
                data: path.clone(),
                db: None,
                wal: None,
                osd_id: ids.pop().filter(|id| !id.is_empty()),
                data_size: Some(abs),
                db_size: None,
                wal_size: None,
                encrypted: b.dmcrypt,
            });
        }
        if made == 0 {
            out.unused.push(unused(
                path,
                Role::Data,
                format!("ceph-volume's batch skips it: no room for an OSD of {}", display(abs)),
            ));
        } else {
            note_shared_fast_device(dev, per == 1 && b.data_allocate_fraction >= 1.0, &mut out.warnings);
        }
    }
    let db_paths = if db_on_data { &b.data } else { &b.db };
    let fast = [(Fast::Db, db_paths, b.block_db_size), (Fast::Wal, &b.wal, b.block_wal_size)];
    if out.osds.is_empty() {
        for (kind, paths, _) in fast {
            for p in paths.iter() {
                let why = format!("ceph-volume makes no OSD on this host, so it gets no {}", kind.upper());
                out.unused.push(unused(p, kind.role(), why));
            }
        }
        return Ok(out);
    }
    // Every data device passed counts here, usable or not.
    let requested = per * b.data.len() as i64;
    let mut allocations = Vec::new();
    for (kind, paths, size) in fast {
        if paths.is_empty() {
            allocations.push(Vec::new());
            continue;
        }
        let (allocs, uses) = fast_allocs(kind, paths, devices, requested, out.osds.len(), size)?;
        for (p, u) in paths.iter().zip(&uses) {
            if let Some(why) = u.why(kind, out.osds.len()) {
                out.unused.push(unused(p, kind.role(), why));
            }
        }
        if allocs.is_empty() && b.release >= Release::Tentacle {
            return Err(Refusal::failed(
                format!("{} {} devices were passed, but none are available", paths.len(), kind.allocation_word()),
                None,
            ));
        }
        if allocs.is_empty() {
            return Ok(nothing_without(kind, paths, out));
        }
        if allocs.len() != out.osds.len() {
            return Err(Refusal::failed(
                format!("{} {} allocations != {} num_osds", allocs.len(), kind.allocation_word(), out.osds.len()),
                Some(short_of(kind, paths, &uses, out.osds.len())),
            ));
        }
        allocations.push(allocs);
    }
    // ceph-volume pops from the end: the first OSD gets the last slot.
    let (mut db, mut wal) = (allocations.remove(0), allocations.remove(0));
    if squid_layout {
        assign_from_squid(&mut out.osds, db, wal, db_on_data);
        return Ok(out);
    }
    for osd in &mut out.osds {
        if let Some(a) = db.pop() {
            (osd.db, osd.db_size) = (Some(a.path), Some(a.size));
        }
        if let Some(a) = wal.pop() {
            (osd.wal, osd.wal_size) = (Some(a.path), Some(a.size));
        }
    }
    Ok(out)
}

/// The assignment of 19.2 on: each OSD takes the last DB slot, or with the DB on
/// the data devices the first slot of its own device (keeping the one
/// before when its device has none left, as its loop variable does); the
/// WAL goes to the last OSD alone, and only when there are DB slots.
fn assign_from_squid(osds: &mut [PlannedOsd], mut db: Vec<Alloc>, mut wal: Vec<Alloc>, db_on_data: bool) {
    if db.is_empty() {
        return;
    }
    let mut current: Option<Alloc> = None;
    for osd in osds.iter_mut() {
        if db_on_data {
            if let Some(i) = db.iter().position(|a| a.path == osd.data) {
                current = Some(db.remove(i));
            }
        } else {
            current = db.pop();
        }
        if let Some(a) = &current {
            (osd.db, osd.db_size) = (Some(a.path.clone()), Some(a.size));
        }
    }
    if let (Some(last), Some(a)) = (osds.last_mut(), wal.pop()) {
        (last.wal, last.wal_size) = (Some(a.path), Some(a.size));
    }
}

fn unused(path: &Arc<str>, role: Role, why: String) -> Unused {
    Unused { path: path.clone(), role, why }
}

/// ceph-volume's `ensure_disjoint_device_lists`, before any planning.
fn disjoint(b: &BatchArgs) -> Result<(), Refusal> {
    let pairs = [(&b.data, "data", &b.db, "db"), (&b.data, "data", &b.wal, "wal"), (&b.db, "db", &b.wal, "wal")];
    for (a, an, c, cn) in pairs {
        if let Some(p) = a.iter().find(|p| c.contains(p)) {
            return Err(Refusal::failed(
                "Device lists are not disjoint",
                Some(format!("{p} is passed as both {an} and {cn}")),
            ));
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Fast {
    Db,
    Wal,
}

impl Fast {
    fn role(self) -> Role {
        match self {
            Fast::Db => Role::Db,
            Fast::Wal => Role::Wal,
        }
    }

    fn upper(self) -> &'static str {
        match self {
            Fast::Db => "DB",
            Fast::Wal => "WAL",
        }
    }

    /// ceph-volume's type name, as in `block_db_size`.
    fn type_name(self) -> &'static str {
        match self {
            Fast::Db => "block_db",
            Fast::Wal => "block_wal",
        }
    }

    /// ceph-volume calls db devices "fast" and wal devices "very fast".
    fn allocation_word(self) -> &'static str {
        match self {
            Fast::Db => "fast",
            Fast::Wal => "very fast",
        }
    }
}

struct Alloc {
    path: Arc<str>,
    size: f64,
}

/// What one fast device gave, for the explanations.
enum FastUse {
    Unavailable(String),
    Full { slots: i64, lvs: usize },
    NoRoom(f64),
    NotNeeded,
    Gave(usize),
}

impl FastUse {
    fn why(&self, kind: Fast, osds: usize) -> Option<String> {
        let k = kind.upper();
        let what = match self {
            FastUse::Gave(_) => return None,
            FastUse::Unavailable(why) => why.clone(),
            FastUse::Full { slots, lvs } => format!(
                "its {slots} slot{} already taken by the {lvs} LV{} on it",
                if *slots == 1 { " is" } else { "s are" },
                if *lvs == 1 { "" } else { "s" }
            ),
            FastUse::NoRoom(size) => format!("no room for a {k} of {}", display(*size)),
            FastUse::NotNeeded => {
                format!("the {} devices before it already hold a {k} for each of the {osds} OSDs", kind.role().short())
            }
        };
        Some(format!("ceph-volume puts no {k} on it: {what}"))
    }
}

/// `fast_allocations` with `get_physical_fast_allocs`: each usable device
/// is cut into as many equal slots as the busiest device needs; any LV
/// already on it fills a slot. A size that does not fit a slot ends the run.
fn fast_allocs(
    kind: Fast,
    paths: &[Arc<str>],
    devices: &[Device],
    requested_osds: i64,
    new_osds: usize,
    requested_size: Option<f64>,
) -> Result<(Vec<Alloc>, Vec<FastUse>), Refusal> {
    let divider = paths.len().max(1) as i64;
    let slots = requested_osds / divider + i64::from(requested_osds % divider != 0);
    // A size of 0 means "not given" (Python truthiness of a Size).
    let requested_size = requested_size.filter(|s| *s != 0.0);
    let mut out: Vec<Alloc> = Vec::new();
    let mut uses = Vec::new();
    for path in paths {
        let Some(dev) = lvm_device(devices, path) else {
            uses.push(FastUse::Unavailable(why_unavailable(devices, path)));
            continue;
        };
        let mut occupied = dev.lvs.len() as i64;
        let dev_size = vg_bytes(dev);
        if dev_size == 0 {
            return Err(Refusal::failed("division by zero", Some(format!("{path} has no size in the inventory"))));
        }
        let mut abs = (dev_size as f64 / slots as f64).trunc();
        if let Some(want) = requested_size {
            if want <= abs {
                abs = want;
            } else {
                return Err(Refusal::failed(
                    format!(
                        "{} was requested for {}_size, but only {} can be fulfilled",
                        display(want),
                        kind.type_name(),
                        display(abs)
                    ),
                    Some(format!("{path} split into {slots} equal slot{}", if slots == 1 { "" } else { "s" })),
                ));
            }
        }
        let mut free = dev_size as f64;
        let before = out.len();
        while abs <= free && out.len() < new_osds && occupied < slots {
            free -= abs;
            occupied += 1;
            out.push(Alloc { path: path.clone(), size: abs });
        }
        uses.push(match out.len() - before {
            0 if out.len() >= new_osds => FastUse::NotNeeded,
            0 if occupied >= slots => FastUse::Full { slots, lvs: dev.lvs.len() },
            0 => FastUse::NoRoom(abs),
            n => FastUse::Gave(n),
        });
    }
    Ok((out, uses))
}

/// ceph-volume makes nothing at all when no fast device has a free slot
/// (it does not fall back to OSDs without one), and says so only in its log.
fn nothing_without(kind: Fast, paths: &[Arc<str>], mut out: Layout) -> Layout {
    let k = kind.upper();
    let mut seen: Vec<&Arc<str>> = Vec::new();
    for osd in &out.osds {
        if !seen.contains(&&osd.data) {
            seen.push(&osd.data);
        }
    }
    let data: Vec<Unused> = seen
        .into_iter()
        .map(|p| {
            unused(
                p,
                Role::Data,
                format!(
                    "ceph-volume makes no OSD on it: no {} device has a free slot for its {k}",
                    kind.role().short()
                ),
            )
        })
        .collect();
    out.unused.splice(0..0, data);
    out.warnings.push(format!(
        "ceph-volume would create no OSD on this host: none of the {} devices ({}) has a free slot for a {k}, and then it makes none rather than OSDs without one",
        kind.role().short(),
        paths.join(", ")
    ));
    out.osds.clear();
    out
}

/// Why fewer slots than OSDs, device by device.
fn short_of(kind: Fast, paths: &[Arc<str>], uses: &[FastUse], osds: usize) -> String {
    let each: Vec<String> = paths
        .iter()
        .zip(uses)
        .map(|(p, u)| match u {
            FastUse::Gave(n) => format!("{p} {n}"),
            FastUse::Unavailable(why) => format!("{p} none ({why})"),
            FastUse::Full { slots, lvs } => format!("{p} none ({lvs} of {slots} slots taken)"),
            FastUse::NoRoom(_) | FastUse::NotNeeded => format!("{p} none"),
        })
        .collect();
    format!("only these {} slots are free for {osds} OSDs: {}", kind.upper(), each.join(", "))
}
