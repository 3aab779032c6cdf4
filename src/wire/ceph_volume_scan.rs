//! A fast reader for device lists in the shape ceph-volume writes them,
//! exact or silent: it answers only when the serde visitor of
//! `ceph_volume.rs` would give the very same devices, and otherwise says it
//! is unsure (`None`) and the visitor reads the list.
//!
//! Inventories of thousands of hosts are mostly text no matcher reads (about
//! thirty keys per device report); the visitor tokenizes all of it through
//! serde, this reader skips it with a byte loop. It is sure only where the
//! answer is plain to see: every string printable ASCII without escapes,
//! every key read at most once, `sys_api` holding all five looked-up keys
//! itself (then cephadm's recursive search never looks further), scalar
//! flags, LVs as mappings of scalars, `sys_api.partitions` a mapping,
//! `lsm_data`'s shown values strings or short plain integers. Whatever it skips it still checks as
//! serde_json would (strings, numbers, literals, nesting), so it never
//! accepts what the visitor refuses.

use std::cell::RefCell;
use std::sync::Arc;

use super::ceph_volume::{intern, share};
use crate::domain::inventory::{Affinity, DeviceReport, DeviceType, Found, Lookups, LsmData, Lv};

/// Bytes a string may hold for this reader: printable ASCII without `"`
/// and `\` (anything else, even valid, is left to serde).
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0x20;
    while i < 0x7f {
        t[i] = i != b'"' as usize && i != b'\\' as usize;
        i += 1;
    }
    t
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit set in each byte of `w` equal to `c`, exactly.
#[inline]
fn byte_is(w: u64, c: u8) -> u64 {
    let v = w ^ (ONES * u64::from(c));
    !(((v & !HIGHS) + !HIGHS) | v) & HIGHS
}

/// The high bit set in bytes of `w` that are not `PLAIN`; the lowest one
/// set is exact (a borrow can only flag bytes above a true hit).
#[inline]
fn not_plain(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
    zero(w ^ (ONES * u64::from(b'"')))
        | zero(w ^ (ONES * u64::from(b'\\')))
        | zero(w ^ (ONES * 0x7f))
        | control
        | (w & HIGHS)
}

/// Deeper than this the reader gives up (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 64;

/// A position in a JSON text; every method returns `None` where the reader
/// is unsure, leaving the position wherever it stopped.
pub(super) struct Cursor<'a> {
    pub b: &'a [u8],
    pub i: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(b: &'a [u8], i: usize) -> Self {
        Cursor { b, i }
    }

    /// Skips whitespace. Files written with an indent have a newline and
    /// a few spaces before every key: the spaces after a newline are
    /// skipped eight at a time, without a branch per byte.
    #[inline]
    pub fn ws(&mut self) {
        let b = self.b;
        let mut i = self.i;
        loop {
            match b.get(i) {
                Some(b'\n') => {
                    i += 1;
                    while let Some(chunk) = b.get(i..i + 8) {
                        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
                        let other = !byte_is(w, b' ') & HIGHS;
                        if other != 0 {
                            i += (other.trailing_zeros() / 8) as usize;
                            break;
                        }
                        i += 8;
                    }
                }
                Some(b' ' | b'\r' | b'\t') => i += 1,
                _ => break,
            }
        }
        self.i = i;
    }

    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    #[inline]
    pub fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string's contents (between the quotes).
    #[inline]
    pub fn string(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let rest = &self.b[self.i..];
        let mut n = 0;
        loop {
            let Some(chunk) = rest.get(n..n + 8) else {
                n += rest[n..].iter().position(|&c| !PLAIN[usize::from(c)])?;
                break;
            };
            let stop = not_plain(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
            if stop != 0 {
                n += (stop.trailing_zeros() / 8) as usize;
                break;
            }
            n += 8;
        }
        if rest[n] != b'"' {
            return None;
        }
        self.i += n + 1;
        Some(&rest[..n])
    }

    pub fn text(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.string()?).ok()
    }

    /// After a member or an element: true if another one follows.
    #[inline]
    pub fn more(&mut self, close: u8) -> Option<bool> {
        match self.peek()? {
            b',' => {
                self.i += 1;
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// The members of a mapping, each key handed to `each` with the
    /// cursor on its value.
    fn members(&mut self, mut each: impl FnMut(&mut Self, &'a [u8]) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            let key = self.string()?;
            self.eat(b':')?;
            each(self, key)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// The elements of a list, each handed to `each`.
    fn elements(&mut self, mut each: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            each(self)?;
            if !self.more(b']')? {
                return Some(());
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..].starts_with(word).then(|| self.i += word.len())
    }

    /// A number's text, checked against JSON's grammar and, where it could
    /// overflow (an exponent, or hundreds of digits), against serde_json's
    /// range: the visitor refuses `1e400` where it reads the value.
    fn number(&mut self) -> Option<&'a [u8]> {
        self.ws();
        let (b, start) = (self.b, self.i);
        let digits = |mut i: usize| {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let mut i = start + usize::from(b.get(start) == Some(&b'-'));
        i = match b.get(i)? {
            b'0' => i + 1,
            b'1'..=b'9' => digits(i + 1),
            _ => return None,
        };
        if b.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return None;
            }
            i = end;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
            let end = digits(i);
            if end == i {
                return None;
            }
            i = end;
            let text = std::str::from_utf8(&b[start..i]).ok()?;
            text.parse::<f64>().ok().filter(|n| n.is_finite())?;
        } else if i - start > 300 {
            return None;
        }
        self.i = i;
        Some(&b[start..i])
    }

    /// Skips any value.
    pub fn skip(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.members(|c, _| c.skip(depth + 1)),
            b'[' => self.elements(|c| c.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number().map(drop),
        }
    }

    /// A scalar as cephadm's key search finds it; lists and mappings are
    /// left to the visitor.
    fn scalar(&mut self) -> Option<Found> {
        match self.peek()? {
            b'"' => Some(Found::Str(intern(self.text()?))),
            b't' => self.literal(b"true").map(|_| Found::Bool(true)),
            b'f' => self.literal(b"false").map(|_| Found::Bool(false)),
            b'n' => self.literal(b"null").map(|_| Found::Null),
            b'-' => None, // "-0" reads as 0 in serde_json, as -0.0 here
            _ => {
                let text = std::str::from_utf8(self.number()?).ok()?;
                let n: f64 = text.parse().ok()?;
                n.is_finite().then_some(Found::Number(n))
            }
        }
    }

    /// A scalar's JSON text (a string with its quotes), checked as far
    /// as `scalar` needs to be sure it would read the same text alike.
    fn scalar_text(&mut self) -> Option<&'a [u8]> {
        let start = match self.peek()? {
            b'[' | b'{' | b'-' => return None,
            _ => self.i,
        };
        match self.b[start] {
            b'"' => self.string().map(drop)?,
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            _ => self.number().map(drop)?,
        }
        Some(&self.b[start..self.i])
    }

    /// A string, or a plain integer short enough that the visitor writes
    /// it out with the same digits (what `lsm_data` shows).
    fn shown_scalar(&mut self) -> Option<Arc<str>> {
        if self.peek()? == b'"' {
            return Some(intern(self.text()?));
        }
        let digits = self.number()?;
        let plain =
            digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) && (digits == b"0" || digits[0] != b'0');
        plain.then(|| intern(std::str::from_utf8(digits).expect("ASCII digits")))
    }

    fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|_| true),
            b'f' => self.literal(b"false").map(|_| false),
            _ => None,
        }
    }
}

/// Marks `bit` in `seen`; `None` if it was already there (a key given
/// twice: serde would take the last, cephadm's dict too, but why guess).
fn first(seen: &mut u32, bit: u32) -> Option<()> {
    (*seen & bit == 0).then(|| *seen |= bit)
}

/// A device list (a JSON array) from the cursor on, unsorted, or `None`.
pub(super) fn device_list(c: &mut Cursor<'_>) -> Option<Vec<DeviceReport>> {
    let mut out = Vec::with_capacity(32);
    c.elements(|c| {
        out.push(device(c)?);
        Some(())
    })?;
    // A big inventory is kept whole: no room for devices that never come.
    out.shrink_to_fit();
    Some(out)
}

fn device(c: &mut Cursor<'_>) -> Option<DeviceReport> {
    let mut d = DeviceReport::default();
    let mut seen = 0u32;
    let mut sys_complete = false;
    c.members(|c, key| {
        match key {
            b"path" => {
                first(&mut seen, 1)?;
                d.path = intern(c.text()?);
            }
            b"available" => {
                first(&mut seen, 2)?;
                d.available = c.boolean()?;
            }
            // Either name of the key (`ceph_device_lvm` from Squid on) makes a Ceph device.
            b"ceph_device" => {
                first(&mut seen, 4)?;
                d.ceph_device |= c.boolean()?;
            }
            b"ceph_device_lvm" => {
                first(&mut seen, 128)?;
                d.ceph_device |= c.boolean()?;
            }
            b"rejected_reasons" => {
                first(&mut seen, 8)?;
                let mut reasons: Vec<Arc<str>> = Vec::new();
                c.elements(|c| {
                    reasons.push(intern(c.text()?));
                    Some(())
                })?;
                reasons.sort();
                d.rejected_reasons = reasons;
            }
            b"device_id" => {
                first(&mut seen, 16)?;
                d.device_id = Box::from(c.text()?);
            }
            b"sys_api" => {
                first(&mut seen, 32)?;
                sys_complete = sys_api(c, &mut d)?;
            }
            b"lvs" => {
                first(&mut seen, 64)?;
                c.elements(|c| {
                    d.lvs.push(lv(c)?);
                    Some(())
                })?;
            }
            b"lsm_data" => {
                first(&mut seen, 256)?;
                d.lsm = lsm_data(c)?;
            }
            b"being_replaced" => {
                first(&mut seen, 512)?;
                d.being_replaced = c.boolean()?;
            }
            _ => c.skip(1)?,
        }
        Some(())
    })?;
    sys_complete.then_some(d)
}

/// Reads `sys_api` into `d`; true if it held all five looked-up keys.
fn sys_api(c: &mut Cursor<'_>, d: &mut DeviceReport) -> Option<bool> {
    let mut seen = 0u32;
    let mut raw: [&[u8]; 5] = [&[]; 5];
    c.members(|c, key| {
        let slot = match key {
            b"model" => 0,
            b"vendor" => 1,
            b"rotational" => 2,
            b"human_readable_size" => 3,
            b"size" => 4,
            b"type" => {
                first(&mut seen, 1 << 5)?;
                d.dev_type = intern(c.text()?);
                return Some(());
            }
            b"partitions" => {
                first(&mut seen, 1 << 6)?;
                let mut names = Vec::new();
                c.members(|c, name| {
                    names.push(intern(std::str::from_utf8(name).ok()?));
                    c.skip(3)
                })?;
                d.partitions = names.into_boxed_slice();
                return Some(());
            }
            _ => return c.skip(2),
        };
        first(&mut seen, 1 << slot)?;
        raw[slot] = c.scalar_text()?;
        Some(())
    })?;
    let read = lookups_of(raw)?;
    d.lookups = read.lookups;
    d.kind = read.kind;
    d.size_bytes = read.size_bytes;
    Some(seen & 0b1_1111 == 0b1_1111)
}

/// `lsm_data`: `None` inside when it says nothing shown (`{}`, the usual).
fn lsm_data(c: &mut Cursor<'_>) -> Option<Option<Box<LsmData>>> {
    let mut lsm = LsmData::default();
    let mut seen = 0u32;
    c.members(|c, key| {
        let (bit, slot) = match key {
            b"transport" => (1, &mut lsm.transport),
            b"rpm" => (2, &mut lsm.rpm),
            b"health" => (4, &mut lsm.health),
            b"ledSupport" => {
                first(&mut seen, 8)?;
                let mut leds = 0u32;
                return c.members(|c, key| {
                    let (bit, slot) = match key {
                        b"IDENTstatus" => (1, &mut lsm.ident_led),
                        b"FAILstatus" => (2, &mut lsm.fault_led),
                        _ => return c.skip(4),
                    };
                    first(&mut leds, bit)?;
                    *slot = Some(intern(c.text()?));
                    Some(())
                });
            }
            // A looked-up key here would matter only where sys_api lacks it,
            // and then the visitor reads the list anyway.
            _ => return c.skip(3),
        };
        first(&mut seen, bit)?;
        *slot = Some(c.shown_scalar()?);
        Some(())
    })?;
    Some((lsm != LsmData::default()).then(|| Box::new(lsm)))
}

/// What a `sys_api`'s looked-up values make of a device.
#[derive(Clone)]
struct SysRead {
    lookups: Arc<Lookups>,
    kind: DeviceType,
    size_bytes: Option<f64>,
}

thread_local! {
    /// The looked-up values read last, by their bytes (each prefixed with
    /// its length), most recent first: the disks of a host, and of most
    /// hosts, share a few models, so most devices need no interning and no
    /// number reading at all.
    static RECENT_SYS: RefCell<Vec<(Vec<u8>, SysRead)>> = const { RefCell::new(Vec::new()) };
}

/// The values given as their JSON text (empty where the key is missing),
/// read as `scalar` reads them; `None` where it refuses one.
fn lookups_of(raw: [&[u8]; 5]) -> Option<SysRead> {
    RECENT_SYS.with(|recent| {
        let mut recent = recent.borrow_mut();
        let same = |key: &[u8]| {
            let mut k = key;
            raw.iter().all(|r| {
                let (len, rest) = k.split_first().map_or((usize::MAX, k), |(l, rest)| (usize::from(*l), rest));
                let hit = len == r.len() && rest.starts_with(r);
                k = rest.get(r.len()..).unwrap_or_default();
                hit
            })
        };
        if let Some(i) = recent.iter().position(|(key, _)| same(key)) {
            recent[..=i].rotate_right(1);
            return Some(recent[0].1.clone());
        }
        let mut found: [Option<Found>; 5] = Default::default();
        let mut read = SysRead { lookups: Arc::default(), kind: DeviceType::default(), size_bytes: None };
        for (slot, r) in raw.iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            let v = Cursor::new(r, 0).scalar()?;
            match (slot, &v) {
                (2, Found::Str(s)) if &**s == "1" => read.kind = DeviceType::Hdd,
                (2, _) => read.kind = DeviceType::Ssd,
                (4, Found::Number(n)) => read.size_bytes = Some(*n),
                _ => {}
            }
            found[slot] = Some(v);
        }
        let [model, vendor, rotational, human_readable_size, size] = found;
        read.lookups = share(Lookups { model, vendor, rotational, human_readable_size, size });
        // Long values are read each time rather than kept (a length must fit a byte).
        if raw.iter().all(|r| r.len() < 256) {
            let mut key = Vec::with_capacity(raw.iter().map(|r| r.len() + 1).sum());
            for r in raw {
                key.push(r.len() as u8);
                key.extend_from_slice(r);
            }
            recent.truncate(7);
            recent.insert(0, (key, read.clone()));
        }
        Some(read)
    })
}

fn lv(c: &mut Cursor<'_>) -> Option<Lv> {
    let mut lv = Lv { affinity: Affinity::Absent, osd_id: None, kind: None, osd_fsid: None, cluster_fsid: None };
    let mut seen = 0u32;
    c.members(|c, key| {
        match key {
            b"osdspec_affinity" => {
                first(&mut seen, 1)?;
                lv.affinity = Affinity::Value(c.scalar()?);
            }
            b"osd_id" => {
                first(&mut seen, 2)?;
                lv.osd_id = match c.scalar()? {
                    Found::Str(s) => Some(s),
                    Found::Number(n) => Some(intern(&n.to_string())),
                    _ => None,
                };
            }
            b"type" => {
                first(&mut seen, 4)?;
                lv.kind = match c.scalar()? {
                    Found::Str(s) => Some(s),
                    _ => None,
                };
            }
            b"osd_fsid" => {
                first(&mut seen, 8)?;
                lv.osd_fsid = tag(c.scalar()?);
            }
            b"cluster_fsid" => {
                first(&mut seen, 16)?;
                lv.cluster_fsid = tag(c.scalar()?);
            }
            _ => c.skip(2)?,
        }
        Some(())
    })?;
    Some(lv)
}

/// A tag's value as the reader keeps it: a string that is not empty.
fn tag(found: Found) -> Option<std::sync::Arc<str>> {
    match found {
        Found::Str(s) if !s.is_empty() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(json: &[u8]) -> Option<Vec<DeviceReport>> {
        let mut c = Cursor::new(json, 0);
        let out = device_list(&mut c)?;
        c.ws();
        (c.i == json.len()).then_some(out)
    }

    const DEVICE: &str = r#"{"path": "/dev/sdb", "sys_api": {"removable": "0", "vendor": "ATA",
        "model": "WDC WD2002FAEX-0", "rotational": "1", "partitions": {"sdb1": {"model": "x", "n": [1, -2.5e3]}},
        "sectors": 0, "size": 2000398934016.0, "human_readable_size": "1.82 TB", "ok": null, "t": true,
        "type": "disk"}, "ceph_device": true, "lsm_data": {"transport": "SAS", "rpm": 7200, "health": "Good",
        "ledSupport": {"IDENTstatus": "Off", "FAILstatus": "Unknown"}}, "available": false, "rejected_reasons": ["b", "a"],
        "device_id": "WDC_X", "lvs": [{"osd_id": "3", "type": "block", "osdspec_affinity": "fast", "name": "n",
        "osd_fsid": "1d0c2e4a", "cluster_fsid": "6f2c"}, {"osd_id": 4, "type": null, "osd_fsid": ""}]}"#;

    #[test]
    fn agrees_with_the_visitor_on_a_full_report() {
        let json = format!("[{DEVICE}, {}]", DEVICE.replace("sdb", "sdc"));
        let fast = scan(json.as_bytes()).expect("the common shape is read");
        let (slow, _) = super::super::ceph_volume::parse_list(json.as_bytes(), false).unwrap();
        assert_eq!(fast, slow);
        assert_eq!(&*fast[0].lvs[1].osd_id.clone().unwrap(), "4");
        assert_eq!(fast[0].lvs[0].osd_fsid.as_deref(), Some("1d0c2e4a"));
        assert_eq!(fast[0].lvs[0].cluster_fsid.as_deref(), Some("6f2c"));
        assert_eq!(fast[0].lvs[1].osd_fsid, None, "an empty tag is none");
        assert_eq!(&*fast[0].rejected_reasons[0], "a");
    }

    #[test]
    fn values_read_before_are_reused_only_when_every_byte_is_the_same() {
        let variants = [
            DEVICE.to_string(),
            DEVICE.replace("WDC WD2002FAEX-0", "WDC WD2002FAEX-1"),
            DEVICE.to_string(),
            DEVICE.replace("2000398934016.0", "2000398934017.0"),
            DEVICE.replace(r#""rotational": "1""#, r#""rotational": "0""#),
            DEVICE.replace(r#""vendor": "ATA""#, r#""vendor": """#),
            DEVICE.replace(r#""vendor": "ATA""#, r#""vendor": null"#),
            DEVICE.replace("1.82 TB", "1.82 TB "),
        ];
        let json = format!("[{}]", variants.join(", "));
        let fast = scan(json.as_bytes()).expect("the common shape is read");
        let (slow, _) = super::super::ceph_volume::parse_list(json.as_bytes(), false).unwrap();
        assert_eq!(fast, slow);
        for (i, d) in fast.iter().enumerate() {
            let same_as_first = *d.lookups == *fast[0].lookups && d.kind == fast[0].kind;
            assert_eq!(same_as_first && d.size_bytes == fast[0].size_bytes, i == 0 || i == 2, "variant {i}");
        }
        assert_eq!(fast[4].kind, DeviceType::Ssd);
        assert_eq!(fast[3].size_bytes, Some(2000398934017.0));
    }

    #[test]
    fn unsure_where_the_visitor_must_decide() {
        let unsure = [
            DEVICE.replace(r#""model": "WDC WD2002FAEX-0","#, ""), // sys_api lacks a key
            DEVICE.replace(r#""available": false"#, r#""available": 0"#),
            DEVICE.replace("WDC_X", r"WDC\u005fX"),
            DEVICE.replace("WDC_X", "WDC_\u{e9}"),
            DEVICE.replace(r#""path": "/dev/sdb","#, r#""path": "/dev/sdb", "path": "/dev/sdc","#),
            DEVICE.replace(r#""size": 2000398934016.0"#, r#""size": -0"#),
            DEVICE.replace(r#""size": 2000398934016.0"#, r#""size": 1e999"#),
            DEVICE.replace(r#""lvs": ["#, r#""lvs": ["x", "#),
        ];
        for json in unsure {
            assert!(scan(format!("[{json}]").as_bytes()).is_none(), "{json}");
        }
    }

    #[test]
    fn word_tests_agree_with_byte_tests() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        for start in 0..bytes.len() - 8 {
            for rot in 0..8 {
                let mut chunk: [u8; 8] = bytes[start..start + 8].try_into().unwrap();
                chunk.rotate_left(rot);
                chunk[rot] = b'a'; // a plain byte somewhere among them
                let w = u64::from_le_bytes(chunk);
                let first_other = chunk.iter().position(|&c| !PLAIN[usize::from(c)]);
                let stop = not_plain(w);
                assert_eq!((stop != 0).then(|| (stop.trailing_zeros() / 8) as usize), first_other, "{chunk:?}");
                for c in [b' ', b'\n', chunk[0]] {
                    let exact = chunk.iter().enumerate().filter(|(_, &b)| b == c).map(|(i, _)| 0x80u64 << (8 * i));
                    assert_eq!(byte_is(w, c), exact.sum::<u64>(), "{chunk:?} {c}");
                }
            }
        }
        let mut c = Cursor::new(b"  \n\t  \r\n          x", 0);
        c.ws();
        assert_eq!(c.b[c.i], b'x');
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for bad in [
            r#""sectors": 0,"#.replace('0', "01"),
            r#""sectors": 0,"#.replace('0', "1."),
            r#""sectors": 0,"#.replace('0', "tru"),
            r#""sectors": 0,"#.replace('0', "[1,]"),
            r#""sectors": 0,"#.replace('0', "{\"a\" 1}"),
            r#""sectors": 0,"#.replace('0', "\"a\tb\""),
            r#""sectors": 0,"#.replace('0', "1e400"),
            r#""sectors": 0,"#.replace('0', &"9".repeat(400)),
        ] {
            let json = format!("[{}]", DEVICE.replace(r#""sectors": 0,"#, &bad));
            assert!(serde_json::from_str::<serde_json::Value>(&json).is_err(), "{bad}");
            assert!(scan(json.as_bytes()).is_none(), "{bad}");
        }
    }

    use proptest::prelude::*;

    /// Any small JSON value, with the keys that matter among its keys.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(serde_json::Value::from),
            "[a-z0-9./ ]{0,8}".prop_map(serde_json::Value::from),
            Just(serde_json::Value::from("1")),
            Just(serde_json::Value::from("caf\u{e9}")),
        ];
        let keys = prop::sample::select(
            &[
                "model",
                "vendor",
                "size",
                "rotational",
                "human_readable_size",
                "osdspec_affinity",
                "osd_id",
                "type",
                "osd_fsid",
                "cluster_fsid",
                "path",
                "IDENTstatus",
                "transport",
                "x",
            ][..],
        );
        leaf.prop_recursive(2, 12, 3, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(serde_json::Value::from),
                prop::collection::vec((keys.clone(), inner), 0..3).prop_map(|kv| serde_json::Value::Object(
                    kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
            ]
        })
    }

    /// A generated device report with up to three changes: a top-level
    /// field, a sys_api key or a key of an LV set to any value, or removed.
    fn changed_device() -> impl Strategy<Value = serde_json::Value> {
        let place = prop::sample::select(&["", "sys_api", "lv", "lsm"][..]);
        let key = prop::sample::select(
            &[
                "path",
                "available",
                "ceph_device",
                "rejected_reasons",
                "device_id",
                "sys_api",
                "lvs",
                "lsm_data",
                "model",
                "vendor",
                "size",
                "rotational",
                "human_readable_size",
                "osd_id",
                "type",
                "osdspec_affinity",
                "osd_fsid",
                "cluster_fsid",
                "partitions",
                "type",
                "ceph_device_lvm",
                "being_replaced",
                "transport",
                "rpm",
                "health",
                "ledSupport",
            ][..],
        );
        prop::collection::vec((place, key, prop::option::of(any_json())), 0..3).prop_map(|changes| {
            let mut d: serde_json::Value = serde_json::from_str(DEVICE).unwrap();
            for (place, key, value) in changes {
                let target = match place {
                    "sys_api" => d.get_mut("sys_api"),
                    "lv" => d.get_mut("lvs").and_then(|l| l.get_mut(0)),
                    "lsm" => d.get_mut("lsm_data"),
                    _ => Some(&mut d),
                };
                if let Some(map) = target.and_then(|t| t.as_object_mut()) {
                    match value {
                        Some(v) => drop(map.insert(key.to_string(), v)),
                        None => drop(map.remove(key)),
                    }
                }
            }
            d
        })
    }

    proptest! {
        #[test]
        fn where_sure_it_agrees_with_the_visitor(
            devices in prop::collection::vec(changed_device(), 1..4),
            pretty in any::<bool>(),
            damage in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..2),
        ) {
            let list = serde_json::Value::from(devices);
            let mut bytes = if pretty { serde_json::to_vec_pretty(&list) } else { serde_json::to_vec(&list) }.unwrap();
            for (at, b) in damage {
                let i = at.index(bytes.len());
                if b % 2 == 0 { bytes[i] = b } else { bytes.remove(i); }
            }
            if let Some(fast) = scan(&bytes) {
                let slow = super::super::ceph_volume::parse_list(&bytes, false);
                prop_assert_eq!(Some(fast), slow.ok().map(|(d, _)| d));
            }
        }
    }
}
