use super::*;
use crate::domain::drain_preview::EtaSource;

fn pool(size: u32, min_size: u32) -> PoolRule {
    PoolRule {
        id: 1,
        name: "rbd".into(),
        size,
        min_size,
        data_shards: 1,
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
    let p =
        |pgid: &str, now: &[u32], drained: &[u32], fin: &[u32]| placed(pgid, &third(now), &third(drained), &third(fin));
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
    let rbd = PoolRisk { pool: "rbd".into(), size: 2, min_size: 1, data_shards: 1, pgs: 2, bytes: 20 };
    assert_eq!(c.single_copy, [rbd]);
    assert_eq!(
        in_place_refusals(&c, Accept::default()),
        ["way: in-place would leave 2 PGs of pool 'rbd' (size 2, min_size 1) with one copy left until the new \
          OSD has backfilled them; --accept-single-copy takes that risk"]
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
    assert!(refused[0].contains("inactive (below min_size: client I/O") && refused[0].contains("--accept-inactive"));
    assert!(in_place_refusals(&c, Accept { single_copy: false, inactive: true }).is_empty());
    // Size 3: two copies stay, nothing to accept.
    assert!(in_place_refusals(&costs(&input(3, 2)).in_place, Accept::default()).is_empty());
}

/// osd.3 down: 1.0 keeps no copy once osd.8 goes (its only other copy
/// is osd.3's), refused whatever the flags; 1.1 keeps one, and so does
/// 1.2, which osd.8 never held: every PG of the cluster counts.
#[test]
fn in_place_leaving_a_pg_no_copy_is_refused_whatever_the_flags() {
    let mut down = input(2, 1);
    down.down = vec![3];
    let c = costs(&down).in_place;
    assert_eq!((c.lost[0].pgs, c.single_copy[0].pgs, c.inactive.len()), (1, 2, 0), "{c:?}");
    let every = Accept { single_copy: true, inactive: true };
    assert_eq!(
        in_place_refusals(&c, every),
        ["way: in-place would leave 1 PG of pool 'rbd' (size 2, min_size 1) with no copy left; no flag takes \
          that risk: bring back the OSDs holding their other copies, or drain instead"]
    );
    assert!(risk(&c, every).accepted.iter().all(|w| !w.contains("no copy")), "never recorded as accepted");
    // Erasure-coded k=2 m=1 (min_size 2): a shard on osd.8 and one down leave fewer than k.
    let mut ec = input(3, 2);
    ec.pools[0].data_shards = 2;
    ec.down = vec![5];
    let c = costs(&ec).in_place;
    assert_eq!((c.lost[0].pgs, c.lost[0].data_shards), (2, 2), "1.0 and 1.1: {c:?}");
    assert!(in_place_refusals(&c, every)[0].contains(
        "2 PGs of pool 'rbd' (erasure-coded, k=2, size 3, min_size 2) with fewer than k=2 shards left: unreadable;"
    ));
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
