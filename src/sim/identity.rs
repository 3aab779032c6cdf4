//! The simulated agent's checks of what a request names, as the real
//! agent makes them (`domain::identity`): a zap's disk and what is on it,
//! a stop's OSD fsid, a zap-osd's devices.

use super::cluster::{SimCluster, SimState, SIM_FSID};
use crate::agent_client::AgentError;
use crate::domain::identity::{check_zap, same_uuid, DiskSeen, LabelSeen, LvSeen};
use crate::store::ManagedHost;
use crate::wire::agent::{StopRequest, ZapOsdRequest, ZapRequest};
use crate::wire::ceph_volume::report_of;

/// What the disk at `path` holds now, as the host's inventory and labels say.
fn disk_seen(s: &mut SimState, host: &str, path: &str) -> DiskSeen {
    let report = super::agents::inventory(s, host).iter().find_map(|d| report_of(d).ok().filter(|r| &*r.path == path));
    let label = s.dirty.iter().find(|(h, p, _)| h == host && p == path).map(|(_, _, fsid)| LabelSeen {
        osd_uuid: fsid.clone(),
        whoami: None,
        cluster_fsid: Some(SIM_FSID.to_string()),
    });
    DiskSeen {
        device_id: report.as_ref().map(|r| r.device_id.to_string()).unwrap_or_default(),
        lvs: report.map(|r| r.lvs.iter().map(LvSeen::from).collect()).unwrap_or_default(),
        label,
        other: Vec::new(),
    }
}

fn mismatch(host: &ManagedHost, message: String) -> AgentError {
    AgentError::Mismatch { addr: host.addr.clone(), message }
}

pub(super) fn check_zap_request(s: &mut SimState, host: &ManagedHost, req: &ZapRequest) -> Result<(), AgentError> {
    let Some(expect) = req.expect() else { return Ok(()) };
    let seen = disk_seen(s, &host.name, &req.path);
    check_zap(&expect, &seen)
        .map_err(|m| mismatch(host, format!("refusing to zap {}: {m}; nothing was wiped (simulated)", req.path)))
}

pub(super) fn check_stop_request(
    s: &SimState,
    host: &ManagedHost,
    osd_id: u32,
    req: &StopRequest,
) -> Result<(), AgentError> {
    let Some(want) = req.osd_fsid.as_deref() else { return Ok(()) };
    match s.osds.iter().find(|o| o.id == osd_id && o.host == host.name && o.daemon_running) {
        Some(o) if !same_uuid(&o.fsid, want) => Err(mismatch(
            host,
            format!(
                "refusing to stop osd.{osd_id}: the daemon serving it here is OSD fsid {}, not {want}; nothing was \
                 stopped (simulated)",
                o.fsid
            ),
        )),
        _ => Ok(()),
    }
}

pub(super) fn check_zap_osd_request(s: &SimState, host: &ManagedHost, req: &ZapOsdRequest) -> Result<(), AgentError> {
    let Some(named) = &req.devices else { return Ok(()) };
    let on = s
        .purged_lvs
        .iter()
        .filter(|(h, _, f, _)| *h == host.name && *f == req.osd_fsid)
        .map(|(_, _, _, d)| d.clone())
        .chain(s.osds.iter().filter(|o| o.host == host.name && o.fsid == req.osd_fsid).map(|o| o.device.clone()))
        .filter(|d| !d.is_empty() && !named.contains(d))
        .collect::<Vec<_>>();
    if on.is_empty() {
        return Ok(());
    }
    Err(mismatch(
        host,
        format!(
            "refusing to zap the LVs of osd.{} (fsid {}): they are on {}, not only on the devices named ({}); \
             nothing was removed (simulated)",
            req.osd_id,
            req.osd_fsid,
            on.join(", "),
            named.join(", ")
        ),
    ))
}

impl SimCluster {
    /// Puts a used disk in a slot: the disk at `path` on `host` now has the
    /// id `device_id` and holds the block LV of an OSD of another cluster
    /// (`osd_fsid`, `cluster_fsid`), as a disk from another server would.
    pub fn push_used_disk(&self, host: &str, path: &str, device_id: &str, osd_fsid: &str, cluster_fsid: &str) {
        self.swap_disk(host, path, device_id);
        let lv = serde_json::json!({"name": "osd-block-elsewhere", "osd_id": "3", "cluster_name": "ceph",
            "type": "block", "osd_fsid": osd_fsid, "cluster_fsid": cluster_fsid, "osdspec_affinity": ""});
        let mut s = self.inner.lock().expect("sim lock");
        s.dirty.retain(|(h, p, _)| !(h == host && p == path));
        for o in s.osds.iter_mut().filter(|o| o.host == host && o.device == path && o.destroyed) {
            o.device.clear();
        }
        s.foreign.push((host.into(), path.into(), lv));
    }

    /// The used disks pushed in and still there: (host, path).
    pub fn used_disks(&self) -> Vec<(String, String)> {
        self.with(|s| s.foreign.iter().map(|(h, p, _)| (h.clone(), p.clone())).collect())
    }
}
