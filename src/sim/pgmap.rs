//! The simulated cluster's PG map, for swaps (`SimCluster::with_pg_map`):
//! every PG of the one pool with where its data is (`acting`), its raw set
//! from the simulator's straw2-like placement (`placement.rs`), its upmap
//! entry, and a backfill that moves the data where the up set says, one
//! PG per receiving OSD at a time, counting every copy it writes. With the
//! map on, the OSDs' PG counts are the map's, and drains move PGs as CRUSH
//! does (a weight of 0 remaps them); without it the simulator keeps its
//! plain counts. Entries are cleaned as the monitors clean them
//! (`domain::swap::upmap`): a pair whose source left the raw set is
//! dropped, an entry naming an OSD out or at weight 0 is cancelled.

use std::collections::BTreeMap;

use super::cluster::{SimOsd, SimState};
use super::placement::{pg_num, place, topology, weighted, Weighted, PG_BYTES, POOL};
use crate::ceph::CephError;
use crate::domain::copies::{self, Copies, Pg};
use crate::domain::swap::cost::{Placement, SwapPlacements};
use crate::domain::swap::upmap::{apply, kept, same_osds};
use crate::domain::swap::{PgNow, SwapInput};

pub(crate) struct PgMap {
    pgs: Vec<SimPg>,
    upmaps: BTreeMap<u32, Vec<(u32, u32)>>,
    /// Copies written by backfills so far.
    moved: u64,
    balancer_on: bool,
}

struct SimPg {
    /// Where its data is.
    acting: Vec<u32>,
    /// How far the backfill to its up set got, in PGs.
    progress: f64,
}

/// An OSD's weight in CRUSH now: out weighs nothing. A destroyed OSD
/// keeps its place (its id waits for a new disk).
fn weight_now(o: &SimOsd) -> f64 {
    if o.is_in {
        o.crush_weight
    } else {
        0.0
    }
}

fn all(s: &SimState) -> Vec<&SimOsd> {
    s.osds.iter().collect()
}

fn no_map() -> CephError {
    CephError::Unsupported { what: "a PG map (the simulator keeps one only with SimCluster::with_pg_map)".into() }
}

fn pgid(ps: u32) -> String {
    format!("{POOL}.{ps:x}")
}

fn ps_of(pgid: &str) -> Option<u32> {
    let (pool, ps) = pgid.split_once('.')?;
    (pool.parse::<i64>().ok()? == POOL).then_some(())?;
    u32::from_str_radix(ps, 16).ok()
}

impl PgMap {
    /// Every PG where CRUSH puts it now, the balancer on, as in a default cluster.
    pub(super) fn new(s: &SimState) -> PgMap {
        let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
        let w = weighted(&live, weight_now);
        let pgs = (0..pg_num(&live)).map(|ps| SimPg { acting: place(&w, ps), progress: 0.0 }).collect();
        PgMap { pgs, upmaps: BTreeMap::new(), moved: 0, balancer_on: true }
    }

    fn up(&self, w: &Weighted, ps: u32) -> (Vec<u32>, Vec<u32>) {
        let raw = place(w, ps);
        let up = apply(&raw, self.upmaps.get(&ps).map_or(&[][..], Vec::as_slice));
        (raw, up)
    }

    /// Bytes written by backfills so far.
    pub(super) fn moved_bytes(&self) -> u64 {
        self.moved * PG_BYTES
    }

    pub(super) fn upmaps(&self) -> Vec<(String, Vec<(u32, u32)>)> {
        self.upmaps.iter().map(|(ps, pairs)| (pgid(*ps), pairs.clone())).collect()
    }

    /// Backfills for `dt` seconds at the simulator's rate, one PG per
    /// receiving OSD at a time; then the OSDs' counts.
    pub(super) fn tick(&mut self, s: &mut SimState, dt: f64) {
        let w = weighted(&all(s), weight_now);
        let up_osds: Vec<u32> = s.osds.iter().filter(|o| o.up).map(|o| o.id).collect();
        let mut busy: Vec<u32> = Vec::new();
        for ps in 0..self.pgs.len() as u32 {
            let (_, up) = self.up(&w, ps);
            let pg = &mut self.pgs[ps as usize];
            if same_osds(&up, &pg.acting) {
                pg.progress = 0.0;
                continue;
            }
            let gaining: Vec<u32> = up.iter().filter(|o| !pg.acting.contains(o)).copied().collect();
            if gaining.iter().any(|o| busy.contains(o) || !up_osds.contains(o)) {
                continue;
            }
            busy.extend(&gaining);
            pg.progress += s.drain_rate * dt;
            if pg.progress >= 1.0 {
                self.moved += gaining.len() as u64;
                pg.acting = up;
                pg.progress = 0.0;
            }
        }
        for o in &mut s.osds {
            o.pgs = self.pgs.iter().filter(|p| p.acting.contains(&o.id)).count() as f64;
        }
    }

    /// The monitors' cleanup after a change of weights or OSDs.
    pub(super) fn clean(&mut self, s: &SimState) {
        let w = weighted(&all(s), weight_now);
        let usable = |id: u32| s.osds.iter().any(|o| o.id == id && !o.destroyed && weight_now(o) > 0.0);
        let mut cleaned = BTreeMap::new();
        for (ps, pairs) in std::mem::take(&mut self.upmaps) {
            let raw = place(&w, ps);
            let up = apply(&raw, &pairs);
            if !up.iter().all(|o| usable(*o)) {
                continue;
            }
            let left = kept(&raw, &pairs);
            if !left.is_empty() {
                cleaned.insert(ps, left);
            }
        }
        self.upmaps = cleaned;
    }

    /// The PG states `pg stat` counts.
    pub(super) fn states(&self, s: &SimState) -> Vec<(String, i64)> {
        let w = weighted(&all(s), weight_now);
        let (mut clean, mut moving, mut degraded) = (0, 0, 0);
        for ps in 0..self.pgs.len() as u32 {
            let (_, up) = self.up(&w, ps);
            let acting = &self.pgs[ps as usize].acting;
            if acting.len() < up.len() {
                degraded += 1;
            } else if !same_osds(&up, acting) {
                moving += 1;
            } else {
                clean += 1;
            }
        }
        vec![
            ("active+clean".into(), clean),
            ("active+remapped+backfilling".into(), moving),
            ("active+undersized+degraded".into(), degraded),
        ]
    }

    /// `ceph osd destroy`: the OSD's copies are gone; its place in CRUSH stays.
    pub(super) fn lose(&mut self, id: u32) {
        for pg in &mut self.pgs {
            pg.acting.retain(|o| *o != id);
        }
    }

    pub(super) fn set_balancer(&mut self, on: bool) {
        self.balancer_on = on;
    }
}

/// `pg-upmap-items`, refused where the monitors would refuse or cancel it.
pub(super) fn upmap(s: &mut SimState, pgid: &str, pairs: &[(u32, u32)]) -> Result<(), CephError> {
    let mut map = s.pg_map.take().ok_or_else(no_map)?;
    let refused =
        |message: String| CephError::Command { command: format!("osd pg-upmap-items {pgid}"), code: 22, message };
    let result = match ps_of(pgid).filter(|ps| (*ps as usize) < map.pgs.len()) {
        None => Err(refused(format!("pgid '{pgid}' does not exist"))),
        Some(ps) if pairs.is_empty() => {
            map.upmaps.remove(&ps);
            Ok(())
        }
        Some(ps) => match pairs.iter().find(|(_, to)| !s.osds.iter().any(|o| o.id == *to && !o.destroyed)) {
            Some((_, to)) => Err(refused(format!("osd.{to} does not exist"))),
            None => {
                map.upmaps.insert(ps, pairs.to_vec());
                map.clean(s);
                Ok(())
            }
        },
    };
    s.pg_map = Some(map);
    result
}

/// What a swap reads each round.
pub(super) fn swap_input(s: &SimState, weights: &[(u32, f64)]) -> Result<SwapInput, CephError> {
    let map = s.pg_map.as_ref().ok_or_else(no_map)?;
    let osds = all(s);
    let now = weighted(&osds, weight_now);
    let fin = weighted(&osds, |o| match weights.iter().find(|(id, _)| *id == o.id) {
        Some((_, w)) if o.is_in => *w,
        _ => weight_now(o),
    });
    let pgs = (0..map.pgs.len() as u32)
        .map(|ps| {
            let (raw, up) = map.up(&now, ps);
            let (final_raw, final_up) = map.up(&fin, ps);
            let acting = map.pgs[ps as usize].acting.clone();
            let state = if acting.len() < up.len() {
                "active+undersized+degraded"
            } else if same_osds(&up, &acting) {
                "active+clean"
            } else {
                "active+remapped+backfilling"
            };
            PgNow {
                pgid: pgid(ps),
                pool: POOL,
                erasure: false,
                raw,
                up,
                acting,
                state: state.into(),
                bytes: PG_BYTES,
                items: map.upmaps.get(&ps).cloned().unwrap_or_default(),
                final_raw,
                final_up,
            }
        })
        .collect();
    Ok(SwapInput { pgs, max_backfills: 1, balancer_on: map.balancer_on })
}

/// Every PG's copies, for the last-copy gate: where its data is (the
/// map's, else where the simulator places it), the OSDs down.
pub(super) fn copies(s: &SimState) -> Copies {
    let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let count = s.pg_map.as_ref().map_or_else(|| pg_num(&live), |m| m.pgs.len() as u32);
    let w = weighted(&live, weight_now);
    let pgs = (0..count)
        .map(|ps| Pg {
            pgid: pgid(ps),
            pool: POOL,
            acting: s.pg_map.as_ref().map_or_else(|| place(&w, ps), |m| m.pgs[ps as usize].acting.clone()),
        })
        .collect();
    let pools = topology(&live)
        .0
        .iter()
        .map(|p| copies::Pool {
            id: p.id,
            name: p.name.clone(),
            size: p.size,
            min_size: p.min_size,
            data_shards: p.data_shards,
            pg_num: count,
        })
        .collect();
    Copies { pgs, pools, down: s.osds.iter().filter(|o| !o.up).map(|o| o.id).collect() }
}

/// The preview's three maps. The new OSDs get the ids the simulated
/// ceph-volume will give them, so the final map is the one the swap meets.
pub(super) fn placements(s: &SimState, olds: &[u32], host: &str, new_weights: &[f64]) -> SwapPlacements {
    let mut osds: Vec<SimOsd> = s.osds.clone();
    let new_ids = s.free_ids(new_weights.len());
    for (w, id) in new_weights.iter().zip(&new_ids) {
        let mut new = osds.iter().find(|o| o.host == host).cloned().unwrap_or_else(|| s.osds[0].clone());
        new.id = *id;
        new.crush_weight = *w;
        new.is_in = true;
        new.destroyed = false;
        osds.push(new);
    }
    let refs: Vec<&SimOsd> = osds.iter().collect();
    let old_or_new = |o: &SimOsd| olds.contains(&o.id) || new_ids.contains(&o.id);
    let now = weighted(&refs, |o| if new_ids.contains(&o.id) { 0.0 } else { weight_now(o) });
    let drained = weighted(&refs, |o| if old_or_new(o) { 0.0 } else { weight_now(o) });
    let fin = weighted(&refs, |o| if olds.contains(&o.id) { 0.0 } else { weight_now(o) });
    let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let count = s.pg_map.as_ref().map_or_else(|| pg_num(&live), |m| m.pgs.len() as u32);
    let pgs = (0..count)
        .map(|ps| {
            let up = |w: &Weighted| match &s.pg_map {
                Some(m) => m.up(w, ps).1,
                None => place(w, ps),
            };
            let now_set = up(&now);
            Placement {
                pgid: pgid(ps),
                pool: POOL,
                bytes: PG_BYTES,
                acting: s.pg_map.as_ref().map_or_else(|| now_set.clone(), |m| m.pgs[ps as usize].acting.clone()),
                drained: up(&drained),
                final_: up(&fin),
                now: now_set,
            }
        })
        .collect();
    SwapPlacements {
        pgs,
        pools: topology(&live).0,
        down: s.osds.iter().filter(|o| !o.up && !o.destroyed).map(|o| o.id).collect(),
        recovery_now: None,
        final_known: true,
    }
}
