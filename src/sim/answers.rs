//! What the simulated cluster answers from its state besides its maps:
//! ok-to-stop and safe-to-destroy verdicts, the monitors' config database
//! and what the OSDs run with, `ceph versions`, and the settings kept
//! with the PG map (the balancer).

use super::cluster::SimState;
use super::pgmap::PgMap;
use crate::ceph::{CephError, CephRelease, DbEntry, RecoveryNow, Verdict};
use crate::domain::removal::boost::Running;

/// The version line every simulated daemon runs: the release osdkeeper has
/// run on longest.
const SIM_VERSION: &str = "ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)";

/// `ceph versions`: every OSD, a mon and a mgr on one release.
/// `osd destroy N --yes-i-really-mean-it`: refused while the OSD is up.
pub(super) fn destroy_down(o: &mut super::cluster::SimOsd) -> Result<(), CephError> {
    if o.up {
        let message = format!("osd.{} is not `down`.", o.id);
        return Err(CephError::Command { command: format!("osd destroy {}", o.id), code: 16, message });
    }
    o.destroyed = true;
    Ok(())
}

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

pub(super) fn safe_to_destroy(s: &SimState, ids: &[u32]) -> Verdict {
    let busy: Vec<(u32, i64)> =
        s.osds.iter().filter(|o| ids.contains(&o.id) && o.pgs > 0.0).map(|o| (o.id, o.pgs.ceil() as i64)).collect();
    match busy.first() {
        None => Verdict { ok: true, message: "safe to destroy without reducing data durability".into() },
        Some((id, n)) => Verdict { ok: false, message: format!("OSD(s) {id} have {n} pgs currently mapped to them.") },
    }
}

/// The recovery settings osd.`probe` runs with: Pacific's defaults under
/// the `osd` section's values.
pub(super) fn recovery(s: &SimState, probe: u32) -> RecoveryNow {
    let defaults = [
        ("osd_op_queue", "wpq"),
        ("osd_max_backfills", "1"),
        ("osd_recovery_max_active", "0"),
        ("osd_recovery_max_active_hdd", "3"),
        ("osd_recovery_max_active_ssd", "10"),
    ];
    let running = defaults
        .iter()
        .map(|(name, value)| match s.config.iter().find(|(sec, n, _)| sec == "osd" && n == name) {
            Some((_, _, v)) => Running { name: name.to_string(), value: v.clone(), source: "mon".into() },
            None => Running { name: name.to_string(), value: value.to_string(), source: "default".into() },
        })
        .collect();
    RecoveryNow { probe, running, database: database(s) }
}

/// The CRUSH weight a new OSD joins with: `osd_crush_initial_weight` from
/// the config database (its own section before the `osd` one), else its
/// size's. A `host:` mask does not reach it, as on a real cluster: the
/// monitors match it against the OSD's place in CRUSH, which a new OSD has
/// not got yet.
pub(super) fn initial_weight(s: &SimState, id: u32, size_weight: f64) -> f64 {
    let own = format!("osd.{id}");
    [own.as_str(), "osd"]
        .iter()
        .find_map(|section| {
            s.config
                .iter()
                .find(|(sec, n, _)| sec == section && n == "osd_crush_initial_weight")
                .and_then(|(_, _, v)| v.parse::<f64>().ok())
        })
        .filter(|w| *w >= 0.0)
        .unwrap_or(size_weight)
}

/// A change to what the PG map keeps.
pub(super) fn with_map(s: &mut SimState, change: impl FnOnce(&mut PgMap)) -> Result<(), CephError> {
    match s.pg_map.as_mut() {
        Some(map) => {
            change(map);
            Ok(())
        }
        None => Err(CephError::Unsupported { what: "the balancer and OSD flags without a PG map".into() }),
    }
}
