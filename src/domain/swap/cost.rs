//! What each way of changing disks costs, side by side, and when the
//! in-place way is refused (docs/design/swap.md, "The preview"): from
//! every PG's OSDs now, with the old OSDs drained (CRUSH weight 0, no new
//! OSD), and in the final map (the new OSDs at their weight), each CRUSH's
//! answer from the Ceph adapter.
//!
//! Bytes are counted as the drain preview counts them: a PG's bytes once
//! per OSD it gains. The time is at the throughput the cluster was seen to
//! reach (`drain_preview::observed`), none when none was seen.

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
    /// PGs left with one copy, by pool.
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

/// The risks the operator accepts for the in-place way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accept {
    pub single_copy: bool,
    pub inactive: bool,
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

fn in_place(input: &CostInput, eta: impl Fn(u64) -> Option<f64>) -> InPlaceCost {
    let mut c = InPlaceCost::default();
    for pg in &input.pgs {
        let on_old = pg.acting.iter().filter(|o| input.olds.contains(o)).count();
        if on_old == 0 {
            continue;
        }
        c.pgs_degraded += 1;
        c.bytes += pg.bytes * on_old as u64;
        let Some(pool) = input.pools.iter().find(|p| p.id == pg.pool) else { continue };
        let left = pg.acting.iter().filter(|o| !input.olds.contains(o) && !input.down.contains(o)).count() as u32;
        let list = if left < pool.min_size {
            &mut c.inactive
        } else if left <= 1 {
            &mut c.single_copy
        } else {
            continue;
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
                pgs: 1,
                bytes: pg.bytes,
            }),
        }
    }
    c.window_s = eta(c.bytes);
    c.making = input.making.clone();
    c
}

fn risk_words(r: &PoolRisk, what: &str) -> String {
    format!(
        "{} PG{} of pool '{}' (size {}, min_size {}) {what}",
        r.pgs,
        if r.pgs == 1 { "" } else { "s" },
        r.pool,
        r.size,
        r.min_size
    )
}

const SINGLE: &str = "with one copy until the new OSD has backfilled them";
const INACTIVE: &str = "inactive (client I/O to them stops) until the new OSD has backfilled them";

/// Why the in-place way is refused, unless the operator accepts each risk
/// by name; the field and the flag are named.
pub fn in_place_refusals(c: &InPlaceCost, accept: Accept) -> Vec<String> {
    let mut out = Vec::new();
    if !accept.inactive {
        for r in &c.inactive {
            out.push(format!(
                "way: in-place would leave {}; --accept-inactive takes that risk",
                risk_words(r, INACTIVE)
            ));
        }
    }
    if !accept.single_copy {
        for r in &c.single_copy {
            out.push(format!(
                "way: in-place would leave {}; --accept-single-copy takes that risk",
                risk_words(r, SINGLE)
            ));
        }
    }
    out
}

/// The risk an accepted in-place swap records.
pub fn risk(c: &InPlaceCost, accept: Accept) -> Risk {
    let mut accepted: Vec<String> = Vec::new();
    if accept.inactive {
        accepted.extend(c.inactive.iter().map(|r| risk_words(r, INACTIVE)));
    }
    if accept.single_copy {
        accepted.extend(c.single_copy.iter().map(|r| risk_words(r, SINGLE)));
    }
    Risk {
        pgs_degraded: c.pgs_degraded,
        bytes: c.bytes,
        accepted,
        window_s: c.window_s,
        making_s: c.making.as_ref().map(|m| m.seconds),
        accept_inactive: accept.inactive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::drain_preview::EtaSource;

    fn pool(size: u32, min_size: u32) -> PoolRule {
        PoolRule {
            id: 1,
            name: "rbd".into(),
            size,
            min_size,
            root: None,
            device_class: None,
            failure_domain: "host".into(),
        }
    }

    fn placed(pgid: &str, now: &[u32], drained: &[u32], fin: &[u32]) -> Placement {
        Placement {
            pgid: pgid.into(),
            pool: 1,
            bytes: 10,
            now: now.to_vec(),
            acting: now.to_vec(),
            drained: drained.to_vec(),
            final_: fin.to_vec(),
        }
    }

    /// Osd.8 leaves host A (sibling 15), the new osd.20 arrives there; 3, 4
    /// elsewhere; a size-3 pool has a third copy on 5 throughout.
    fn input(size: u32, min_size: u32) -> CostInput {
        let third = |set: &[u32]| -> Vec<u32> {
            let mut v = set.to_vec();
            if size == 3 {
                v.push(5);
            }
            v
        };
        let p = |pgid: &str, now: &[u32], drained: &[u32], fin: &[u32]| {
            placed(pgid, &third(now), &third(drained), &third(fin))
        };
        CostInput {
            olds: vec![8],
            pgs: vec![
                // Its drain sends it off the host, the new OSD brings it back.
                p("1.0", &[8, 3], &[4, 3], &[20, 3]),
                p("1.1", &[8, 4], &[15, 4], &[15, 4]),
                p("1.2", &[15, 3], &[15, 3], &[20, 3]),
                p("1.3", &[15, 4], &[15, 4], &[15, 4]),
            ],
            pools: vec![pool(size, min_size)],
            down: vec![],
            final_known: true,
            making: None,
            throughput: Some(Throughput {
                bytes_per_s: 5.0,
                source: EtaSource::ClusterRecovery,
                basis: "the cluster's recovery rate right now (ceph status)".into(),
            }),
        }
    }

    #[test]
    fn each_way_side_by_side_the_swap_moving_each_copy_once() {
        let c = costs(&input(3, 2));
        let (swap, then_add) = (c.swap.unwrap(), c.drain_then_add.unwrap());
        assert_eq!((swap.bytes, swap.pgs, swap.off_old_bytes), (30, 3, 20));
        assert_eq!(swap.receivers, [(20, 20), (15, 10)]);
        assert_eq!(swap.eta_s, Some(6.0));
        // Drain: 1.0 to 4, 1.1 to 15; add: 1.0 back to 20, 1.2 to 20.
        assert_eq!((then_add.bytes, then_add.pgs), (40, 3));
        assert!(then_add.bytes > swap.bytes, "1.0 went out and came back");
        // Drain first, same id back in the slot: out and back.
        assert_eq!(c.drain_first.bytes, 40);
        assert_eq!((c.in_place.bytes, c.in_place.pgs_degraded, c.in_place.window_s), (20, 2, Some(4.0)));
        assert_eq!(c.basis, "the cluster's recovery rate right now (ceph status)");
    }

    #[test]
    fn in_place_on_a_size_two_pool_leaves_one_copy_and_is_refused_unless_accepted() {
        let c = costs(&input(2, 1)).in_place;
        assert!(c.inactive.is_empty());
        assert_eq!(c.single_copy, [PoolRisk { pool: "rbd".into(), size: 2, min_size: 1, pgs: 2, bytes: 20 }]);
        assert_eq!(
            in_place_refusals(&c, Accept::default()),
            ["way: in-place would leave 2 PGs of pool 'rbd' (size 2, min_size 1) with one copy until the new OSD \
              has backfilled them; --accept-single-copy takes that risk"]
        );
        let accept = Accept { single_copy: true, inactive: false };
        assert!(in_place_refusals(&c, accept).is_empty());
        let r = risk(&c, accept);
        assert_eq!((r.pgs_degraded, r.bytes, r.accepted.len(), r.making_s), (2, 20, 1, None));
    }

    #[test]
    fn the_making_goes_with_the_in_place_way_and_its_risk() {
        let mut i = input(2, 1);
        i.making = Some(Making { seconds: 41.0, basis: "41 s an OSD, as the last deployment on a went".into() });
        let c = costs(&i).in_place;
        assert_eq!((c.window_s, c.making.as_ref().map(|m| m.seconds)), (Some(4.0), Some(41.0)));
        let r = risk(&c, Accept { single_copy: true, inactive: false });
        assert_eq!((r.window_s, r.making_s), (Some(4.0), Some(41.0)));
    }

    #[test]
    fn in_place_below_min_size_is_inactive_and_needs_its_own_acceptance() {
        let c = costs(&input(2, 2)).in_place;
        assert_eq!(c.inactive.len(), 1);
        let refused = in_place_refusals(&c, Accept { single_copy: true, inactive: false });
        assert_eq!(refused.len(), 1);
        assert!(refused[0].contains("inactive (client I/O to them stops)") && refused[0].contains("--accept-inactive"));
        assert!(in_place_refusals(&c, Accept { single_copy: false, inactive: true }).is_empty());
        // Size 3: two copies stay, nothing to accept.
        assert!(in_place_refusals(&costs(&input(3, 2)).in_place, Accept::default()).is_empty());
        // A copy down elsewhere counts against it: 1.0 keeps only 3's, which is down.
        let mut down = input(2, 1);
        down.down = vec![3];
        let c = costs(&down).in_place;
        assert_eq!((c.inactive[0].pgs, c.single_copy[0].pgs), (1, 1), "{c:?}");
    }

    #[test]
    fn without_an_observed_rate_there_is_no_time() {
        let mut i = input(3, 2);
        i.throughput = None;
        let c = costs(&i);
        assert_eq!((c.swap.unwrap().eta_s, c.in_place.window_s, c.bytes_per_s), (None, None, None));
        assert_eq!(c.basis, "no recovery under way and no drain watched yet");
        i.final_known = false;
        let c = costs(&i);
        assert!(c.swap.is_none() && c.drain_then_add.is_none() && c.drain_first.bytes == 40);
    }
}
