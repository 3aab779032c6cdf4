//! What each way of changing disks costs, side by side, and when the
//! in-place way is refused (docs/design/swap.md, "The preview"): from
//! every PG's OSDs now, with the old OSDs drained (CRUSH weight 0, no new
//! OSD), and in the final map (the new OSDs at their weight), each CRUSH's
//! answer from the Ceph adapter.
//!
//! Bytes are counted as the drain preview counts them: a PG's bytes once
//! per OSD it gains. The time is at the throughput the cluster was seen to
//! reach (`drain_preview::observed`), none when none was seen.

use crate::domain::copies::{self, Accept, Class};
use crate::domain::drain_preview::{PoolRule, Throughput};

use super::making::Making;
use super::Risk;

/// One PG in the three maps.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub pgid: String,
    pub pool: i64,
    pub bytes: u64,
    /// Its up set now, and where its data is.
    pub now: Vec<u32>,
    pub acting: Vec<u32>,
    /// With the old OSDs at CRUSH weight 0 and no new OSD.
    pub drained: Vec<u32>,
    /// With the old OSDs at 0 and the new ones at their weight.
    pub final_: Vec<u32>,
}

/// What the Ceph adapter reads for the preview (`swap_placements`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SwapPlacements {
    pub pgs: Vec<Placement>,
    pub pools: Vec<PoolRule>,
    /// OSDs down now.
    pub down: Vec<u32>,
    /// The cluster's recovery in bytes per second, when recovery is under way.
    pub recovery_now: Option<f64>,
    /// The final sets were computed (the adapter could place the new OSDs).
    pub final_known: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CostInput {
    pub olds: Vec<u32>,
    pub pgs: Vec<Placement>,
    pub pools: Vec<PoolRule>,
    /// OSDs down now: they hold no usable copy during the window.
    pub down: Vec<u32>,
    pub throughput: Option<Throughput>,
    /// The final sets are known; without them the ways that end in the
    /// final map are not costed.
    pub final_known: bool,
    /// How long the in-place way's new OSDs take to make (`making.rs`).
    pub making: Option<Making>,
}

/// What one way moves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WayCost {
    pub bytes: u64,
    /// PGs that move at all.
    pub pgs: usize,
    /// Of the bytes, those leaving the old OSDs.
    pub off_old_bytes: u64,
    /// Each OSD that receives, with its bytes, most first.
    pub receivers: Vec<(u32, u64)>,
    pub eta_s: Option<f64>,
}

/// A pool's PGs at risk during the in-place window.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRisk {
    pub pool: String,
    pub size: u32,
    pub min_size: u32,
    /// The copies a PG needs to be read: 1 replicated, k erasure-coded.
    pub data_shards: u32,
    pub pgs: usize,
    pub bytes: u64,
}

/// The in-place way: the old OSDs' copies rebuilt once from the others.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InPlaceCost {
    pub bytes: u64,
    /// PGs with a copy fewer until the new OSD has backfilled them.
    pub pgs_degraded: usize,
    /// The backfill at the rate seen.
    pub window_s: Option<f64>,
    /// The new OSDs' making before it, at the pace deployments went; the
    /// time the slot stays empty comes on top of both.
    pub making: Option<Making>,
    /// PGs left with no copy to read (erasure-coded: fewer than k
    /// shards), by pool: the in-place way is refused, whatever the flags.
    pub lost: Vec<PoolRisk>,
    /// PGs left with one copy (erasure-coded: k shards), by pool.
    pub single_copy: Vec<PoolRisk>,
    /// PGs below their pool's min_size (inactive: client I/O stops), by pool.
    pub inactive: Vec<PoolRisk>,
}

/// Every way side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Costs {
    /// The free bay's hand-over: now → final, each copy once (None while
    /// the final map is not known).
    pub swap: Option<WayCost>,
    /// What cephadm does: drain (now → drained), then add (drained → final).
    pub drain_then_add: Option<WayCost>,
    /// No free bay, the id kept: drain, then back onto the same id (drained → now).
    pub drain_first: WayCost,
    pub in_place: InPlaceCost,
    /// The throughput the times are at, and where it was seen.
    pub bytes_per_s: Option<f64>,
    pub basis: String,
}

pub fn costs(input: &CostInput) -> Costs {
    let rate = input.throughput.as_ref().map(|t| t.bytes_per_s).filter(|r| *r > 0.0);
    let eta = |bytes: u64| rate.map(|r| bytes as f64 / r);
    let mut swap = Tally::default();
    let mut drain_then_add = Tally::default();
    let mut drain_first = Tally::default();
    for pg in &input.pgs {
        swap.add(pg, &[(&pg.now, &pg.final_)], &input.olds);
        drain_then_add.add(pg, &[(&pg.now, &pg.drained), (&pg.drained, &pg.final_)], &input.olds);
        drain_first.add(pg, &[(&pg.now, &pg.drained), (&pg.drained, &pg.now)], &input.olds);
    }
    let in_place = in_place(input, eta);
    Costs {
        swap: input.final_known.then(|| swap.cost(eta)),
        drain_then_add: input.final_known.then(|| drain_then_add.cost(eta)),
        drain_first: drain_first.cost(eta),
        in_place,
        bytes_per_s: rate,
        basis: input
            .throughput
            .as_ref()
            .map(|t| t.basis.clone())
            .unwrap_or_else(|| "no recovery under way and no drain watched yet".into()),
    }
}

#[derive(Default)]
struct Tally {
    bytes: u64,
    pgs: usize,
    off_old: u64,
    receivers: Vec<(u32, u64)>,
}

impl Tally {
    /// A PG through these moves, each from one set to the next.
    fn add(&mut self, pg: &Placement, steps: &[(&Vec<u32>, &Vec<u32>)], olds: &[u32]) {
        let mut moved = false;
        for (from, to) in steps {
            for o in to.iter().filter(|o| !from.contains(o)) {
                moved = true;
                self.bytes += pg.bytes;
                match self.receivers.iter_mut().find(|(id, _)| id == o) {
                    Some((_, b)) => *b += pg.bytes,
                    None => self.receivers.push((*o, pg.bytes)),
                }
            }
            let leaving_old = from.iter().filter(|o| olds.contains(o) && !to.contains(o)).count();
            self.off_old += pg.bytes * leaving_old as u64;
        }
        self.pgs += usize::from(moved);
    }

    fn cost(mut self, eta: impl Fn(u64) -> Option<f64>) -> WayCost {
        self.receivers.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        WayCost {
            bytes: self.bytes,
            pgs: self.pgs,
            off_old_bytes: self.off_old,
            receivers: self.receivers,
            eta_s: eta(self.bytes),
        }
    }
}

/// A pool's rule as the count of copies needs it.
fn counted(rule: &PoolRule) -> copies::Pool {
    copies::Pool {
        id: rule.id,
        name: rule.name.clone(),
        size: rule.size,
        min_size: rule.min_size,
        data_shards: rule.data_shards,
        pg_num: 0,
    }
}

/// The in-place way's bytes and degraded PGs (those with a copy on the old
/// OSDs), and every PG of the cluster short of copies once they are gone,
/// by class (`copies.rs`: the rule the gate right before each act holds to).
fn in_place(input: &CostInput, eta: impl Fn(u64) -> Option<f64>) -> InPlaceCost {
    let mut c = InPlaceCost::default();
    let pools: Vec<copies::Pool> = input.pools.iter().map(counted).collect();
    for pg in &input.pgs {
        let on_old = pg.acting.iter().filter(|o| input.olds.contains(o)).count();
        if on_old > 0 {
            c.pgs_degraded += 1;
            c.bytes += pg.bytes * on_old as u64;
        }
        let Some(pool) = pools.iter().find(|p| p.id == pg.pool) else { continue };
        let list = match copies::class(pool, copies::live(&pg.acting, &input.olds, &input.down)) {
            Some(Class::Lost) => &mut c.lost,
            Some(Class::Inactive) => &mut c.inactive,
            Some(Class::SingleCopy) => &mut c.single_copy,
            None => continue,
        };
        match list.iter_mut().find(|r| r.pool == pool.name) {
            Some(r) => {
                r.pgs += 1;
                r.bytes += pg.bytes;
            }
            None => list.push(PoolRisk {
                pool: pool.name.clone(),
                size: pool.size,
                min_size: pool.min_size,
                data_shards: pool.data_shards,
                pgs: 1,
                bytes: pg.bytes,
            }),
        }
    }
    c.window_s = eta(c.bytes);
    c.making = input.making.clone();
    c
}

fn risk_words(r: &PoolRisk, class: Class) -> String {
    let until = match class {
        Class::Lost => "",
        _ => " until the new OSD has backfilled them",
    };
    format!(
        "{} PG{} of {} {}{until}",
        r.pgs,
        if r.pgs == 1 { "" } else { "s" },
        copies::pool_words(&r.pool, r.size, r.min_size, r.data_shards),
        copies::class_words(class, r.data_shards)
    )
}

/// Why the in-place way is refused: a PG left with no copy to read,
/// whatever the flags; else each risk the operator did not accept by
/// name, the flag named.
pub fn in_place_refusals(c: &InPlaceCost, accept: Accept) -> Vec<String> {
    let mut out = Vec::new();
    for r in &c.lost {
        out.push(format!(
            "way: in-place would leave {}; no flag takes that risk: bring back the OSDs holding their other copies, \
             or drain instead",
            risk_words(r, Class::Lost)
        ));
    }
    if !accept.inactive {
        for r in &c.inactive {
            out.push(format!(
                "way: in-place would leave {}; --accept-inactive takes that risk",
                risk_words(r, Class::Inactive)
            ));
        }
    }
    if !accept.single_copy {
        for r in &c.single_copy {
            out.push(format!(
                "way: in-place would leave {}; --accept-single-copy takes that risk",
                risk_words(r, Class::SingleCopy)
            ));
        }
    }
    out
}

/// The risk an accepted in-place swap records.
pub fn risk(c: &InPlaceCost, accept: Accept) -> Risk {
    let mut accepted: Vec<String> = Vec::new();
    if accept.inactive {
        accepted.extend(c.inactive.iter().map(|r| risk_words(r, Class::Inactive)));
    }
    if accept.single_copy {
        accepted.extend(c.single_copy.iter().map(|r| risk_words(r, Class::SingleCopy)));
    }
    Risk {
        pgs_degraded: c.pgs_degraded,
        bytes: c.bytes,
        accepted,
        window_s: c.window_s,
        making_s: c.making.as_ref().map(|m| m.seconds),
        accept_inactive: accept.inactive,
        accept_single_copy: accept.single_copy,
    }
}

#[cfg(test)]
mod tests;
