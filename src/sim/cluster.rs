//! The simulated Ceph side.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;

use super::pgmap::PgMap;
use super::state::SimClock;
pub(super) use super::state::SimState;
use crate::ceph::{
    CephCluster, CephError, CephRelease, ClusterHealth, ClusterState, Copies, DbEntry, OsdDevices, OsdState,
    PacingFacts, PgOnOsd, PreviewInput, RecoveryNow, SwapInput, SwapPlacements, Verdict,
};

#[derive(Debug, Clone, PartialEq)]
pub struct SimOsd {
    pub id: u32,
    pub host: String,
    pub device: String,
    pub device_id: String,
    pub up: bool,
    pub is_in: bool,
    pub destroyed: bool,
    /// `ceph osd add-noout`: not marked out while down.
    pub noout: bool,
    pub crush_weight: f64,
    /// Fractional so that slow paces still move.
    pub pgs: f64,
    pub daemon_running: bool,
    pub affinity: String,
    /// `hdd` or `ssd` from the disk, or the spec's `crush_device_class`;
    /// empty once removed (`osd crush rm-device-class`).
    pub device_class: String,
    /// Its fsid (`osd dump`'s uuid, the tag of its LVs).
    pub fsid: String,
    /// ceph-volume activated it (its data directory is primed); made ones
    /// start out prepared only.
    pub activated: bool,
}

/// The simulated cluster's fsid (written into every OSD it "makes").
pub const SIM_FSID: &str = "5e5e5e5e-0000-4000-8000-000000000001";

/// A whole simulated cluster; cheap to clone (shared state).
#[derive(Clone)]
pub struct SimCluster {
    pub(super) inner: Arc<Mutex<SimState>>,
}

impl SimCluster {
    /// A cluster with the given OSDs and host inventories. `pace` speeds
    /// everything up (tests use large values).
    pub fn new(
        osds: Vec<SimOsd>,
        devices: Vec<(String, Vec<serde_json::Value>)>,
        drain_rate: f64,
        pace: f64,
    ) -> SimCluster {
        SimCluster { inner: Arc::new(Mutex::new(SimState::new(osds, devices, drain_rate, pace))) }
    }

    /// Stops the wall clock: from now on time passes only by `advance`.
    pub fn manual_clock(self) -> SimCluster {
        self.inner.lock().expect("sim lock").clock = SimClock::Manual { pending: Duration::ZERO };
        self
    }

    /// Keeps every PG and where its data is (`pgmap.rs`): swaps need it,
    /// and drains then move PGs as CRUSH remaps them.
    pub fn with_pg_map(self) -> SimCluster {
        {
            let mut s = self.inner.lock().expect("sim lock");
            let map = PgMap::new(&s);
            s.pg_map = Some(map);
        }
        self
    }

    /// Bytes backfills wrote so far, and the upmap entries now (PG map only).
    pub fn moved_bytes(&self) -> u64 {
        self.with(|s| s.pg_map.as_ref().map_or(0, PgMap::moved_bytes))
    }

    pub fn upmaps(&self) -> Vec<(String, Vec<(u32, u32)>)> {
        self.with(|s| s.pg_map.as_ref().map(PgMap::upmaps).unwrap_or_default())
    }

    /// Lets `by` pass for a cluster on the manual clock.
    pub fn advance(&self, by: Duration) {
        let mut s = self.inner.lock().expect("sim lock");
        if let SimClock::Manual { pending } = &mut s.clock {
            *pending += by;
        }
    }

    /// The release every host's ceph-volume reports from now on
    /// (`20.2.4 (tentacle)`); none by default. Only what it says: the
    /// simulated ceph-volume still plans as 16.2.15's.
    pub fn set_ceph_volume_release(&self, release: &str) {
        self.inner.lock().expect("sim lock").ceph_volume_release = Some(release.to_string());
    }

    /// The disks that carry ceph-volume's "being replaced" header: (host, path).
    pub fn marked(&self) -> Vec<(String, String)> {
        self.inner.lock().expect("sim lock").marked.clone()
    }

    /// Declares a shared DB disk.
    pub fn add_db_disk(&self, host: &str, path: &str, osds: Vec<u32>) {
        self.inner.lock().expect("sim lock").db_disks.push((host.into(), path.into(), osds));
    }

    /// The simulated config database: (section, option, value).
    pub fn config(&self) -> Vec<(String, String, String)> {
        self.inner.lock().expect("sim lock").config.clone()
    }

    pub fn osds(&self) -> Vec<SimOsd> {
        self.inner.lock().expect("sim lock").osds.clone()
    }

    /// Moves placement groups off draining OSDs onto the others, for the
    /// time passed since the last look.
    pub(super) fn tick(s: &mut SimState) {
        let dt = s.clock.elapsed() * s.pace;
        if let Some(mut map) = s.pg_map.take() {
            map.tick(s, dt);
            s.pg_map = Some(map);
            return;
        }
        // Every call of the simulator ticks: the common case, nothing
        // draining, costs one pass and no allocation.
        if !s.osds.iter().any(|o| (o.crush_weight == 0.0 || !o.is_in) && o.pgs > 0.0) {
            return;
        }
        let receivers: Vec<usize> = (0..s.osds.len())
            .filter(|&i| s.osds[i].up && s.osds[i].is_in && s.osds[i].crush_weight > 0.0 && !s.osds[i].destroyed)
            .collect();
        if receivers.is_empty() {
            return;
        }
        let mut moved = 0.0;
        for o in s.osds.iter_mut() {
            let draining = o.crush_weight == 0.0 || !o.is_in;
            if draining && o.pgs > 0.0 {
                let step = (s.drain_rate * dt).min(o.pgs);
                o.pgs -= step;
                if o.pgs < 0.5 {
                    moved += o.pgs;
                    o.pgs = 0.0;
                }
                moved += step;
            }
        }
        let share = moved / receivers.len() as f64;
        for i in receivers {
            s.osds[i].pgs += share;
        }
    }

    pub(super) fn with<T>(&self, f: impl FnOnce(&mut SimState) -> T) -> T {
        let mut s = self.inner.lock().expect("sim lock");
        Self::tick(&mut s);
        f(&mut s)
    }

    /// After weights or OSDs changed: the monitors clean the upmap entries.
    fn map_changed(s: &mut SimState) {
        if let Some(mut map) = s.pg_map.take() {
            map.clean(s);
            s.pg_map = Some(map);
        }
    }

    fn find(s: &mut SimState, id: u32) -> Result<&mut SimOsd, CephError> {
        s.osds.iter_mut().find(|o| o.id == id).ok_or_else(|| CephError::Command {
            command: format!("osd ... {id}"),
            code: 2,
            message: format!("osd.{id} does not exist"),
        })
    }
}

/// The simulator runs no benchmarks: numbers it made up would be shown as measured.
impl crate::ceph::CephBench for SimCluster {}

impl CephCluster for SimCluster {
    fn state(&self) -> BoxFuture<'_, Result<ClusterState, CephError>> {
        let st = self.with(|s| ClusterState {
            fsid: SIM_FSID.to_string(),
            osds: s
                .osds
                .iter()
                .map(|o| OsdState {
                    id: o.id,
                    up: o.up,
                    is_in: o.is_in,
                    destroyed: o.destroyed,
                    noout: o.noout,
                    crush_weight: Some(o.crush_weight),
                    pgs: Some(o.pgs.ceil() as i64),
                    kb_used: Some((o.pgs.ceil() as u64) * 4096),
                    crush_host: Some(o.host.clone()),
                    device_class: Some(o.device_class.clone()).filter(|c| !c.is_empty()),
                    // `osd destroy` clears it (`domain::identity::osd_at_id`).
                    uuid: (!o.destroyed).then(|| o.fsid.clone()),
                })
                .collect(),
            pg_states: match &s.pg_map {
                Some(map) => map.states(s),
                None => vec![("active+clean".into(), s.osds.iter().map(|o| o.pgs).sum::<f64>().round() as i64 / 2)],
            },
        });
        Box::pin(async move { Ok(st) })
    }

    fn versions(&self) -> BoxFuture<'_, Result<Vec<(CephRelease, u64)>, CephError>> {
        let versions = self.with(|s| super::answers::versions(s));
        Box::pin(async move { Ok(versions) })
    }

    fn status(&self) -> BoxFuture<'_, Result<ClusterHealth, CephError>> {
        let h = self.with(|s| super::health::health(s));
        Box::pin(async move { Ok(h) })
    }

    fn osd_devices(&self, id: u32) -> BoxFuture<'_, Result<OsdDevices, CephError>> {
        let r = self.with(|s| {
            Self::find(s, id).map(|o| OsdDevices {
                hostname: o.host.clone(),
                dev_nodes: vec![o.device.clone()],
                device_ids: vec![(o.device.trim_start_matches("/dev/").to_string(), o.device_id.clone())],
            })
        });
        Box::pin(async move { r })
    }

    fn all_osd_devices(&self) -> BoxFuture<'_, Result<Vec<(u32, OsdDevices)>, CephError>> {
        let r = self.with(|s| {
            s.osds
                .iter()
                .map(|o| {
                    let kernel = o.device.trim_start_matches("/dev/").to_string();
                    let dev = OsdDevices {
                        hostname: o.host.clone(),
                        dev_nodes: vec![o.device.clone()],
                        device_ids: vec![(kernel, o.device_id.clone())],
                    };
                    (o.id, dev)
                })
                .collect()
        });
        Box::pin(async move { Ok(r) })
    }

    fn ok_to_stop(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>> {
        let r = self.with(|s| {
            if s.ok_to_stop_timeouts == 0 {
                return Ok(super::answers::ok_to_stop(s, ids));
            }
            s.ok_to_stop_timeouts -= 1;
            Err(CephError::Timeout { command: format!("ceph osd ok-to-stop {ids:?}"), seconds: 10 })
        });
        Box::pin(async move { r })
    }

    fn preview_input(&self, ids: &[u32]) -> BoxFuture<'_, Result<PreviewInput, CephError>> {
        let r = self.with(|s| super::placement::preview_input(s, ids, super::answers::ok_to_stop(s, ids)));
        Box::pin(async move { Ok(r) })
    }

    fn pgs_on_osd(&self, id: u32) -> BoxFuture<'_, Result<Vec<PgOnOsd>, CephError>> {
        let r = self.with(|s| super::placement::pgs_on_osd(s, id));
        Box::pin(async move { Ok(r) })
    }

    fn pacing_facts(&self, _probe: u32) -> BoxFuture<'_, Result<PacingFacts, CephError>> {
        let r = self.with(|s| super::placement::pacing_facts(s));
        Box::pin(async move { Ok(r) })
    }

    fn recovery_config(&self, probe: u32) -> BoxFuture<'_, Result<RecoveryNow, CephError>> {
        let r = self.with(|s| super::answers::recovery(s, probe));
        Box::pin(async move { Ok(r) })
    }

    fn config_dump(&self) -> BoxFuture<'_, Result<Vec<DbEntry>, CephError>> {
        let r = self.with(|s| super::answers::database(s));
        Box::pin(async move { Ok(r) })
    }

    fn config_set(&self, section: &str, name: &str, value: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let (section, name, value) = (section.to_string(), name.to_string(), value.to_string());
        self.with(|s| {
            s.config.retain(|(sec, n, _)| !(*sec == section && *n == name));
            s.config.push((section, name, value));
        });
        Box::pin(async move { Ok(()) })
    }

    fn config_rm(&self, section: &str, name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        self.with(|s| s.config.retain(|(sec, n, _)| !(sec == section && n == name)));
        Box::pin(async move { Ok(()) })
    }

    fn safe_to_destroy(&self, ids: &[u32]) -> BoxFuture<'_, Result<Verdict, CephError>> {
        let r = self.with(|s| super::answers::safe_to_destroy(s, ids));
        Box::pin(async move { Ok(r) })
    }

    fn reweight(&self, id: u32, weight: f64) -> BoxFuture<'_, Result<(), CephError>> {
        self.set_crush_weights(&[(id, weight)])
    }

    fn mark_out(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| Self::find(s, id).map(|o| o.is_in = false).map(|_| Self::map_changed(s)));
        Box::pin(async move { r })
    }

    fn mark_in(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| Self::find(s, id).map(|o| o.is_in = true).map(|_| Self::map_changed(s)));
        Box::pin(async move { r })
    }

    fn mark_down(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| Self::find(s, id).map(|o| o.up = o.daemon_running));
        Box::pin(async move { r })
    }

    fn destroy(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| {
            let o = Self::find(s, id)?;
            if o.up || o.pgs > 0.0 {
                return Err(CephError::Command {
                    command: format!("osd destroy {id}"),
                    code: 16,
                    message: format!("osd.{id} is not `down`."),
                });
            }
            o.destroyed = true;
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn purge(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| {
            let Some(pos) = s.osds.iter().position(|o| o.id == id) else { return Ok(()) };
            let o = &s.osds[pos];
            if o.up || o.pgs > 0.0 {
                return Err(CephError::Command {
                    command: format!("osd purge {id}"),
                    code: 16,
                    message: format!("osd.{id} is not `down`."),
                });
            }
            let gone = s.osds.remove(pos);
            s.osds_changed();
            s.purged_lvs.push((gone.host.clone(), gone.id, gone.fsid.clone(), gone.device.clone()));
            s.dirty.push((gone.host, gone.device, gone.fsid));
            Self::map_changed(s);
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn rm_device_class(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| Self::find(s, id).map(|o| o.device_class.clear()));
        Box::pin(async move { r })
    }

    fn swap_input(&self, weights: &[(u32, f64)], _probe: u32) -> BoxFuture<'_, Result<SwapInput, CephError>> {
        let r = self.with(|s| super::pgmap::swap_input(s, weights));
        Box::pin(async move { r })
    }

    fn swap_placements(
        &self,
        olds: &[u32],
        host: &str,
        new: &[f64],
    ) -> BoxFuture<'_, Result<SwapPlacements, CephError>> {
        let r = self.with(|s| super::pgmap::placements(s, olds, host, new));
        Box::pin(async move { Ok(r) })
    }

    fn pg_upmap_items(&self, pgid: &str, pairs: &[(u32, u32)]) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| super::pgmap::upmap(s, pgid, pairs));
        Box::pin(async move { r })
    }

    fn set_crush_weights(&self, weights: &[(u32, f64)]) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| {
            weights.iter().try_for_each(|(id, w)| Self::find(s, *id).map(|o| o.crush_weight = *w))?;
            Self::map_changed(s);
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn set_balancer(&self, on: bool) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| super::answers::with_map(s, |m| m.set_balancer(on)));
        Box::pin(async move { r })
    }

    fn set_noout(&self, id: u32, on: bool) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| {
            Self::find(s, id)?.noout = on;
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn destroy_unchecked(&self, id: u32) -> BoxFuture<'_, Result<(), CephError>> {
        let r = self.with(|s| {
            let o = Self::find(s, id)?;
            super::answers::destroy_down(o)?;
            super::answers::with_map(s, |m| m.lose(id))
        });
        Box::pin(async move { r })
    }

    fn copies(&self) -> BoxFuture<'_, Result<Copies, CephError>> {
        let r = self.with(|s| super::pgmap::copies(s));
        Box::pin(async move { Ok(r) })
    }
}
