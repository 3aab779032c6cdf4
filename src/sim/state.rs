//! The simulated cluster's state and its clock: the OSDs, each host's
//! disks, what the simulated agents and monitors remember, and how time
//! passes for them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::cluster::SimOsd;
use super::pgmap::PgMap;

/// How time passes for the simulated cluster: with the wall clock (demos),
/// or only when a test says so (`advance`), so tests wait for nothing.
/// (tokio's paused clock would do the second, but sqlx's pool times out
/// the moment a paused runtime idles while SQLite works on its thread.)
pub(super) enum SimClock {
    Real { last_tick: Instant },
    Manual { pending: Duration },
}

impl SimClock {
    /// Seconds passed since the last call.
    pub(super) fn elapsed(&mut self) -> f64 {
        match self {
            SimClock::Real { last_tick } => {
                let now = Instant::now();
                let dt = now.duration_since(*last_tick);
                *last_tick = now;
                dt.as_secs_f64()
            }
            SimClock::Manual { pending } => std::mem::take(pending).as_secs_f64(),
        }
    }
}

pub(super) struct SimState {
    pub osds: Vec<SimOsd>,
    /// Devices per host as ceph-volume JSON (kept in step with the OSDs);
    /// by name, since every poll looks one host up.
    pub devices: HashMap<String, Vec<serde_json::Value>>,
    pub clock: SimClock,
    /// PGs per second one draining OSD sheds at pace 1.
    pub drain_rate: f64,
    pub pace: f64,
    pub unreachable: Vec<String>,
    /// Hosts whose next zap fails as if the connection dropped.
    pub zaps_lost: Vec<String>,
    /// `ok-to-stop` questions left to time out, as a loaded monitor's do.
    pub ok_to_stop_timeouts: usize,
    /// (host, path, OSD fsid) of disks that still carry a purged OSD's label.
    pub dirty: Vec<(String, String, String)>,
    /// (host, path, LV report) of used disks pushed into a host from
    /// elsewhere (`SimCluster::push_used_disk`): another cluster's OSD volume.
    pub foreign: Vec<(String, String, serde_json::Value)>,
    /// OSDs made so far: a new OSD's fsid is never an earlier one's.
    pub made: u32,
    /// (host, path) of disks with ceph-volume's "being replaced" header.
    pub marked: Vec<(String, String)>,
    /// The release every host's ceph-volume reports (none: not said).
    pub ceph_volume_release: Option<String>,
    /// Purged OSDs whose LVs are still on their host: (host, id, fsid, device).
    pub purged_lvs: Vec<(String, u32, String, String)>,
    /// Shared DB disks: (host, path, OSDs whose DB they hold); in use while any of them exists.
    pub db_disks: Vec<(String, String, Vec<u32>)>,
    /// The monitors' config database: (section, option, value).
    pub config: Vec<(String, String, String)>,
    /// Every PG and where its data is, when the simulator keeps them (swaps).
    pub pg_map: Option<PgMap>,
    /// Positions in `osds` by host, rebuilt after `osds` gains or loses an
    /// entry (`osds_changed`): every poll asks for one host's OSDs, and a
    /// scan of all of them per poll kept a 2000-host demo at a full core.
    by_host: Option<HashMap<String, Vec<usize>>>,
}

impl SimState {
    /// The `n` lowest ids no OSD has, as Ceph gives a new OSD the lowest
    /// free id.
    pub(super) fn free_ids(&self, n: usize) -> Vec<u32> {
        let taken: Vec<u32> = self.osds.iter().map(|o| o.id).collect();
        crate::domain::swap::lowest_free_ids(&taken, n)
    }

    pub(super) fn new(
        osds: Vec<SimOsd>,
        devices: Vec<(String, Vec<serde_json::Value>)>,
        drain_rate: f64,
        pace: f64,
    ) -> SimState {
        SimState {
            osds,
            devices: devices.into_iter().collect(),
            clock: SimClock::Real { last_tick: Instant::now() },
            drain_rate,
            pace,
            unreachable: Vec::new(),
            zaps_lost: Vec::new(),
            ok_to_stop_timeouts: 0,
            dirty: Vec::new(),
            foreign: Vec::new(),
            made: 0,
            marked: Vec::new(),
            ceph_volume_release: None,
            purged_lvs: Vec::new(),
            db_disks: Vec::new(),
            config: Vec::new(),
            pg_map: None,
            by_host: None,
        }
    }

    /// Call after adding or removing OSDs.
    pub fn osds_changed(&mut self) {
        self.by_host = None;
    }

    /// The OSDs placed on `host`.
    pub fn osds_on(&mut self, host: &str) -> Vec<&SimOsd> {
        let osds = &self.osds;
        let index = self.by_host.get_or_insert_with(|| {
            let mut m: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, o) in osds.iter().enumerate() {
                m.entry(o.host.clone()).or_default().push(i);
            }
            m
        });
        index.get(host).map(|ix| ix.iter().map(|&i| &osds[i]).collect()).unwrap_or_default()
    }
}
