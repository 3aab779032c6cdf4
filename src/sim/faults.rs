//! What a test makes go wrong, or change under the daemon: an agent out of
//! reach, a zap or an `ok-to-stop` lost, a disk pulled and another pushed in,
//! an OSD that fails and comes back.

use super::cluster::SimCluster;

impl SimCluster {
    /// Makes a host's agent unreachable (or reachable again).
    pub fn set_unreachable(&self, host: &str, unreachable: bool) {
        let mut s = self.inner.lock().expect("sim lock");
        s.unreachable.retain(|h| h != host);
        if unreachable {
            s.unreachable.push(host.to_string());
        }
    }

    /// Makes the next zap on a host fail as a dropped connection would.
    pub fn lose_next_zap(&self, host: &str) {
        self.inner.lock().expect("sim lock").zaps_lost.push(host.to_string());
    }

    /// Makes the next `n` `ok-to-stop` questions time out.
    pub fn time_out_ok_to_stop(&self, n: usize) {
        self.inner.lock().expect("sim lock").ok_to_stop_timeouts = n;
    }

    /// Makes an OSD fail (its daemon dies, the monitors mark it down), or
    /// start again.
    pub fn set_osd_failed(&self, id: u32, failed: bool) {
        let mut s = self.inner.lock().expect("sim lock");
        for o in s.osds.iter_mut().filter(|o| o.id == id) {
            (o.up, o.daemon_running) = (!failed, !failed);
        }
    }

    /// Puts another disk in a slot: the device at `path` on `host` reports
    /// a new serial/WWN id (the old disk pulled, a new one pushed in).
    pub fn swap_disk(&self, host: &str, path: &str, device_id: &str) {
        let mut s = self.inner.lock().expect("sim lock");
        for d in s.devices.get_mut(host).into_iter().flatten() {
            // Read through the one reader of device reports, as every reader must.
            if crate::wire::ceph_volume::report_of(d).is_ok_and(|r| &*r.path == path) {
                d["device_id"] = serde_json::json!(device_id);
            }
        }
        // The new disk carries no header.
        s.marked.retain(|(h, p)| !(h == host && p == path));
    }
}
