//! What the simulated cluster answers from its state besides its maps:
//! ok-to-stop verdicts, the monitors' config database, `ceph versions`.

use super::cluster::SimState;
use crate::ceph::{CephRelease, DbEntry, Verdict};

/// The version line every simulated daemon runs: the release osdkeeper has
/// run on longest.
const SIM_VERSION: &str = "ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)";

/// `ceph versions`: every OSD, a mon and a mgr on one release.
pub(super) fn versions(s: &SimState) -> Vec<(CephRelease, u64)> {
    let release = CephRelease::parse(SIM_VERSION).expect("the simulator's version line reads");
    vec![(release, s.osds.len() as u64 + 2)]
}

pub(super) fn database(s: &SimState) -> Vec<DbEntry> {
    s.config
        .iter()
        .map(|(section, name, value)| DbEntry { section: section.clone(), name: name.clone(), value: value.clone() })
        .collect()
}

pub(super) fn ok_to_stop(s: &SimState, ids: &[u32]) -> Verdict {
    let down_elsewhere = s.osds.iter().filter(|o| !o.up && !ids.contains(&o.id) && !o.destroyed).count();
    if down_elsewhere > 0 {
        Verdict {
            ok: false,
            message: format!("unsafe to stop osd(s) at this time ({down_elsewhere} OSDs already down)"),
        }
    } else {
        Verdict { ok: true, message: format!("OSD(s) {ids:?} are ok to stop without reducing availability") }
    }
}
