//! Identity right before a destructive act: which OSD (by its uuid), which
//! disk (by its serial/WWN id), and what is on it (the OSD fsids of its LVs
//! and of its BlueStore label). An id is given to a new OSD once the old
//! one is purged, and a path to whatever disk is pushed into its bay; a
//! uuid and a serial are never given again. Pure: the removal and swap
//! state machines ask `osd_at_id` before every act on an OSD; the agent and
//! the simulator ask `check_zap` of what a zap is about to destroy; the
//! device replacement, the removals and the swaps ask `disk_at_path`.

use super::device_id::same_disk;
use super::inventory::Lv;

/// What the OSD map shows at an id, against the uuid an operation recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OsdAtId {
    /// The OSD recorded (or one whose uuid the map cleared: a destroyed OSD).
    Recorded,
    /// No OSD has the id.
    Gone,
    /// Another OSD took the id; its uuid.
    Other { uuid: String },
    /// A live OSD without a uuid in the map (made by `osd create`, not
    /// booted yet): it cannot be told from the one recorded.
    CannotTell,
}

/// The OSD at an id, as the OSD map shows it (`exists`, `destroyed`, its
/// `uuid`), against the one `recorded`. `osd destroy` clears an OSD's uuid
/// (Ceph's `prepare_command_osd_destroy`), so a destroyed id is taken for
/// the recorded OSD; `osd new` gives it a uuid again.
pub fn osd_at_id(recorded: &str, exists: bool, destroyed: bool, uuid: Option<&str>) -> OsdAtId {
    match uuid {
        _ if !exists => OsdAtId::Gone,
        Some(u) if same_uuid(u, recorded) => OsdAtId::Recorded,
        Some(u) => OsdAtId::Other { uuid: u.to_string() },
        None if destroyed => OsdAtId::Recorded,
        None => OsdAtId::CannotTell,
    }
}

/// Uuids as Ceph and ceph-volume write them, compared without regard to case.
pub fn same_uuid(a: &str, b: &str) -> bool {
    !a.trim().is_empty() && a.trim().eq_ignore_ascii_case(b.trim())
}

/// The disk at a path now, against the one an operation recorded there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskAtPath {
    /// The same disk (its id names the recorded one).
    Recorded,
    /// Another disk: both have ids and they name different disks.
    Another { found: String },
    /// One of the two has no id (loop devices, some RAID controllers): the
    /// id cannot tell; what is on the disk may.
    CannotTell,
    /// No disk at the path.
    Empty,
}

/// The disk at a path (its id now, `None`: no disk there) against the id
/// recorded for it. The one rule for "a new disk is in the slot": the
/// device replacement's slot, the removal's pulled disks and the in-place
/// swap's bay all go by it.
pub fn disk_at_path(recorded_id: &str, now: Option<&str>) -> DiskAtPath {
    let Some(now) = now else { return DiskAtPath::Empty };
    if recorded_id.trim().is_empty() || now.trim().is_empty() {
        return DiskAtPath::CannotTell;
    }
    if same_disk(recorded_id, now) {
        DiskAtPath::Recorded
    } else {
        DiskAtPath::Another { found: now.to_string() }
    }
}

/// What a zap may destroy, as the request names it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ZapExpect {
    /// The disk's serial/WWN id as recorded; empty where it had none.
    pub device_id: String,
    /// The OSDs (their fsids) whose volumes and labels may go; `None`: an
    /// operator's zap of the disk, whatever OSD's it holds (the daemon
    /// checked that no OSD of the cluster uses it).
    pub osd_fsids: Option<Vec<String>>,
    /// The cluster those OSDs belong to, when known.
    pub cluster_fsid: Option<String>,
}

/// An LV on the disk: its OSD fsid and cluster fsid tags (none: an LV that
/// is no OSD's).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LvSeen {
    /// Its `type` tag (`block`, `db`, `wal`), "" where it has none.
    pub kind: String,
    pub osd_id: Option<String>,
    pub osd_fsid: Option<String>,
    pub cluster_fsid: Option<String>,
}

impl From<&Lv> for LvSeen {
    fn from(lv: &Lv) -> LvSeen {
        LvSeen {
            kind: lv.kind.as_deref().unwrap_or_default().to_string(),
            osd_id: lv.osd_id.as_deref().map(str::to_string),
            osd_fsid: lv.osd_fsid.as_deref().map(str::to_string),
            cluster_fsid: lv.cluster_fsid.as_deref().map(str::to_string),
        }
    }
}

/// A BlueStore label on the disk (at its start, or a copy further in).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSeen {
    pub osd_uuid: String,
    pub whoami: Option<u32>,
    pub cluster_fsid: Option<String>,
}

/// What is on the disk at the path now, as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiskSeen {
    pub device_id: String,
    pub lvs: Vec<LvSeen>,
    pub label: Option<LabelSeen>,
    /// Anything else found on it (a filesystem, a partition table), in words.
    pub other: Vec<String>,
}

/// Why a zap is refused: the disk, or what is on it, is not what it named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZapMismatch {
    #[error("the disk there is {}, not {expected:?}", shown_id(found))]
    OtherDisk { expected: String, found: String },
    #[error("it holds {} of OSD fsid {}, which the zap does not name", lv_words(kind, osd_id), shown(osd_fsid))]
    OtherOsdLv { kind: String, osd_id: Option<String>, osd_fsid: Option<String> },
    #[error("it holds {} of another cluster ({found}, not {expected})", lv_words(kind, osd_id))]
    OtherClusterLv { kind: String, osd_id: Option<String>, found: String, expected: String },
    #[error("it carries the BlueStore label of{} OSD fsid {osd_uuid}, which the zap does not name", of_whoami(whoami))]
    OtherOsdLabel { osd_uuid: String, whoami: Option<u32> },
    #[error(
        "it carries the BlueStore label of{} an OSD of another cluster ({found}, not {expected})",
        of_whoami(whoami)
    )]
    OtherClusterLabel { whoami: Option<u32>, found: String, expected: String },
    #[error(
        "it has no serial to tell it by and nothing on it is of the OSDs named: it holds {}",
        found.join(", ")
    )]
    Unidentified { found: Vec<String> },
}

fn shown_id(id: &str) -> String {
    if id.trim().is_empty() {
        "a disk without a serial".into()
    } else {
        format!("{id:?}")
    }
}

fn shown(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(none: not an OSD's)")
}

/// `the block LV of osd.4`, `an LV`.
fn lv_words(kind: &str, osd_id: &Option<String>) -> String {
    let what = if kind.is_empty() { "an LV".to_string() } else { format!("the {kind} LV") };
    match osd_id {
        Some(id) => format!("{what} of osd.{id}"),
        None => what,
    }
}

fn of_whoami(id: &Option<u32>) -> String {
    id.map(|i| format!(" osd.{i},")).unwrap_or_default()
}

/// Whether the zap `expect` may go ahead on the disk `seen`: the disk named
/// (by its id, where it was recorded with one); every LV and the label of
/// an OSD it names and of its cluster; and, for a disk without an id to
/// tell it by, something of those OSDs on it or nothing at all.
pub fn check_zap(expect: &ZapExpect, seen: &DiskSeen) -> Result<(), ZapMismatch> {
    let recorded = expect.device_id.trim();
    if !recorded.is_empty() && !same_disk(recorded, &seen.device_id) {
        return Err(ZapMismatch::OtherDisk { expected: recorded.to_string(), found: seen.device_id.clone() });
    }
    let Some(fsids) = &expect.osd_fsids else { return Ok(()) };
    let named = |f: &Option<String>| f.as_deref().is_some_and(|f| fsids.iter().any(|n| same_uuid(n, f)));
    let other_cluster = |c: &Option<String>| match (&expect.cluster_fsid, c) {
        (Some(want), Some(found)) if !same_uuid(want, found) => Some((found.clone(), want.clone())),
        _ => None,
    };
    for lv in &seen.lvs {
        if let Some((found, expected)) = other_cluster(&lv.cluster_fsid) {
            let (kind, osd_id) = (lv.kind.clone(), lv.osd_id.clone());
            return Err(ZapMismatch::OtherClusterLv { kind, osd_id, found, expected });
        }
        if !named(&lv.osd_fsid) {
            let (kind, osd_id, osd_fsid) = (lv.kind.clone(), lv.osd_id.clone(), lv.osd_fsid.clone());
            return Err(ZapMismatch::OtherOsdLv { kind, osd_id, osd_fsid });
        }
    }
    if let Some(label) = &seen.label {
        if let Some((found, expected)) = other_cluster(&label.cluster_fsid) {
            return Err(ZapMismatch::OtherClusterLabel { whoami: label.whoami, found, expected });
        }
        if !named(&Some(label.osd_uuid.clone())) {
            return Err(ZapMismatch::OtherOsdLabel { osd_uuid: label.osd_uuid.clone(), whoami: label.whoami });
        }
    }
    let ours = !seen.lvs.is_empty() || seen.label.is_some();
    if recorded.is_empty() && !ours && !seen.other.is_empty() {
        return Err(ZapMismatch::Unidentified { found: seen.other.clone() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55";
    const NEW: &str = "9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a";
    const CLUSTER: &str = "75757249-f864-4e02-9720-f37e52df334e";

    #[test]
    fn the_osd_at_an_id_by_its_uuid() {
        let table = [
            (true, false, Some(OLD), OsdAtId::Recorded),
            (true, false, Some("4A6D5B0E-5B8E-4D0C-9A57-0D3C4E1F6A55"), OsdAtId::Recorded),
            (true, false, Some(NEW), OsdAtId::Other { uuid: NEW.into() }),
            (false, false, None, OsdAtId::Gone),
            (false, false, Some(NEW), OsdAtId::Gone),
            (true, true, None, OsdAtId::Recorded),
            (true, true, Some(NEW), OsdAtId::Other { uuid: NEW.into() }),
            (true, false, None, OsdAtId::CannotTell),
        ];
        for (exists, destroyed, uuid, want) in table {
            assert_eq!(osd_at_id(OLD, exists, destroyed, uuid), want, "{exists} {destroyed} {uuid:?}");
        }
        assert!(!same_uuid("", ""), "an empty uuid names no OSD");
    }

    #[test]
    fn the_disk_at_a_path_by_its_id() {
        assert_eq!(disk_at_path("WDC_S1", Some("WDC_S1")), DiskAtPath::Recorded);
        assert_eq!(disk_at_path("WDC S1", Some("WDC_S1")), DiskAtPath::Recorded, "16.2 and 18.2 spellings");
        assert_eq!(disk_at_path("WDC_S1", Some("WDC_S2")), DiskAtPath::Another { found: "WDC_S2".into() });
        assert_eq!(disk_at_path("", Some("WDC_S2")), DiskAtPath::CannotTell);
        assert_eq!(disk_at_path("WDC_S1", Some(" ")), DiskAtPath::CannotTell);
        assert_eq!(disk_at_path("WDC_S1", None), DiskAtPath::Empty);
    }

    fn expect(device_id: &str, fsids: &[&str]) -> ZapExpect {
        ZapExpect {
            device_id: device_id.into(),
            osd_fsids: Some(fsids.iter().map(|f| f.to_string()).collect()),
            cluster_fsid: Some(CLUSTER.into()),
        }
    }

    fn lv(fsid: Option<&str>, cluster: &str) -> LvSeen {
        LvSeen {
            kind: "block".into(),
            osd_id: Some("4".into()),
            osd_fsid: fsid.map(str::to_string),
            cluster_fsid: Some(cluster.into()),
        }
    }

    fn label(uuid: &str, cluster: &str) -> Option<LabelSeen> {
        Some(LabelSeen { osd_uuid: uuid.into(), whoami: Some(4), cluster_fsid: Some(cluster.into()) })
    }

    #[test]
    fn a_zap_goes_ahead_only_on_the_disk_it_named_with_only_its_osds_on_it() {
        let ours_lvm = DiskSeen { device_id: "WDC_S1".into(), lvs: vec![lv(Some(OLD), CLUSTER)], ..Default::default() };
        assert_eq!(check_zap(&expect("WDC_S1", &[OLD]), &ours_lvm), Ok(()));
        let ours_raw = DiskSeen { label: label(OLD, CLUSTER), ..Default::default() };
        assert_eq!(check_zap(&expect("", &[OLD]), &ours_raw), Ok(()), "no serial: its label tells it");
        let blank = DiskSeen::default();
        assert_eq!(check_zap(&expect("", &[OLD]), &blank), Ok(()), "nothing on it to lose");
        let cases = [
            (
                expect("WDC_S1", &[OLD]),
                DiskSeen { device_id: "WDC_S2".into(), ..ours_lvm.clone() },
                "the disk there is \"WDC_S2\", not \"WDC_S1\"",
            ),
            (
                expect("WDC_S1", &[OLD]),
                DiskSeen { device_id: String::new(), ..ours_lvm.clone() },
                "the disk there is a disk without a serial, not \"WDC_S1\"",
            ),
            (
                expect("WDC_S1", &[OLD]),
                DiskSeen { lvs: vec![lv(Some(OLD), CLUSTER), lv(Some(NEW), CLUSTER)], ..ours_lvm.clone() },
                "it holds the block LV of osd.4 of OSD fsid 9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a, which the zap \
                 does not name",
            ),
            (
                expect("", &[OLD]),
                DiskSeen { lvs: vec![lv(Some(OLD), "0000-other")], ..Default::default() },
                "it holds the block LV of osd.4 of another cluster (0000-other, not \
                 75757249-f864-4e02-9720-f37e52df334e)",
            ),
            (
                expect("", &[OLD]),
                DiskSeen { lvs: vec![lv(None, CLUSTER)], ..Default::default() },
                "it holds the block LV of osd.4 of OSD fsid (none: not an OSD's), which the zap does not name",
            ),
            (
                expect("", &[OLD]),
                DiskSeen { label: label(NEW, CLUSTER), ..Default::default() },
                "it carries the BlueStore label of osd.4, OSD fsid 9f1e2d3c-0000-4b8e-9c3a-7e5f1d2c3b4a, which the \
                 zap does not name",
            ),
            (
                expect("", &[OLD]),
                DiskSeen { label: label(OLD, "0000-other"), ..Default::default() },
                "it carries the BlueStore label of osd.4, an OSD of another cluster (0000-other, not \
                 75757249-f864-4e02-9720-f37e52df334e)",
            ),
            (
                expect("", &[OLD]),
                DiskSeen { other: vec!["xfs".into()], ..Default::default() },
                "it has no serial to tell it by and nothing on it is of the OSDs named: it holds xfs",
            ),
        ];
        for (want, seen, why) in cases {
            assert_eq!(check_zap(&want, &seen).map_err(|e| e.to_string()), Err(why.to_string()), "{seen:?}");
        }
        // With a serial that names it, the disk is the one recorded whatever else it holds.
        let named = DiskSeen { device_id: "WDC_S1".into(), other: vec!["xfs".into()], ..Default::default() };
        assert_eq!(check_zap(&expect("WDC_S1", &[OLD]), &named), Ok(()));
        // An operator's zap names the disk only.
        let any = ZapExpect { device_id: "WDC_S1".into(), osd_fsids: None, cluster_fsid: None };
        let theirs = DiskSeen { device_id: "WDC_S1".into(), label: label(NEW, "x"), ..Default::default() };
        assert_eq!(check_zap(&any, &theirs), Ok(()));
        assert!(check_zap(&any, &DiskSeen { device_id: "WDC_S9".into(), ..theirs }).is_err());
    }
}
