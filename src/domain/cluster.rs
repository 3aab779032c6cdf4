//! What the cluster looks like, as values: the OSD map, placement group
//! states, where an OSD's data lives, and the cluster's yes/no answers.
//! The Ceph adapter fills these in; the rules that read them live here.

/// One OSD as the cluster sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdState {
    pub id: u32,
    pub up: bool,
    pub is_in: bool,
    pub destroyed: bool,
    /// `ceph osd add-noout osd.N`: the monitors do not mark it out while it is down.
    pub noout: bool,
    /// CRUSH weight (`osd tree`).
    pub crush_weight: Option<f64>,
    /// From `osd df`; None when not listed.
    pub pgs: Option<i64>,
    pub kb_used: Option<u64>,
    /// The CRUSH host bucket it sits under.
    pub crush_host: Option<String>,
    /// Its CRUSH device class (`hdd`, `ssd`, a spec's `crush_device_class`).
    pub device_class: Option<String>,
    /// Its fsid (`osd dump`'s uuid; the `ceph.osd_fsid` of its LVs).
    pub uuid: Option<String>,
}

/// Everything the removal worker reads each round, in a few commands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterState {
    /// The cluster's fsid.
    pub fsid: String,
    pub osds: Vec<OsdState>,
    /// PG state name -> count (`pg stat`).
    pub pg_states: Vec<(String, i64)>,
}

impl ClusterState {
    pub fn osd(&self, id: u32) -> Option<&OsdState> {
        self.osds.iter().find(|o| o.id == id)
    }

    /// Placement groups whose state makes starting a new drain unwise:
    /// degraded, undersized or backfill-full (`backfill_toofull`).
    pub fn unhealthy_pgs(&self) -> Vec<(String, i64)> {
        self.pg_states
            .iter()
            .filter(|(name, n)| {
                *n > 0 && name.split('+').any(|s| matches!(s, "degraded" | "undersized" | "backfill_toofull"))
            })
            .cloned()
            .collect()
    }

    /// (OSDs, up, in), destroyed OSDs (ids kept for a replacement disk) left out.
    pub fn osd_counts(&self) -> (usize, usize, usize) {
        let (mut n, mut up, mut is_in) = (0, 0, 0);
        for o in self.osds.iter().filter(|o| !o.destroyed) {
            n += 1;
            up += usize::from(o.up);
            is_in += usize::from(o.is_in);
        }
        (n, up, is_in)
    }
}

/// A CRUSH weight as `ceph osd tree` prints it (its `weightf_t`): five
/// decimals, and `0` for nothing (`2.000398934016` is `2.00040`).
pub fn format_weight(w: f64) -> String {
    if w < -0.01 {
        "-".into()
    } else if w < 0.000001 {
        "0".into()
    } else {
        format!("{w:.5}")
    }
}

/// The ids of destroyed OSDs (kept by `osd rm --replace`) by the short name
/// of the CRUSH host they sit under, in id order: what the next OSDs made on
/// that host take (cephadm's OsdIdClaims).
pub fn destroyed_by_host(cluster: &ClusterState) -> std::collections::HashMap<String, Vec<String>> {
    let mut out: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    let mut destroyed: Vec<&OsdState> = cluster.osds.iter().filter(|o| o.destroyed).collect();
    destroyed.sort_by_key(|o| o.id);
    for o in destroyed {
        if let Some(host) = &o.crush_host {
            let short = host.split('.').next().unwrap_or(host).to_string();
            out.entry(short).or_default().push(o.id.to_string());
        }
    }
    out
}

/// Where an OSD's data lives, from `ceph osd metadata`.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdDevices {
    pub hostname: String,
    /// Device nodes, e.g. /dev/sdb, /dev/loop4 (block, then db and wal if separate).
    pub dev_nodes: Vec<String>,
    /// Kernel name -> serial/WWN id, where udev provided them.
    pub device_ids: Vec<(String, String)>,
}

impl OsdDevices {
    /// Whether the metadata's host is `host`; Ceph reports the short name
    /// where osdkeeper may know the host by its full name, or the reverse.
    pub fn is_on(&self, host: &str) -> bool {
        same_host(&self.hostname, host)
    }
}

/// Host names compared as Ceph and operators write them: equal, or equal up
/// to the first dot on both sides.
pub fn same_host(a: &str, b: &str) -> bool {
    a == b || a.split('.').next() == b.split('.').next()
}

/// A yes/no answer from the cluster, with its own words.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub ok: bool,
    pub message: String,
}

impl Verdict {
    pub fn yes() -> Verdict {
        Verdict { ok: true, message: String::new() }
    }

    pub fn no(message: impl Into<String>) -> Verdict {
        Verdict { ok: false, message: message.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_look_like_osd_tree() {
        assert_eq!(format_weight(2.000398934016), "2.00040");
        assert_eq!(format_weight(1.86299), "1.86299");
        assert_eq!(format_weight(0.0), "0");
        assert_eq!(format_weight(13.732219999), "13.73222");
    }

    fn osd(id: u32, up: bool, is_in: bool, destroyed: bool) -> OsdState {
        OsdState {
            id,
            up,
            is_in,
            destroyed,
            noout: false,
            crush_weight: None,
            pgs: None,
            kb_used: None,
            crush_host: None,
            device_class: None,
            uuid: None,
        }
    }

    #[test]
    fn unhealthy_states_are_the_ones_that_block_a_new_drain() {
        let s = ClusterState {
            fsid: String::new(),
            osds: vec![],
            pg_states: vec![
                ("active+clean".into(), 60),
                ("active+undersized+degraded".into(), 3),
                ("active+remapped+backfill_toofull".into(), 1),
                ("active+remapped+backfilling".into(), 2),
                ("active+degraded".into(), 0),
            ],
        };
        let names: Vec<String> = s.unhealthy_pgs().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["active+undersized+degraded", "active+remapped+backfill_toofull"]);
    }

    #[test]
    fn destroyed_osds_are_not_counted() {
        let s = ClusterState {
            fsid: String::new(),
            osds: vec![osd(0, true, true, false), osd(1, false, true, false), osd(2, false, false, true)],
            pg_states: vec![],
        };
        assert_eq!(s.osd_counts(), (2, 1, 2));
    }

    #[test]
    fn destroyed_ids_are_claimed_by_their_host() {
        let mut a = osd(3, false, false, true);
        a.crush_host = Some("f5-422-01.lab".into());
        let mut b = osd(1, false, false, true);
        b.crush_host = Some("f5-422-01".into());
        let mut live = osd(2, true, true, false);
        live.crush_host = Some("f5-422-01".into());
        let s = ClusterState { osds: vec![a, live, b], ..Default::default() };
        let claims = destroyed_by_host(&s);
        assert_eq!(claims.get("f5-422-01").cloned(), Some(vec!["1".to_string(), "3".into()]));
        assert_eq!(claims.len(), 1);
    }

    #[test]
    fn short_and_full_host_names_match() {
        assert!(same_host("f5-422-01", "f5-422-01.example.net"));
        assert!(same_host("f5-422-01.a", "f5-422-01.b"));
        assert!(!same_host("f5-422-01", "f5-422-02"));
    }
}
