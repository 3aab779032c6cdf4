//! Which LVs of this host's LVM OSDs a look after boot activates: `lvs`
//! read, the enabled boot units read, and the decision, all without I/O
//! (the looks themselves are in `boot_activation`).

use std::collections::BTreeSet;

/// One LV that ceph-volume's tags give to an OSD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsdLv {
    pub path: String,
    pub active: bool,
    pub osd_id: u32,
    pub osd_fsid: String,
    /// The devices its extents are on (`/dev/sda`), from `lvs -o devices`.
    pub devices: Vec<String>,
}

/// The fields asked of `lvs`, in the order `parse_lvs` reads them.
pub const LVS_ARGS: [&str; 5] = ["--noheadings", "--separator", ";", "-o", "lv_path,lv_active,lv_tags,devices"];

/// `lvs` output (`LVS_ARGS`) to the LVs that belong to an OSD: both
/// `ceph.osd_id` and `ceph.osd_fsid` tags. Other lines are left out.
pub fn parse_lvs(out: &str) -> Vec<OsdLv> {
    out.lines()
        .filter_map(|line| {
            let mut f = line.trim().split(';');
            let (path, active, tags, devices) = (f.next()?, f.next()?, f.next()?, f.next().unwrap_or(""));
            let tag = |name: &str| tags.split(',').find_map(|t| t.strip_prefix(name)?.strip_prefix('='));
            Some(OsdLv {
                path: path.trim().to_string(),
                active: active.trim() == "active",
                osd_id: tag("ceph.osd_id")?.parse().ok()?,
                osd_fsid: tag("ceph.osd_fsid")?.to_string(),
                devices: devices
                    .split(',')
                    .map(|d| d.split('(').next().unwrap_or("").trim().to_string())
                    .filter(|d| !d.is_empty())
                    .collect(),
            })
        })
        .collect()
}

/// The OSDs (id, fsid) whose boot units are enabled, from the names in
/// systemd's `multi-user.target.wants` (`ceph-volume@lvm-3-FSID.service`).
pub fn enabled_osds<'a>(unit_names: impl IntoIterator<Item = &'a str>) -> BTreeSet<(u32, String)> {
    unit_names
        .into_iter()
        .filter_map(|name| {
            let rest = name.strip_prefix("ceph-volume@lvm-")?.strip_suffix(".service")?;
            let (id, fsid) = rest.split_once('-')?;
            Some((id.parse().ok()?, fsid.to_string()))
        })
        .collect()
}

/// The boot unit of an OSD.
pub fn unit_of(lv: &OsdLv) -> String {
    format!("ceph-volume@lvm-{}-{}.service", lv.osd_id, lv.osd_fsid)
}

/// One look's decision: which LVs to activate now, and which inactive ones
/// to remember for the next look. An LV is activated when it was inactive
/// at the previous look too (a VG whose activation is under way is left to
/// LVM), its OSD's boot unit is enabled, and every device it is on is one
/// the agent may touch (`allowed`, when given).
pub fn decide<'a>(
    lvs: &'a [OsdLv],
    enabled: &BTreeSet<(u32, String)>,
    allowed: Option<&BTreeSet<String>>,
    inactive_before: &BTreeSet<String>,
) -> (Vec<&'a OsdLv>, BTreeSet<String>) {
    let eligible = |lv: &&OsdLv| {
        !lv.active
            && enabled.contains(&(lv.osd_id, lv.osd_fsid.clone()))
            && allowed.is_none_or(|a| !lv.devices.is_empty() && lv.devices.iter().all(|d| a.contains(d)))
    };
    let inactive: BTreeSet<String> = lvs.iter().filter(eligible).map(|lv| lv.path.clone()).collect();
    let now = lvs.iter().filter(eligible).filter(|lv| inactive_before.contains(&lv.path)).collect();
    (now, inactive)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Two OSDs' LVs (osd.1 active, osd.2 with a DB LV) and the root LV.
    pub(in crate::agent_server) const LVS: &str = "  /dev/ceph-a/osd-block-f1;active;ceph.block_device=/dev/ceph-a/osd-block-f1,ceph.osd_fsid=f1,ceph.osd_id=1,ceph.type=block;/dev/sda(0)\n  \
                       /dev/ceph-b/osd-block-f2;;ceph.osd_fsid=f2,ceph.osd_id=2,ceph.type=block;/dev/sdb(0)\n  \
                       /dev/ceph-c/osd-db-f2;;ceph.osd_fsid=f2,ceph.osd_id=2,ceph.type=db;/dev/sdc(2559)\n  \
                       /dev/vg0/root;active;;/dev/vda2(0)\n";

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_lvs_tagged_with_an_osd_are_read() {
        let lvs = parse_lvs(LVS);
        assert_eq!(lvs.len(), 3, "{lvs:?}");
        assert_eq!(
            lvs[1],
            OsdLv {
                path: "/dev/ceph-b/osd-block-f2".into(),
                active: false,
                osd_id: 2,
                osd_fsid: "f2".into(),
                devices: vec!["/dev/sdb".into()],
            }
        );
        assert!(lvs[0].active);
        assert_eq!(lvs[2].devices, vec!["/dev/sdc".to_string()]);
    }

    #[test]
    fn enabled_units_name_their_osds() {
        let got = enabled_osds([
            "ceph-volume@lvm-2-f2.service",
            "ceph-volume@lvm-12-aa-bb-cc.service",
            "ceph-osd.target",
            "ceph-volume@raw-3-x.service",
            "ceph-volume@lvm-x-f.service",
        ]);
        assert_eq!(got, [(2, "f2".to_string()), (12, "aa-bb-cc".to_string())].into_iter().collect());
    }

    #[test]
    fn an_inactive_lv_is_activated_on_the_second_look_only() {
        let lvs = parse_lvs(LVS);
        let enabled = enabled_osds(["ceph-volume@lvm-2-f2.service"]);
        let (now, seen) = decide(&lvs, &enabled, None, &BTreeSet::new());
        assert!(now.is_empty(), "an activation may be under way on the first look");
        assert_eq!(seen, set(&["/dev/ceph-b/osd-block-f2", "/dev/ceph-c/osd-db-f2"]));
        let (now, _) = decide(&lvs, &enabled, None, &seen);
        let paths: Vec<&str> = now.iter().map(|lv| lv.path.as_str()).collect();
        assert_eq!(paths, ["/dev/ceph-b/osd-block-f2", "/dev/ceph-c/osd-db-f2"]);
    }

    #[test]
    fn an_osd_whose_unit_is_not_enabled_keeps_its_lvs_as_they_are() {
        let lvs = parse_lvs(LVS);
        let everything = set(&["/dev/ceph-b/osd-block-f2", "/dev/ceph-c/osd-db-f2"]);
        let (now, seen) = decide(&lvs, &enabled_osds(["ceph-volume@lvm-2-other.service"]), None, &everything);
        assert!(now.is_empty() && seen.is_empty(), "another fsid under the same id is another OSD");
    }

    #[test]
    fn an_lv_on_a_device_the_agent_was_not_given_is_left_alone() {
        let lvs = parse_lvs(LVS);
        let enabled = enabled_osds(["ceph-volume@lvm-2-f2.service"]);
        let before = set(&["/dev/ceph-b/osd-block-f2", "/dev/ceph-c/osd-db-f2"]);
        let allowed = set(&["/dev/sdb"]);
        let (now, _) = decide(&lvs, &enabled, Some(&allowed), &before);
        let paths: Vec<&str> = now.iter().map(|lv| lv.path.as_str()).collect();
        assert_eq!(paths, ["/dev/ceph-b/osd-block-f2"]);
    }
}
