//! ceph-volume's OSD creation on a simulated host.

use super::agents::inventory;
use super::cluster::{SimOsd, SimState};
use crate::domain::osd_layout::{command_layout, Refusal};
use crate::wire::agent::CephVolumeRequest;
use crate::wire::ceph_volume::parse_device_list;

/// What ceph-volume does with the command, simulated: it plans with the
/// same function as the dry-run (so the demo carries out exactly the plan
/// it showed, or fails where ceph-volume would) and makes each planned OSD,
/// prepared but not activated or started, with its claimed (destroyed) id
/// where it has one; the spec's class or the disk's, unless the claimed id
/// still has one bound (Ceph's OSD sets its class at boot only where none
/// is). DB and WAL devices then show their new volumes in the inventory.
pub(super) fn prepare(s: &mut SimState, host: &str, request: &CephVolumeRequest) -> Result<Vec<String>, Refusal> {
    let inv = inventory(s, host);
    let devices = serde_json::to_vec(&inv)
        .map_err(|e| e.to_string())
        .and_then(|j| parse_device_list(&j).map_err(|e| e.to_string()))
        .map_err(|e| Refusal {
            exit_code: 1,
            message: format!("the simulated inventory does not read as ceph-volume's: {e}"),
            detail: None,
            by_osdkeeper: true,
        })?;
    // The simulated cluster is Ceph 16.2.15 (`ceph versions`), its ceph-volume too.
    let layout = command_layout(&request.args, &devices, crate::domain::ceph_release::Release::Pacific)?;
    let class = request.args.windows(2).find(|w| w[0] == "--crush-device-class").map(|w| w[1].clone());
    let mut created = Vec::new();
    for osd in layout.osds {
        let path = osd.data.to_string();
        let device = devices.iter().find(|d| *d.path == *path).map(|d| d.report.clone()).unwrap_or_default();
        let (id, bound, noout) = match osd.osd_id.and_then(|id| id.parse().ok()) {
            Some(id) => {
                let old = s.osds.iter().find(|o| o.id == id && o.destroyed);
                let bound = old.filter(|o| !o.device_class.is_empty()).map(|o| o.device_class.clone());
                // `osd new` on a destroyed id keeps its other state bits: noout stays.
                let noout = old.is_some_and(|o| o.noout);
                s.osds.retain(|o| !(o.id == id && o.destroyed));
                s.osds_changed();
                (id, bound, noout)
            }
            None => (s.free_ids(1)[0], None, false),
        };
        for fast in [&osd.db, &osd.wal].into_iter().flatten() {
            match s.db_disks.iter_mut().find(|(h, p, _)| h == host && **p == **fast) {
                Some((_, _, ids)) => ids.push(id),
                None => s.db_disks.push((host.to_string(), fast.to_string(), vec![id])),
            }
        }
        let crush_weight =
            super::answers::initial_weight(s, id, super::crush_weight_of(device.size_bytes.unwrap_or(1e12)));
        // `osd new` gives every OSD a uuid of its own, whatever id it takes.
        s.made += 1;
        let made = format!("{path}@{}", s.made);
        s.osds.push(SimOsd {
            id,
            host: host.to_string(),
            device: path.clone(),
            device_id: device.device_id.to_string(),
            up: false,
            is_in: true,
            destroyed: false,
            noout,
            crush_weight,
            pgs: 0.0,
            daemon_running: false,
            affinity: request.osdspec_affinity.clone().unwrap_or_default(),
            device_class: bound.unwrap_or_else(|| class.clone().unwrap_or_else(|| super::class_of(&device))),
            fsid: super::sim_fsid(host, &made, id),
            activated: false,
        });
        s.osds_changed();
        created.push(format!("osd.{id} on {path}"));
    }
    Ok(created)
}
