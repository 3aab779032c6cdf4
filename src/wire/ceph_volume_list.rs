//! What `ceph-volume raw list --format json` and `ceph-volume lvm list
//! --format json` print, read into `ListedOsd`s.
//!
//! `raw list`: a map from OSD uuid to what `ceph-bluestore-tool show-label`
//! says of each device: the main device carries `osd_id`, `ceph_fsid` and
//! `device`; a separate DB or WAL device adds `device_db` / `device_wal`.
//! 16.2 and 18.2 merge the labels of one OSD into its entry; 20.2 keeps only
//! the label listed last (`result[osd_uuid] = ...`), so a batched listing
//! of an OSD with its DB elsewhere gives its main entry or its DB entry,
//! never both, and its main label may name `db_device_uuid` /
//! `wal_device_uuid`. The entries are therefore read one by one and merged
//! here, by OSD uuid, whichever release listed them.
//! `lvm list`: a map from OSD id to its logical volumes, each with `type`
//! (`block`, `db`, `wal`), its physical `devices` and the `ceph.*` tags
//! ceph-volume wrote (`ceph.osd_fsid`, `ceph.cluster_fsid`, ...); the same
//! in 16.2, 18.2 and 20.2.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::wire::agent::{ListedOsd, OsdKind};

/// One entry of `raw list`: what the labels of one OSD listed together say.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RawEntry {
    pub osd_uuid: String,
    pub osd_id: Option<u32>,
    pub ceph_fsid: Option<String>,
    pub device: Option<String>,
    pub device_db: Option<String>,
    pub device_wal: Option<String>,
    /// 20.2: the main label names its DB and WAL devices by uuid.
    pub db_device_uuid: Option<String>,
    pub wal_device_uuid: Option<String>,
}

impl RawEntry {
    /// The devices whose labels this entry shows.
    pub fn devices(&self) -> impl Iterator<Item = &str> {
        [&self.device, &self.device_db, &self.device_wal].into_iter().flatten().map(String::as_str)
    }
}

/// The entries of one `raw list` answer, in the order of their uuids.
pub fn read_raw_entries(json: &[u8]) -> Result<Vec<RawEntry>, serde_json::Error> {
    let map: BTreeMap<String, RawEntry> = serde_json::from_slice(json)?;
    Ok(map.into_values().collect())
}

/// The OSDs in `raw list` entries from one or more answers: the entries of
/// one OSD merged (the first value of each field wins), and an OSD without
/// its main device left out (a DB label whose OSD's main device is not
/// among the devices listed is not an OSD here).
pub fn merge_raw(entries: impl IntoIterator<Item = RawEntry>) -> Vec<ListedOsd> {
    let mut by_uuid: BTreeMap<String, RawEntry> = BTreeMap::new();
    for e in entries {
        match by_uuid.get_mut(&e.osd_uuid) {
            None => {
                by_uuid.insert(e.osd_uuid.clone(), e);
            }
            Some(m) => {
                let fill = |mine: &mut Option<String>, theirs: Option<String>| {
                    if mine.is_none() {
                        *mine = theirs;
                    }
                };
                m.osd_id = m.osd_id.or(e.osd_id);
                fill(&mut m.ceph_fsid, e.ceph_fsid);
                fill(&mut m.device, e.device);
                fill(&mut m.device_db, e.device_db);
                fill(&mut m.device_wal, e.device_wal);
                fill(&mut m.db_device_uuid, e.db_device_uuid);
                fill(&mut m.wal_device_uuid, e.wal_device_uuid);
            }
        }
    }
    let mut out: Vec<ListedOsd> = by_uuid
        .into_values()
        .filter_map(|e| {
            Some(ListedOsd {
                osd_id: e.osd_id?,
                osd_fsid: e.osd_uuid,
                cluster_fsid: e.ceph_fsid?,
                kind: OsdKind::Raw,
                device: e.device?,
                db_device: e.device_db,
                wal_device: e.device_wal,
                osdspec_affinity: None,
            })
        })
        .collect();
    out.sort_by_key(|o| o.osd_id);
    out
}

/// `raw list`, one answer.
pub fn parse_raw_list(json: &[u8]) -> Result<Vec<ListedOsd>, serde_json::Error> {
    Ok(merge_raw(read_raw_entries(json)?))
}

#[derive(Debug, Deserialize)]
struct LvmEntry {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    devices: Vec<String>,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    tags: BTreeMap<String, Value>,
}

impl LvmEntry {
    fn tag(&self, name: &str) -> Option<String> {
        match self.tags.get(name)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        }
    }

    /// The physical device: the PV under the LV, or the partition a
    /// non-LV db/wal entry names as its `path`.
    fn device(&self) -> Option<String> {
        self.devices.first().cloned().or_else(|| self.path.clone())
    }
}

/// `lvm list`. Each OSD's `block` LV carries the ids; its `db` and `wal`
/// entries (LVs or partitions) give the other devices.
pub fn parse_lvm_list(json: &[u8]) -> Result<Vec<ListedOsd>, serde_json::Error> {
    let map: BTreeMap<String, Vec<LvmEntry>> = serde_json::from_slice(json)?;
    let mut out = Vec::new();
    for (id, entries) in map {
        let Ok(osd_id) = id.parse::<u32>() else { continue };
        let Some(block) = entries.iter().find(|e| e.kind == "block") else { continue };
        let (Some(osd_fsid), Some(cluster_fsid), Some(device)) =
            (block.tag("ceph.osd_fsid"), block.tag("ceph.cluster_fsid"), block.device())
        else {
            continue;
        };
        let other = |kind: &str| entries.iter().find(|e| e.kind == kind).and_then(LvmEntry::device);
        out.push(ListedOsd {
            osd_id,
            osd_fsid,
            cluster_fsid,
            kind: OsdKind::Lvm,
            device,
            db_device: other("db"),
            wal_device: other("wal"),
            osdspec_affinity: block.tag("ceph.osdspec_affinity"),
        });
    }
    out.sort_by_key(|o| o.osd_id);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ceph-volume raw list --format json` on the ceph-volume sandbox (16.2.15): two OSDs,
    /// one with its DB on another device.
    const RAW: &str = r#"{
        "5b3e1b0a-5f1c-4c1e-9d53-6f3e2a9e3c11": {
            "ceph_fsid": "1f2c0d6e-0000-4000-8000-000000000001",
            "device": "/dev/loop6",
            "osd_id": 6,
            "osd_uuid": "5b3e1b0a-5f1c-4c1e-9d53-6f3e2a9e3c11",
            "type": "bluestore"
        },
        "9a8b7c6d-1111-4222-8333-444455556666": {
            "ceph_fsid": "1f2c0d6e-0000-4000-8000-000000000001",
            "device": "/dev/loop2",
            "device_db": "/dev/loop9",
            "osd_id": 2,
            "osd_uuid": "9a8b7c6d-1111-4222-8333-444455556666",
            "type": "bluestore"
        },
        "0000aaaa-bbbb-4ccc-8ddd-eeeeffff0000": {
            "device_db": "/dev/loop10",
            "osd_uuid": "0000aaaa-bbbb-4ccc-8ddd-eeeeffff0000"
        }
    }"#;

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/ceph_volume/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// osd.2 with its DB on a second device, made by `ceph-osd --mkfs` of
    /// each release (`testbed/ceph-sandbox/record-formats.sh`): main
    /// /dev/loop10, DB /dev/loop11, and a 2 KiB /dev/loop12.
    #[test]
    fn raw_list_of_reef_18_2_7_merges_the_db_label_into_its_osd() {
        for name in ["raw_list_reef_18.2.7_main_db.json", "raw_list_reef_18.2.7_db_main.json"] {
            let osds = parse_raw_list(&fixture(name)).unwrap();
            assert_eq!(osds.len(), 1, "{name}");
            assert_eq!(
                (osds[0].osd_id, osds[0].device.as_str(), osds[0].db_device.as_deref()),
                (2, "/dev/loop10", Some("/dev/loop11")),
                "{name}"
            );
        }
        // 18.2 still reads each device with its own show-label: a device that
        // aborts it costs only itself.
        assert_eq!(parse_raw_list(&fixture("raw_list_reef_18.2.7_tiny_main_db.json")).unwrap().len(), 1);
    }

    #[test]
    fn raw_list_of_tentacle_20_2_4_keeps_one_label_per_osd_merged_here() {
        // Listed together, the DB label listed last replaces the OSD's entry:
        // the OSD is gone from the answer...
        let main_db = read_raw_entries(&fixture("raw_list_tentacle_20.2.4_main_db.json")).unwrap();
        assert_eq!(main_db.iter().flat_map(RawEntry::devices).collect::<Vec<_>>(), ["/dev/loop11"]);
        assert_eq!(merge_raw(main_db.clone()), vec![], "a DB label alone is no OSD");
        // ...or, in the other order, its DB is.
        let db_main = parse_raw_list(&fixture("raw_list_tentacle_20.2.4_db_main.json")).unwrap();
        assert_eq!((db_main[0].device.as_str(), db_main[0].db_device.as_deref()), ("/dev/loop10", None));
        // Listed one device at a time, the entries merge into the whole OSD.
        let one_by_one = [fixture("raw_list_tentacle_20.2.4_db.json"), fixture("raw_list_tentacle_20.2.4_main.json")]
            .into_iter()
            .flat_map(|j| read_raw_entries(&j).unwrap());
        let osds = merge_raw(one_by_one);
        assert_eq!(
            (osds.len(), osds[0].osd_id, osds[0].device.as_str(), osds[0].db_device.as_deref()),
            (1, 2, "/dev/loop10", Some("/dev/loop11"))
        );
        // One device that aborts ceph-bluestore-tool empties the batched answer.
        assert_eq!(read_raw_entries(&fixture("raw_list_tentacle_20.2.4_tiny_main_db.json")).unwrap(), vec![]);
    }

    /// 20.2's main label may name its DB and WAL by uuid (a key of 20.2's
    /// `bluestore_info`; `ceph-osd --mkfs` here wrote none): read, and kept
    /// through a merge.
    #[test]
    fn raw_list_db_and_wal_uuids_built_from_ceph_20_2_code() {
        let json =
            br#"{"u": {"osd_uuid": "u", "osd_id": 4, "ceph_fsid": "f", "device": "/dev/sdb", "type": "bluestore",
            "db_device_uuid": "d-uuid", "wal_device_uuid": "w-uuid"}}"#;
        let e = read_raw_entries(json).unwrap();
        assert_eq!((e[0].db_device_uuid.as_deref(), e[0].wal_device_uuid.as_deref()), (Some("d-uuid"), Some("w-uuid")));
        let db = RawEntry { osd_uuid: "u".into(), device_db: Some("/dev/nvme0n1".into()), ..RawEntry::default() };
        let osds = merge_raw(e.into_iter().chain([db]));
        assert_eq!((osds[0].device.as_str(), osds[0].db_device.as_deref()), ("/dev/sdb", Some("/dev/nvme0n1")));
    }

    #[test]
    fn raw_list_gives_each_osd_with_its_devices() {
        let osds = parse_raw_list(RAW.as_bytes()).unwrap();
        assert_eq!(osds.len(), 2, "a lone DB label is not an OSD: {osds:?}");
        assert_eq!(
            (osds[0].osd_id, osds[0].device.as_str(), osds[0].db_device.as_deref()),
            (2, "/dev/loop2", Some("/dev/loop9"))
        );
        assert_eq!(osds[1].osd_fsid, "5b3e1b0a-5f1c-4c1e-9d53-6f3e2a9e3c11");
        assert_eq!(
            (osds[1].kind, osds[1].cluster_fsid.as_str()),
            (OsdKind::Raw, "1f2c0d6e-0000-4000-8000-000000000001")
        );
        assert_eq!(parse_raw_list(b"{}").unwrap(), vec![]);
        assert!(parse_raw_list(b"[]").is_err());
    }

    /// The shape `ceph-volume lvm list --format json` prints in 16.2 (`Volume.as_dict` plus
    /// `devices`; a non-LV DB partition is reported with `path` and a PARTUUID tag). It cannot
    /// run on this machine (no device-mapper): the shape is taken from ceph-volume's
    /// `devices/lvm/listing.py` and `api/lvm.py`.
    const LVM: &str = r#"{
        "3": [
            {"devices": ["/dev/sdb"], "lv_name": "osd-block-3c2f", "lv_path": "/dev/ceph-a1/osd-block-3c2f",
             "lv_size": "1.82t", "lv_tags": "ceph.osd_id=3,...", "lv_uuid": "x", "name": "osd-block-3c2f",
             "path": "/dev/ceph-a1/osd-block-3c2f", "type": "block", "vg_name": "ceph-a1",
             "tags": {"ceph.block_device": "/dev/ceph-a1/osd-block-3c2f", "ceph.cluster_fsid": "fsid-1",
                      "ceph.osd_fsid": "3c2f-uuid", "ceph.osd_id": "3", "ceph.osdspec_affinity": "osd_spec_hdd",
                      "ceph.type": "block", "ceph.db_device": "/dev/ceph-db/osd-db-3"}},
            {"devices": ["/dev/nvme0n1"], "lv_name": "osd-db-3", "lv_path": "/dev/ceph-db/osd-db-3",
             "name": "osd-db-3", "path": "/dev/ceph-db/osd-db-3", "type": "db",
             "tags": {"ceph.osd_id": "3", "ceph.type": "db", "ceph.osd_fsid": "3c2f-uuid"}}
        ],
        "8": [
            {"devices": ["/dev/sdd"], "path": "/dev/ceph-b2/osd-block-88", "type": "block",
             "tags": {"ceph.cluster_fsid": "fsid-1", "ceph.osd_fsid": "88-uuid", "ceph.osd_id": "8",
                      "ceph.osdspec_affinity": "", "ceph.type": "block"}},
            {"path": "/dev/sdq1", "type": "wal", "tags": {"PARTUUID": "p-1"}}
        ]
    }"#;

    #[test]
    fn lvm_list_in_the_shape_of_the_16_2_source_not_run_here_for_lack_of_device_mapper() {
        let osds = parse_lvm_list(LVM.as_bytes()).unwrap();
        assert_eq!(osds.len(), 2);
        let o3 = &osds[0];
        assert_eq!((o3.osd_id, o3.kind, o3.device.as_str()), (3, OsdKind::Lvm, "/dev/sdb"));
        assert_eq!(
            (o3.db_device.as_deref(), o3.osdspec_affinity.as_deref()),
            (Some("/dev/nvme0n1"), Some("osd_spec_hdd"))
        );
        assert_eq!((o3.osd_fsid.as_str(), o3.cluster_fsid.as_str()), ("3c2f-uuid", "fsid-1"));
        let o8 = &osds[1];
        assert_eq!((o8.wal_device.as_deref(), o8.osdspec_affinity.as_deref()), (Some("/dev/sdq1"), None));
    }
}
