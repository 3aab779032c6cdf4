//! ceph-volume's inventory JSON (`ceph-volume inventory --format json`), one
//! device per entry, read into `domain::inventory::DeviceReport`: the one
//! reader of a device report, for the agent, the daemon, the listing, the
//! planner and the simulator alike (`ceph_volume_scan` is its fast path and
//! yields the very same reports).
//!
//! Besides the fields we keep, cephadm's matchers find `model`, `vendor`,
//! `rotational`, `human_readable_size` and `size` with a recursive search
//! over the device report (`Matcher._get_disk_key`): in a mapping the key
//! itself wins, then the values are searched in order, and the report's
//! top-level order is fixed by `Device.to_json`. We run that search while
//! reading, so the inventory is walked once and nothing else is kept.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use foldhash::fast::FixedState;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::ceph_volume_scan::{device_list, Cursor};
pub use crate::domain::ceph_release::{CephRelease, Release, ReleaseError};
pub use crate::domain::device_id::same_disk;
pub use crate::domain::inventory::DeviceReport;
use crate::domain::inventory::{sort_devices, Affinity, Device, DeviceType, Found, Lookups, LsmData, Lv};

thread_local! {
    /// Models, vendors, sizes, paths and reject reasons repeat across
    /// thousands of disks; sharing them keeps big inventories small.
    /// foldhash: the interned strings are short and come from our own
    /// input, so a fast hash beats SipHash here.
    static INTERNED: RefCell<HashSet<Arc<str>, FixedState>> = RefCell::new(HashSet::default());
}

thread_local! {
    /// The lookups made last, most recent first: the disks of a host, and
    /// of most hosts, share a few models.
    static RECENT_LOOKUPS: RefCell<Vec<Arc<Lookups>>> = const { RefCell::new(Vec::new()) };
}

/// `lookups`, shared with an equal value made recently.
pub(super) fn share(lookups: Lookups) -> Arc<Lookups> {
    RECENT_LOOKUPS.with(|recent| {
        let mut recent = recent.borrow_mut();
        if let Some(i) = recent.iter().position(|l| **l == lookups) {
            let found = recent[i].clone();
            recent[..=i].rotate_right(1);
            return found;
        }
        let fresh = Arc::new(lookups);
        recent.insert(0, fresh.clone());
        recent.truncate(8);
        fresh
    })
}

/// A string that borrows from the input when it can (serde's own `Cow`
/// impl always allocates).
struct Text<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(std::borrow::Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

impl Lv {
    fn malformed() -> Lv {
        Lv { affinity: Affinity::Malformed, osd_id: None, kind: None, osd_fsid: None, cluster_fsid: None }
    }
}

/// Bound on the interner of one thread (a daemon runs for months).
const INTERN_LIMIT: usize = 100_000;

pub(super) fn intern(s: &str) -> Arc<str> {
    INTERNED.with(|set| {
        let mut set = set.borrow_mut();
        if let Some(found) = set.get(s) {
            return found.clone();
        }
        if set.len() >= INTERN_LIMIT {
            set.clear();
        }
        let fresh: Arc<str> = Arc::from(s);
        set.insert(fresh.clone());
        fresh
    })
}

/// Reads one host's device list (a JSON array) for planning, sorted like
/// cephadm (`parse_reports`, as `Device`s with nothing marked on them). The
/// daemon reads stored inventories, which do not record the release yet.
pub fn parse_device_list(json: &[u8]) -> Result<Vec<Device>, serde_json::Error> {
    Ok(parse_reports(json, None)?.into_iter().map(Device::from).collect())
}

/// Reads one host's device list (a JSON array) and sorts it like cephadm.
///
/// A path listed twice refuses the list. ceph-volume reports each device
/// once, so a repeated path means the inventory was damaged or pieced
/// together, and nothing can tell which entry is true. cephadm would not
/// notice: it drops a copy equal to one it took but leaves that copy in the
/// pool, so `db_devices` can take the disk again (ceph-volume: "Device lists
/// are not disjoint"), and it passes two differing copies both to
/// `lvm batch /dev/sdb /dev/sdb`, which makes one OSD and then fails.
///
/// `release`: the release whose ceph-volume wrote the list, where known.
/// Every release is read alike so far (both names of the Ceph device key
/// count whatever the release, `ceph_device_lvm` having come within
/// Squid's point releases); each report records it, and reading that
/// differs by release goes into `written_by`.
pub fn parse_reports(json: &[u8], release: Option<&CephRelease>) -> Result<Vec<DeviceReport>, serde_json::Error> {
    let devices = match scan_whole(json) {
        Some(devices) => devices,
        None => {
            // The fast pass skips the sys_api values no matcher looks at. That is
            // exact as long as sys_api holds every looked-up key itself (a direct
            // key wins over anything nested, and sys_api comes first in cephadm's
            // search order); otherwise the list is read again with the full search.
            let (mut devices, complete) = parse_list(json, true)?;
            if !complete {
                devices = parse_list(json, false)?.0;
            }
            devices
        }
    };
    finish(written_by(devices, release))
}

/// The reports as the release that wrote them means them.
fn written_by(mut devices: Vec<DeviceReport>, release: Option<&CephRelease>) -> Vec<DeviceReport> {
    if let Some(r) = release {
        for d in &mut devices {
            d.release = Some(r.release);
        }
    }
    devices
}

/// The byte scanner's reading of a whole document, where it is sure.
fn scan_whole(json: &[u8]) -> Option<Vec<DeviceReport>> {
    let mut c = Cursor::new(json, 0);
    let devices = device_list(&mut c)?;
    c.ws();
    (c.i == json.len()).then_some(devices)
}

/// Sorts a host's devices like cephadm and refuses a path listed twice.
pub(super) fn finish(mut devices: Vec<DeviceReport>) -> Result<Vec<DeviceReport>, serde_json::Error> {
    sort_devices(&mut devices);
    // Sorted by path, so copies are neighbours. A missing path is reported
    // by the selection, as cephadm does ("Disk doesn't have a 'path'").
    if let Some(w) = devices.windows(2).find(|w| w[0].path == w[1].path && !w[0].path.is_empty()) {
        return Err(listed_twice(&w[0].path));
    }
    Ok(devices)
}

fn listed_twice(path: &str) -> serde_json::Error {
    de::Error::custom(format!(
        "device path {:?} is listed twice (ceph-volume lists each device once; fix the inventory)",
        crate::domain::value::excerpt(path)
    ))
}

pub(super) fn parse_list(json: &[u8], fast: bool) -> Result<(Vec<DeviceReport>, bool), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let out = de.deserialize_seq(DeviceListVisitor { fast })?;
    de.end()?;
    Ok(out)
}

/// Reads one device entry.
pub fn parse_device(json: &[u8]) -> Result<DeviceReport, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let (d, _) = de.deserialize_map(DeviceVisitor { fast: false })?;
    de.end()?;
    Ok(d)
}

/// Reads one device entry held as a JSON value (the agent and the
/// simulator keep ceph-volume's JSON as values, to send it on unchanged).
pub fn report_of(device: &serde_json::Value) -> Result<DeviceReport, serde_json::Error> {
    device.deserialize_map(DeviceVisitor { fast: false }).map(|(d, _)| d)
}

/// Reads a device list held as JSON values, in its order (each report
/// beside its value), refusing a path listed twice as `parse_reports` does.
pub fn reports_of(
    devices: &[serde_json::Value],
    release: Option<&CephRelease>,
) -> Result<Vec<DeviceReport>, serde_json::Error> {
    let reports = written_by(devices.iter().map(report_of).collect::<Result<Vec<_>, _>>()?, release);
    let mut seen = HashSet::with_capacity(reports.len());
    match reports.iter().find(|r| !r.path.is_empty() && !seen.insert(&r.path)) {
        Some(twice) => Err(listed_twice(&twice.path)),
        None => Ok(reports),
    }
}

struct DeviceListVisitor {
    fast: bool,
}

impl<'de> Visitor<'de> for DeviceListVisitor {
    /// The devices, and whether the fast pass was exact for all of them.
    type Value = (Vec<DeviceReport>, bool);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of ceph-volume inventory devices")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(16));
        let mut complete = true;
        while let Some((d, exact)) = seq.next_element_seed(DeviceSeed { fast: self.fast })? {
            if self.fast && !exact {
                // No point reading on: the caller reads the whole list again.
                complete = false;
            }
            out.push(d);
        }
        Ok((out, complete))
    }
}

struct DeviceSeed {
    fast: bool,
}

impl<'de> DeserializeSeed<'de> for DeviceSeed {
    type Value = (DeviceReport, bool);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(DeviceVisitor { fast: self.fast })
    }
}

/// Values found for `KEYS`; boxed and absent until something is found, as
/// almost every value in a report holds none of them.
#[derive(Default, Clone)]
struct Hits(Option<Box<[Option<Found>; 5]>>);

impl Hits {
    fn set(&mut self, i: usize, v: Found) {
        self.0.get_or_insert_with(Default::default)[i] = Some(v);
    }

    fn or(&mut self, other: Hits) {
        let Some(theirs) = other.0 else { return };
        match &mut self.0 {
            None => self.0 = Some(theirs),
            Some(mine) => {
                for (m, t) in mine.iter_mut().zip(*theirs) {
                    if m.is_none() {
                        *m = t;
                    }
                }
            }
        }
    }

    fn into_lookups(self) -> Lookups {
        let Some(found) = self.0 else { return Lookups::default() };
        let [model, vendor, rotational, human_readable_size, size] = *found;
        Lookups { model, vendor, rotational, human_readable_size, size }
    }
}

/// Keys whose first occurrence cephadm's matchers look up, and their slot.
fn key_index(key: &str) -> Option<usize> {
    match key {
        "model" => Some(0),
        "vendor" => Some(1),
        "rotational" => Some(2),
        "human_readable_size" => Some(3),
        "size" => Some(4),
        _ => None,
    }
}

/// A probed JSON value: what it is (only kept when asked for) and the hits
/// found inside it.
struct Probed {
    value: Found,
    hits: Hits,
    truthy: bool,
}

struct Probe {
    keep_value: bool,
}

impl<'de> DeserializeSeed<'de> for Probe {
    type Value = Probed;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Probed, D::Error> {
        d.deserialize_any(self)
    }
}

impl Probe {
    fn scalar(&self, value: impl FnOnce() -> Found, truthy: bool) -> Probed {
        Probed { value: if self.keep_value { value() } else { Found::Null }, hits: Hits::default(), truthy }
    }
}

impl<'de> Visitor<'de> for Probe {
    type Value = Probed;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Bool(v), v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Number(v as f64), v != 0))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Number(v as f64), v != 0))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Number(v), v != 0.0))
    }
    fn visit_str<E>(self, v: &str) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Str(intern(v)), !v.is_empty()))
    }
    fn visit_unit<E>(self) -> Result<Probed, E> {
        Ok(self.scalar(|| Found::Null, false))
    }
    fn visit_none<E: de::Error>(self) -> Result<Probed, E> {
        self.visit_unit()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Probed, A::Error> {
        let mut hits = Hits::default();
        let mut any = false;
        while let Some(item) = seq.next_element_seed(Probe { keep_value: false })? {
            hits.or(item.hits);
            any = true;
        }
        Ok(Probed { value: Found::Composite, hits, truthy: any })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probed, A::Error> {
        let (direct, nested, any) = probe_map(&mut map, &[], |_, _| {})?;
        let mut hits = direct;
        hits.or(nested);
        Ok(Probed { value: Found::Composite, hits, truthy: any })
    }
}

/// Walks a mapping: direct hits (the key itself) and nested hits (inside
/// values, first in order). `each` sees every key with its probed value
/// (kept for the looked-up keys and for `keep`).
fn probe_map<'de, A: MapAccess<'de>>(
    map: &mut A,
    keep: &[&str],
    mut each: impl FnMut(&str, &Probed),
) -> Result<(Hits, Hits, bool), A::Error> {
    let mut direct = Hits::default();
    let mut nested = Hits::default();
    let mut any = false;
    while let Some(key) = map.next_key::<Text<'de>>()?.map(|t| t.0) {
        any = true;
        let idx = key_index(&key);
        let probed = map.next_value_seed(Probe { keep_value: idx.is_some() || keep.contains(&key.as_ref()) })?;
        each(&key, &probed);
        if let Some(i) = idx {
            direct.set(i, probed.value.clone());
        }
        nested.or(probed.hits);
    }
    Ok((direct, nested, any))
}

/// sys_api keys whose values the report keeps besides the looked-up ones.
const WATCHED: [&str; 3] = ["size", "rotational", "type"];

struct DeviceVisitor {
    /// Skip what only matters when sys_api lacks a looked-up key.
    fast: bool,
}

impl<'de> Visitor<'de> for DeviceVisitor {
    /// The device, and whether its lookups are exact (always, unless fast).
    type Value = (DeviceReport, bool);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a ceph-volume inventory device (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut d = DeviceReport::default();
        // Hits per top-level field, in Device.to_json order.
        let mut sys_hits = Hits::default();
        let mut lvs_hits = Hits::default();
        let mut lsm_hits = Hits::default();
        let mut other_hits: [Hits; 2] = Default::default(); // available, device_id
        let mut created_hits = Hits::default();
        let mut sys_complete = false;
        // The key's old name and its Squid name, each with the hits of its
        // value; a key given twice counts as its last, as in Python.
        let mut ceph_keys: [(bool, Hits); 2] = Default::default();
        while let Some(key) = map.next_key::<Text<'de>>()?.map(|t| t.0) {
            match key.as_ref() {
                "path" => match map.next_value::<Option<Text<'de>>>() {
                    Ok(p) => d.path = intern(p.as_ref().map(|t| &*t.0).unwrap_or_default()),
                    Err(_) => return Err(de::Error::custom("path must be a string")),
                },
                "available" => {
                    let p = map.next_value_seed(Probe { keep_value: false })?;
                    d.available = p.truthy;
                    other_hits[0] = p.hits;
                }
                "ceph_device" | "ceph_device_lvm" => {
                    let p = map.next_value_seed(Probe { keep_value: false })?;
                    ceph_keys[usize::from(key != "ceph_device")] = (p.truthy, p.hits);
                }
                // 19.2.1+; a bool, so nothing in it is looked up.
                "being_replaced" => d.being_replaced = map.next_value_seed(Probe { keep_value: false })?.truthy,
                "rejected_reasons" => {
                    let raw: Vec<Text<'de>> = map.next_value::<Option<Vec<_>>>()?.unwrap_or_default();
                    let mut r: Vec<Arc<str>> = raw.iter().map(|x| intern(&x.0)).collect();
                    r.sort();
                    d.rejected_reasons = r;
                }
                "device_id" => {
                    // Unique per disk: not worth interning.
                    if let Ok(Some(t)) = map.next_value::<Option<Text<'de>>>() {
                        d.device_id = Box::from(&*t.0);
                    }
                }
                "sys_api" => {
                    let sys = map.next_value_seed(SysApiSeed { fast: self.fast })?;
                    sys_complete = sys.all_direct;
                    sys_hits = sys.hits;
                    d.size_bytes = sys.size;
                    d.kind = sys.kind;
                    d.dev_type = sys.dev_type;
                    d.partitions = sys.partitions;
                }
                "lvs" => {
                    let (lvs, hits) = map.next_value_seed(LvsSeed)?;
                    d.lvs = lvs;
                    lvs_hits = hits;
                }
                "lsm_data" => {
                    let (lsm, hits) = map.next_value_seed(MapOnly(Lsm))?;
                    d.lsm = lsm;
                    lsm_hits = hits;
                }
                "created" if self.fast => {
                    map.next_value::<IgnoredAny>()?;
                }
                "created" => created_hits.or(map.next_value_seed(Probe { keep_value: false })?.hits),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let [(old, mut ceph_hits), (new, new_hits)] = ceph_keys;
        d.ceph_device = old || new;
        ceph_hits.or(new_hits);
        let [avail_hits, id_hits] = other_hits;
        // Fields before sys_api in cephadm's order must hold nothing looked up.
        let exact = !self.fast || (sys_complete && ceph_hits.0.is_none() && avail_hits.0.is_none());
        let mut hits = ceph_hits;
        hits.or(avail_hits);
        hits.or(sys_hits);
        hits.or(created_hits);
        hits.or(lvs_hits);
        hits.or(id_hits);
        hits.or(lsm_hits);
        d.lookups = share(hits.into_lookups());
        Ok((d, exact))
    }
}

struct SysApiSeed {
    fast: bool,
}

/// What `sys_api` gives a report.
#[derive(Default)]
struct SysApi {
    hits: Hits,
    /// The true size.
    size: Option<f64>,
    kind: DeviceType,
    dev_type: Arc<str>,
    partitions: Box<[Arc<str>]>,
    /// All five looked-up keys were there directly.
    all_direct: bool,
}

impl SysApi {
    fn note(&mut self, key: &str, value: &Found) {
        match (key, value) {
            ("size", Found::Number(n)) => self.size = Some(*n),
            ("rotational", Found::Str(s)) if &**s == "1" => self.kind = DeviceType::Hdd,
            ("rotational", _) => self.kind = DeviceType::Ssd,
            ("type", Found::Str(s)) => self.dev_type = s.clone(),
            ("type", _) => self.dev_type = Arc::from(""),
            _ => {}
        }
    }
}

impl<'de> DeserializeSeed<'de> for SysApiSeed {
    type Value = SysApi;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SysApiSeed {
    type Value = SysApi;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the sys_api mapping")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(SysApi::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut sys = SysApi::default();
        let mut direct = Hits::default();
        let mut nested = Hits::default();
        let mut seen = 0u8;
        while let Some(key) = map.next_key::<Text<'de>>()?.map(|t| t.0) {
            let idx = key_index(&key);
            if key == "partitions" {
                let (names, hits) = map.next_value_seed(PartitionsSeed)?;
                sys.partitions = names;
                nested.or(hits);
                continue;
            }
            if self.fast && idx.is_none() && !WATCHED.contains(&key.as_ref()) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let probed = map.next_value_seed(Probe { keep_value: idx.is_some() || WATCHED.contains(&key.as_ref()) })?;
            sys.note(&key, &probed.value);
            if let Some(i) = idx {
                direct.set(i, probed.value);
                seen |= 1 << i;
            }
            nested.or(probed.hits);
        }
        if self.fast {
            // Nested hits are not all there: only exact when all five are direct.
            sys.all_direct = seen == 0b1_1111;
            sys.hits = direct;
        } else {
            direct.or(nested);
            sys.hits = direct;
        }
        Ok(sys)
    }
}

/// `sys_api.partitions`: the names of a mapping, probed like any value for
/// the looked-up keys inside.
struct PartitionsSeed;

impl<'de> DeserializeSeed<'de> for PartitionsSeed {
    type Value = (Box<[Arc<str>]>, Hits);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(PartitionsSeed)
    }
}

impl PartitionsSeed {
    /// A value that is no mapping: one nameless partition when Python finds it true.
    fn other(p: Probed) -> (Box<[Arc<str>]>, Hits) {
        let names: Box<[Arc<str>]> = if p.truthy { Box::new([intern("")]) } else { Box::default() };
        (names, p.hits)
    }
}

impl<'de> Visitor<'de> for PartitionsSeed {
    type Value = (Box<[Arc<str>]>, Hits);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the partitions mapping")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut names = Vec::new();
        let (direct, nested, _) = probe_map(&mut map, &[], |key, _| names.push(intern(key)))?;
        let mut hits = direct;
        hits.or(nested);
        Ok((names.into_boxed_slice(), hits))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(Self::other(Probe { keep_value: false }.visit_seq(seq)?))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Self::other(Probe { keep_value: false }.visit_bool(v)?))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Self::other(Probe { keep_value: false }.visit_i64(v)?))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Self::other(Probe { keep_value: false }.visit_u64(v)?))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Self::other(Probe { keep_value: false }.visit_f64(v)?))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Self::other(Probe { keep_value: false }.visit_str(v)?))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Box::default(), Hits::default()))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }
}

/// A scalar found in `lsm_data` as the listing shows it: strings as they
/// are, numbers and booleans written out, nothing for null, a list or a
/// mapping.
fn lsm_text(v: &Found) -> Option<Arc<str>> {
    match v {
        Found::Str(s) => Some(s.clone()),
        Found::Number(n) => Some(intern(&n.to_string())),
        Found::Bool(b) => Some(intern(if *b { "true" } else { "false" })),
        Found::Null | Found::Composite => None,
    }
}

/// A value read as a mapping by `R`; any other value gives `R`'s default,
/// and the looked-up keys inside it, as any probed value does.
struct MapOnly<R>(R);

/// What `MapOnly` reads a mapping with.
trait MapReader<'de> {
    type Out: Default;
    /// The mapping's reading, and the looked-up keys found in it.
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<(Self::Out, Hits), A::Error>;
}

impl<'de, R: MapReader<'de>> DeserializeSeed<'de> for MapOnly<R> {
    type Value = (R::Out, Hits);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, R: MapReader<'de>> Visitor<'de> for MapOnly<R> {
    type Value = (R::Out, Hits);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.read(map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok((R::Out::default(), Probe { keep_value: false }.visit_seq(seq)?.hits))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Default::default())
    }
}

/// `lsm_data`: the few values `device ls` shows (none when it shows
/// nothing: `{}`, the usual), and the looked-up keys inside, like any value.
struct Lsm;

impl<'de> MapReader<'de> for Lsm {
    type Out = Option<Box<LsmData>>;
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<(Self::Out, Hits), A::Error> {
        let mut lsm = LsmData::default();
        let mut direct = Hits::default();
        let mut nested = Hits::default();
        while let Some(key) = map.next_key::<Text<'de>>()?.map(|t| t.0) {
            let idx = key_index(&key);
            if key == "ledSupport" {
                let (leds, hits) = map.next_value_seed(MapOnly(Leds))?;
                (lsm.ident_led, lsm.fault_led) = leds;
                nested.or(hits);
                continue;
            }
            let keep = idx.is_some() || matches!(key.as_ref(), "transport" | "rpm" | "health");
            let probed = map.next_value_seed(Probe { keep_value: keep })?;
            match key.as_ref() {
                "transport" => lsm.transport = lsm_text(&probed.value),
                "rpm" => lsm.rpm = lsm_text(&probed.value),
                "health" => lsm.health = lsm_text(&probed.value),
                _ => {}
            }
            if let Some(i) = idx {
                direct.set(i, probed.value);
            }
            nested.or(probed.hits);
        }
        direct.or(nested);
        let said = lsm != LsmData::default();
        Ok((said.then(|| Box::new(lsm)), direct))
    }
}

/// `lsm_data.ledSupport`: the identify and fault LEDs' states, when given as text.
struct Leds;

impl<'de> MapReader<'de> for Leds {
    type Out = (Option<Arc<str>>, Option<Arc<str>>);
    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<(Self::Out, Hits), A::Error> {
        let (mut ident, mut fault) = (None, None);
        let (direct, nested, _) = probe_map(&mut map, &["IDENTstatus", "FAILstatus"], |key, probed| {
            let text = probed.value.as_str().map(intern);
            match key {
                "IDENTstatus" => ident = text,
                "FAILstatus" => fault = text,
                _ => {}
            }
        })?;
        let mut hits = direct;
        hits.or(nested);
        Ok(((ident, fault), hits))
    }
}

struct LvsSeed;

impl<'de> DeserializeSeed<'de> for LvsSeed {
    type Value = (Vec<Lv>, Hits);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(LvsSeed)
    }
}

impl<'de> Visitor<'de> for LvsSeed {
    type Value = (Vec<Lv>, Hits);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the list of logical volumes")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Vec::new(), Hits::default()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut lvs = Vec::new();
        let mut hits = Hits::default();
        while let Some((aff, h)) = seq.next_element_seed(LvSeed)? {
            lvs.push(aff);
            hits.or(h);
        }
        Ok((lvs, hits))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (direct, nested, any) = probe_map(&mut map, &[], |_, _| {})?;
        let mut hits = direct;
        hits.or(nested);
        Ok((if any { vec![Lv::malformed()] } else { Vec::new() }, hits))
    }
}

struct LvSeed;

impl<'de> DeserializeSeed<'de> for LvSeed {
    type Value = (Lv, Hits);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(LvSeed)
    }
}

impl<'de> Visitor<'de> for LvSeed {
    type Value = (Lv, Hits);
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a logical volume report")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut lv = Lv { affinity: Affinity::Absent, osd_id: None, kind: None, osd_fsid: None, cluster_fsid: None };
        let mut hits = Hits::default();
        let mut nested = Hits::default();
        while let Some(key) = map.next_key::<Text<'de>>()?.map(|t| t.0) {
            let keep = matches!(key.as_ref(), "osdspec_affinity" | "osd_id" | "type" | "osd_fsid" | "cluster_fsid")
                || key_index(&key).is_some();
            let p = map.next_value_seed(Probe { keep_value: keep })?;
            match (key.as_ref(), &p.value) {
                ("osdspec_affinity", v) => lv.affinity = Affinity::Value(v.clone()),
                ("osd_id", Found::Str(s)) => lv.osd_id = Some(s.clone()),
                ("osd_id", Found::Number(n)) => lv.osd_id = Some(intern(&n.to_string())),
                ("type", Found::Str(s)) => lv.kind = Some(s.clone()),
                ("osd_fsid", Found::Str(s)) if !s.is_empty() => lv.osd_fsid = Some(s.clone()),
                ("cluster_fsid", Found::Str(s)) if !s.is_empty() => lv.cluster_fsid = Some(s.clone()),
                _ => {}
            }
            if let Some(i) = key_index(&key) {
                hits.set(i, p.value);
            }
            nested.or(p.hits);
        }
        hits.or(nested);
        Ok((lv, hits))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        let p = Probe { keep_value: false }.visit_seq(seq)?;
        Ok((Lv::malformed(), p.hits))
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Lv::malformed(), Hits::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_generated_device() {
        let json = br#"{"path": "/dev/sdb", "sys_api": {"vendor": "ATA", "model": "WDC WD2002FAEX-0",
            "rotational": "1", "partitions": {}, "size": 2000398934016.0, "human_readable_size": "1.82 TB"},
            "ceph_device": false, "lsm_data": {}, "available": true, "rejected_reasons": [],
            "device_id": "WDC_X", "lvs": []}"#;
        let d = parse_device(json).unwrap();
        assert_eq!(&*d.path, "/dev/sdb");
        assert!(d.available && !d.ceph_device);
        assert_eq!(d.model(), "WDC WD2002FAEX-0");
        assert_eq!(d.human_size(), "1.82 TB");
        assert_eq!(d.size_bytes, Some(2000398934016.0));
        assert_eq!(d.human_type(), "hdd");
    }

    #[test]
    fn lookup_follows_cephadm_search_order() {
        // sys_api lacks model; a partition has one; lsm_data has one too.
        let json = br#"{"lsm_data": {"model": "from-lsm"}, "path": "/dev/x",
            "sys_api": {"partitions": {"x1": {"model": "from-partition"}}}}"#;
        let d = parse_device(json).unwrap();
        assert_eq!(d.model(), "from-partition");
        // A direct key beats a nested one even when it comes later.
        let json =
            br#"{"path": "/dev/x", "sys_api": {"partitions": {"x1": {"vendor": "nested"}}, "vendor": "direct"}}"#;
        assert_eq!(parse_device(json).unwrap().vendor(), "direct");
        let json = br#"{"path": "/dev/x", "sys_api": {}}"#;
        assert!(parse_device(json).unwrap().lookups.model.is_none());
    }

    #[test]
    fn lv_affinities() {
        let json = br#"{"path": "/dev/x", "lvs": [{"name": "a", "comment": "not used by ceph"},
            {"osdspec_affinity": "fast"}, "junk"]}"#;
        let d = parse_device(json).unwrap();
        let affinities: Vec<Affinity> = d.lvs.iter().map(|lv| lv.affinity.clone()).collect();
        assert_eq!(affinities, vec![Affinity::Absent, Affinity::Value(Found::Str("fast".into())), Affinity::Malformed]);
    }
}
#[cfg(test)]
mod report_tests {
    use super::*;

    /// Every host's device list in a fixture: a list, or an inventory
    /// file's `hosts` mapping.
    fn lists(text: &str) -> Vec<Vec<u8>> {
        let doc: serde_json::Value = serde_json::from_str(text).unwrap();
        match doc.get("hosts").and_then(|h| h.as_object()) {
            Some(hosts) => hosts.values().map(|l| serde_json::to_vec_pretty(l).unwrap()).collect(),
            None => vec![text.as_bytes().to_vec()],
        }
    }

    /// The byte scanner, the serde reader (fast pass and full search) and
    /// the reader of JSON values give the same reports on every fixture,
    /// and the scanner is sure of real ceph-volume output (its fast path is
    /// what keeps reading thousands of hosts quick).
    #[test]
    fn scanner_and_serde_reader_agree_on_the_fixtures() {
        let fixtures: [(&str, &str, bool); 6] = [
            ("pacific", include_str!("../../tests/fixtures/ceph_volume/inventory_pacific_16.2.15.json"), true),
            ("reef", include_str!("../../tests/fixtures/ceph_volume/inventory_reef_18.2.7_loop.json"), true),
            ("tentacle", include_str!("../../tests/fixtures/ceph_volume/inventory_tentacle_20.2.4_loop.json"), true),
            ("field report", include_str!("../../specs/f5-422-inventory.json"), true),
            ("agent file", include_str!("../../tests/fixtures/agent/inventory_file.json"), false),
            ("plan", include_str!("../../tests/fixtures/plan/hdd-data-ssd-db/inventory.json"), true),
        ];
        for (name, text, scanner_sure) in fixtures {
            for bytes in lists(text) {
                let full = parse_list(&bytes, false).unwrap().0;
                let (fast, complete) = parse_list(&bytes, true).unwrap();
                if complete {
                    assert_eq!(fast, full, "{name}: the fast pass");
                }
                let values: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(reports_of(&values, None).unwrap(), full, "{name}: the reader of values");
                match scan_whole(&bytes) {
                    Some(scanned) => assert_eq!(scanned, full, "{name}: the byte scanner"),
                    None => assert!(!scanner_sure, "{name}: the byte scanner gave up on real ceph-volume output"),
                }
                assert_eq!(parse_reports(&bytes, None).unwrap(), finish(full).unwrap(), "{name}: sorted");
            }
        }
    }

    #[test]
    fn squid_names_the_ceph_device_key_ceph_device_lvm() {
        let tentacle = include_str!("../../tests/fixtures/ceph_volume/inventory_tentacle_20.2.4_loop.json");
        let osd_disk = tentacle.replacen(r#""ceph_device_lvm": false"#, r#""ceph_device_lvm": true"#, 1);
        let first = |reports: Vec<DeviceReport>| reports.into_iter().find(|d| &*d.path == "/dev/loop6").unwrap();
        let scanned = scan_whole(osd_disk.as_bytes()).expect("sure of it");
        assert!(scanned.iter().any(|d| d.ceph_device), "the scanner reads the new name");
        let read = first(parse_list(osd_disk.as_bytes(), false).unwrap().0);
        assert!(read.ceph_device, "the serde reader reads the new name");
        assert!(!first(parse_reports(tentacle.as_bytes(), None).unwrap()).ceph_device);
        let release = CephRelease::parse("20.2.4").unwrap();
        let told = parse_reports(osd_disk.as_bytes(), Some(&release)).unwrap();
        assert!(told.iter().all(|d| d.release == Some(release.release)), "each report knows who wrote it");
        assert_eq!(first(told).ceph_device, read.ceph_device, "read alike whatever the release, so far");
        // Either name true makes a Ceph device; each name counts as its last value.
        for (json, want) in [
            (r#"{"path": "/dev/x", "ceph_device": true, "ceph_device_lvm": false}"#, true),
            (r#"{"path": "/dev/x", "ceph_device": false, "ceph_device_lvm": true}"#, true),
            (r#"{"path": "/dev/x", "ceph_device_lvm": true, "ceph_device_lvm": false}"#, false),
            (r#"{"path": "/dev/x", "ceph_device_lvm": 1}"#, true),
        ] {
            assert_eq!(parse_device(json.as_bytes()).unwrap().ceph_device, want, "{json}");
        }
    }

    /// One loop device, an OSD's main device, as 18.2.7 and 20.2.4 report
    /// it (`testbed/ceph-sandbox/record-formats.sh`): `device_nodes` a
    /// string then a list, `actuators` null in both, `ceph_device` then
    /// `ceph_device_lvm` (and `being_replaced`), the reasons in another
    /// order. Read alike, by the scanner too.
    #[test]
    fn one_device_as_reef_18_2_7_and_tentacle_20_2_4_report_it_reads_alike() {
        let reef = include_str!("../../tests/fixtures/ceph_volume/inventory_reef_18.2.7_loop_osd_main.json");
        let tentacle = include_str!("../../tests/fixtures/ceph_volume/inventory_tentacle_20.2.4_loop_osd_main.json");
        assert!(reef.contains(r#""device_nodes": "loop10""#) && tentacle.contains(r#""device_nodes": ["#));
        let (r, t) = (parse_device(reef.as_bytes()).unwrap(), parse_device(tentacle.as_bytes()).unwrap());
        assert_eq!(r, t);
        assert_eq!(r.rejected_reasons.len(), 2);
        assert_eq!(scan_whole(format!("[{tentacle}]").as_bytes()).expect("sure of it"), vec![t.clone()]);
        // A multi-actuator disk behind a device-mapper, built from 20.2's
        // `disk.get_devices` (`actuators` counts `independent_access_ranges`,
        // `device_nodes` lists the slaves); 18.2 joins the slaves with ','.
        let multi = tentacle.replacen(r#""actuators": null"#, r#""actuators": 2"#, 1);
        let multi = multi.replacen(r#"["#, r#"["dm-0", "#, 1);
        assert_ne!(multi, tentacle);
        assert_eq!(parse_device(multi.as_bytes()).unwrap(), t);
        assert_eq!(scan_whole(format!("[{multi}]").as_bytes()), Some(vec![t.clone()]));
        let reef_multi = reef.replacen(r#""device_nodes": "loop10""#, r#""device_nodes": "dm-0,loop10""#, 1);
        assert_eq!(
            parse_device(reef_multi.replacen(r#""actuators": null"#, r#""actuators": 2"#, 1).as_bytes()).unwrap(),
            r
        );
    }

    /// The same two loop devices (blank; a real BlueStore label at the
    /// head) as the code of 17.2.9 and of 19.2.3 reports them
    /// (`testbed/ceph-sandbox/record-code-formats.sh`, Ubuntu's packages of
    /// those releases run on this host): 17.2.9 writes 18.2's shape without
    /// `actuators`, 19.2.3 already 20.2's (`device_nodes` a list,
    /// `ceph_device_lvm`, `being_replaced`). All read as the recorded 18.2.7
    /// and 20.2.4 OSD device, by the scanner too.
    #[test]
    fn devices_as_the_code_of_quincy_17_2_9_and_squid_19_2_3_reports_them_read_alike() {
        let fixture = |name: &str| {
            std::fs::read_to_string(format!("{}/tests/fixtures/ceph_volume/{name}", env!("CARGO_MANIFEST_DIR")))
                .unwrap()
        };
        // Recorded on whichever loop device was free: renamed to the one the others had.
        let at_loop10 = |text: String| {
            let dev = text.split(r#""devname": ""#).nth(1).and_then(|t| t.split('"').next()).unwrap().to_string();
            text.replace(&format!("{dev}\""), "loop10\"")
        };
        let quincy = at_loop10(fixture("inventory_quincy_17.2.9_code_loop_labelled.json"));
        let squid = at_loop10(fixture("inventory_squid_19.2.3_code_loop_labelled.json"));
        assert!(!quincy.contains("actuators") && quincy.contains(r#""ceph_device": false"#), "{quincy}");
        assert!(squid.contains(r#""device_nodes": ["loop10"]"#) && squid.contains(r#""being_replaced": false"#));
        let reef = parse_device(fixture("inventory_reef_18.2.7_loop_osd_main.json").as_bytes()).unwrap();
        let tentacle = parse_device(fixture("inventory_tentacle_20.2.4_loop_osd_main.json").as_bytes()).unwrap();
        for (name, text, like) in [("17.2.9", &quincy, &reef), ("19.2.3", &squid, &tentacle)] {
            let read = parse_device(text.as_bytes()).unwrap();
            assert_eq!(&read, like, "{name}");
            assert!(!read.available && !read.ceph_device && !read.being_replaced, "{name}: {read:?}");
            assert_eq!(scan_whole(format!("[{text}]").as_bytes()), Some(vec![read]), "{name}: the byte scanner");
        }
        for name in ["inventory_quincy_17.2.9_code_loop_blank.json", "inventory_squid_19.2.3_code_loop_blank.json"] {
            let text = fixture(name);
            let read = parse_device(text.as_bytes()).unwrap();
            assert!(read.available && read.rejected_reasons.is_empty(), "{name}: {read:?}");
            assert_eq!(read.size_bytes, Some(11.0 * (1u64 << 30) as f64), "{name}");
            assert_eq!(scan_whole(format!("[{text}]").as_bytes()), Some(vec![read]), "{name}: the byte scanner");
        }
    }

    /// `being_replaced` (19.2.1+), as 20.2.4 writes it: both readers read it,
    /// and an older report without it reads as not being replaced.
    #[test]
    fn tentacle_says_which_disk_is_being_replaced() {
        let tentacle = include_str!("../../tests/fixtures/ceph_volume/inventory_tentacle_20.2.4_loop.json");
        let marked = tentacle.replacen(r#""being_replaced": false"#, r#""being_replaced": true"#, 1);
        let scanned = scan_whole(marked.as_bytes()).expect("sure of it");
        let read = parse_list(marked.as_bytes(), false).unwrap().0;
        assert_eq!(scanned.iter().filter(|d| d.being_replaced).count(), 1, "the scanner reads it");
        assert_eq!(scanned, read, "both readers read it alike");
        assert!(parse_list(tentacle.as_bytes(), false).unwrap().0.iter().all(|d| !d.being_replaced));
        let old = r#"{"path": "/dev/x", "available": true}"#;
        assert!(!parse_device(old.as_bytes()).unwrap().being_replaced);
    }

    /// The agent's checks once read these fields themselves; what they read now.
    #[test]
    fn sys_api_partitions_and_type() {
        let read = |sys: &str| parse_device(format!(r#"{{"path": "/dev/x", "sys_api": {sys}}}"#).as_bytes()).unwrap();
        let d = read(r#"{"type": "disk", "partitions": {"x1": {"start": "2048"}, "x2": {}}}"#);
        assert_eq!((&*d.dev_type, d.partitions.len()), ("disk", 2));
        assert_eq!(d.partitions.iter().map(|p| &**p).collect::<Vec<_>>(), ["x1", "x2"]);
        // A type that is no string is no type (the batch filter says "no type").
        assert_eq!(&*read(r#"{"type": 1}"#).dev_type, "");
        // Partitions as a list: a partitioned disk for the batch filter, as
        // before; the zap's and the probe's checks, which took mappings only,
        // now agree (a probe refuses it).
        assert!(read(r#"{"partitions": ["x1"]}"#).has_partitions());
        assert!(!read(r#"{"partitions": []}"#).has_partitions());
        assert!(!read(r#"{"partitions": null}"#).has_partitions());
        assert!(!read(r#"{"partitions": {}}"#).has_partitions());
    }

    #[test]
    fn lsm_data_as_shown() {
        let json = br#"{"path": "/dev/x", "lsm_data": {"transport": "SAS", "rpm": 7200, "health": "Good",
            "ledSupport": {"IDENTstatus": "off", "FAILstatus": 3}, "errors": []}}"#;
        let d = parse_device(json).unwrap();
        let lsm = d.lsm.as_deref().unwrap();
        assert_eq!(
            (lsm.transport.as_deref(), lsm.rpm.as_deref(), lsm.health.as_deref()),
            (Some("SAS"), Some("7200"), Some("Good"))
        );
        assert_eq!((lsm.ident_led.as_deref(), lsm.fault_led.as_deref()), (Some("off"), None));
        assert!(parse_device(br#"{"path": "/dev/x", "lsm_data": {}}"#).unwrap().lsm.is_none());
        let list = format!("[{}]", std::str::from_utf8(json).unwrap());
        assert_eq!(scan_whole(list.as_bytes()), None, "a LED state that is no string is the visitor's to read");
        let plain = list.replace(r#""FAILstatus": 3"#, r#""FAILstatus": "Unknown""#).replace("\"path\": \"/dev/x\"",
            r#""path": "/dev/x", "sys_api": {"model": "M", "vendor": "V", "rotational": "1", "size": 1.0, "human_readable_size": "1 B"}"#);
        let scanned = scan_whole(plain.as_bytes()).expect("sure of it");
        assert_eq!(scanned, parse_list(plain.as_bytes(), false).unwrap().0);
    }
}

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    #[test]
    fn fast_pass_is_exact_when_sys_api_has_every_key() {
        let full = br#"[{"path": "/dev/sdb", "ceph_device": false, "available": true,
            "sys_api": {"model": "M", "vendor": "V", "rotational": "1", "human_readable_size": "1.82 TB", "size": 2.0e12,
                        "partitions": {}, "removable": "0"}, "lsm_data": {}, "lvs": []}]"#;
        let (fast, complete) = parse_list(full, true).unwrap();
        assert!(complete);
        assert_eq!(fast, parse_list(full, false).unwrap().0);
        // A missing key sends the list through the full search.
        let partial =
            br#"[{"path": "/dev/sdb", "sys_api": {"vendor": "V", "rotational": "1", "human_readable_size": "1.82 TB",
            "size": 2.0e12, "partitions": {"sdb1": {"model": "nested"}}}}]"#;
        assert!(!parse_list(partial, true).unwrap().1);
        assert_eq!(parse_device_list(partial).unwrap()[0].model(), "nested");
    }
}
