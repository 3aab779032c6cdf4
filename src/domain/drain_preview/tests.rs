use super::fixtures::{crush, pool};
use super::*;

fn pg(n: u32, now: &[u32], after: &[u32], bytes: u64) -> PgPlacement {
    PgPlacement {
        pgid: format!("2.{n:x}"),
        pool: 2,
        up_now: now.to_vec(),
        up_after: after.to_vec(),
        placed_now: now.len(),
        placed_after: after.len(),
        bytes,
    }
}

fn usage(used_gib: &[f64]) -> Vec<OsdUsage> {
    used_gib
        .iter()
        .enumerate()
        .map(|(i, g)| OsdUsage { id: i as u32, kb: 1 << 20, kb_used: (g * (1 << 20) as f64) as u64 })
        .collect()
}

const RATIOS: Ratios = Ratios { nearfull: 0.85, backfillfull: 0.90, full: 0.95 };
const MIB: u64 = 1 << 20;

fn input(osds: &[u32], pgs: Vec<PgPlacement>, used: &[f64]) -> PreviewInput {
    PreviewInput {
        osds: osds.to_vec(),
        pgs,
        pools: vec![pool(2)],
        crush: crush(),
        usage: usage(used),
        ratios: RATIOS,
        ok_to_stop: Verdict::yes(),
        recovery_now: None,
        recent_drains: Vec::new(),
    }
}

#[test]
fn a_pg_moves_when_its_set_of_osds_changes_and_its_bytes_count_once_per_new_copy() {
    let pgs = vec![
        pg(0, &[0, 2], &[1, 2], 10 * MIB),
        pg(1, &[2, 0], &[0, 2], 7 * MIB), // a new primary among the same OSDs copies nothing
        pg(2, &[0, 4], &[3, 5], 4 * MIB), // both copies move (CRUSH may do that)
        pg(3, &[4, 5], &[4, 5], MIB),
    ];
    let p = preview(&input(&[0], pgs, &[0.1; 6]));
    assert_eq!(p.pgs_to_move, 2);
    assert_eq!(p.bytes_to_move, 10 * MIB + 2 * 4 * MIB);
    assert_eq!(p.moves[1].from, [0, 4]);
    assert_eq!(p.moves[1].to, [3, 5]);
    let to: Vec<(u32, u64, u64)> = p.receivers.iter().map(|r| (r.osd, r.bytes_in, r.bytes_out)).collect();
    assert_eq!(to, [(1, 10 * MIB, 0), (3, 4 * MIB, 0), (5, 4 * MIB, 0)]);
    assert!(p.blockers.is_empty(), "{:?}", p.blockers);
    assert_eq!(p.pools[0].pgs_moving, 2);
}

#[test]
fn fullness_after_counts_bytes_in_and_out() {
    // osd.1 gains 100 MiB and loses 50 MiB: +50 MiB on a 1 GiB OSD at 50%.
    let pgs = vec![pg(0, &[0, 2], &[1, 2], 100 * MIB), pg(1, &[1, 4], &[3, 4], 50 * MIB)];
    let p = preview(&input(&[0], pgs, &[0.5; 6]));
    let r = p.receivers.iter().find(|r| r.osd == 1).unwrap();
    assert_eq!(r.fullness_before, Some(0.5));
    let after = r.fullness_after.unwrap();
    assert!((after - (0.5 + 50.0 / 1024.0)).abs() < 1e-9, "{after}");
}

#[test]
fn an_osd_pushed_past_backfillfull_blocks_and_past_nearfull_warns() {
    let pgs = vec![pg(0, &[0, 2], &[1, 2], 60 * MIB), pg(1, &[0, 4], &[3, 4], 60 * MIB)];
    // osd.1 at 85% + 60 MiB = 90.9% (past backfillfull); osd.3 at 80% -> 85.9%.
    let p = preview(&input(&[0], pgs, &[0.5, 0.85, 0.5, 0.80, 0.5, 0.5]));
    assert_eq!(p.blockers.len(), 1, "{:?}", p.blockers);
    assert!(
        p.blockers[0].starts_with("osd.1 would be 90.9% full, past the backfillfull ratio 90.0%"),
        "{:?}",
        p.blockers
    );
    assert_eq!(p.warnings, ["osd.3 would pass the nearfull ratio 85.0% (80.0% -> 85.9%)"]);
}

#[test]
fn removing_two_of_three_hosts_leaves_a_size_2_pool_undersized_and_names_it() {
    let pgs = vec![pg(0, &[0, 4], &[4], MIB), pg(1, &[2, 5], &[5], MIB), pg(2, &[4, 5], &[4], MIB)];
    let p = preview(&input(&[0, 1, 2, 3], pgs, &[0.1; 6]));
    assert_eq!(p.pools[0].domains_left, ["host2"]);
    assert_eq!(p.pools[0].pgs_short, 3);
    assert_eq!(p.blockers.len(), 1, "{:?}", p.blockers);
    assert_eq!(
        p.blockers[0],
        "pool 'sandbox' (size 2): 3 of its 3 PGs would have fewer than 2 copies and stay undersized, so the \
         drain would never end: its rule puts each copy in a different host and only 1 would keep weight (host2)"
    );
}

#[test]
fn a_pg_short_of_a_down_osd_does_not_block() {
    // osd.4 is down: the up sets leave it out, CRUSH still places copies on it.
    let mut on_down = pg(0, &[2, 0], &[0], MIB);
    on_down.placed_after = 2;
    let p = preview(&input(&[2], vec![on_down, pg(1, &[2, 0], &[3, 0], MIB)], &[0.1; 6]));
    assert_eq!((p.pools[0].pgs_short, p.blockers.len()), (0, 0), "{:?}", p.blockers);
    // CRUSH finding no place is the drain's doing.
    let p = preview(&input(&[2], vec![pg(0, &[2, 4], &[4], MIB)], &[0.1; 6]));
    assert_eq!(p.pools[0].pgs_short, 1);
}

#[test]
fn one_host_gone_of_three_still_fits_size_2_but_not_size_3() {
    let crush = crush();
    let zeroed = [0, 1];
    assert_eq!(domains_left(&crush, &pool(2), &zeroed), ["host1", "host2"]);
    let mut p3 = input(&zeroed, vec![pg(0, &[0, 2, 4], &[2, 4], MIB)], &[0.1; 6]);
    p3.pools = vec![pool(3)];
    let p = preview(&p3);
    assert!(p.blockers[0].contains("only 2 would keep weight (host1, host2)"), "{:?}", p.blockers);
}

#[test]
fn failure_domain_osd_and_device_class_are_honoured() {
    let crush = crush();
    let mut by_osd = pool(2);
    by_osd.failure_domain = "osd".into();
    assert_eq!(domains_left(&crush, &by_osd, &[0, 1, 2, 3]), ["osd.4", "osd.5"]);
    let mut ssd = pool(2);
    ssd.device_class = Some("ssd".into());
    assert!(domains_left(&crush, &ssd, &[]).is_empty(), "no ssd OSDs at all");
}

#[test]
fn eta_from_observed_throughput_and_none_without_one() {
    use crate::domain::progress::DrainSample;
    let pgs = vec![pg(0, &[0, 2], &[1, 2], 100 * MIB)];
    let mut i = input(&[0], pgs.clone(), &[0.1; 6]);
    let p = preview(&i);
    assert_eq!((p.eta_s, p.eta_source, p.eta_bytes_per_s), (None, EtaSource::None, None));
    assert_eq!(p.eta_basis, "no recovery under way and no drain watched yet");
    // A drain watched earlier: 20 MiB left its OSD in 4 s.
    let sample = |at, mib| DrainSample { at, pgs: 3, bytes_left: Some(mib * MIB), blocked: None };
    i.recent_drains = vec![DrainTrace { osd: 5, samples: vec![sample(0, 20), sample(4_000, 0)] }];
    let p = preview(&i);
    assert_eq!((p.eta_s, p.eta_source), (Some(20.0), EtaSource::RecentDrains));
    assert!(p.eta_basis.starts_with("the recent drains osdkeeper watched (osd.5), 5.00 MiB/s"), "{}", p.eta_basis);
    // Recovery under way now: its rate wins.
    i.recovery_now = Some(10.0 * MIB as f64);
    let p = preview(&i);
    assert_eq!(
        (p.eta_s, p.eta_source, p.eta_bytes_per_s),
        (Some(10.0), EtaSource::ClusterRecovery, Some(10.0 * MIB as f64))
    );
    let nothing = input(&[0], vec![pg(0, &[2, 4], &[2, 4], MIB)], &[0.1; 6]);
    let p = preview(&nothing);
    assert_eq!((p.eta_s, p.eta_source), (Some(0.0), EtaSource::NothingToMove));
}

#[test]
fn a_receiver_counts_each_pg_it_gains_or_loses_once() {
    // osd.1 gains two PGs and loses one; a set naming an OSD twice counts it once.
    let pgs = vec![
        pg(0, &[0, 2], &[1, 2], 10 * MIB),
        pg(1, &[0, 4], &[1, 4], 20 * MIB),
        pg(2, &[1, 5], &[3, 5], 5 * MIB),
        pg(3, &[0, 0], &[3, 3], MIB),
    ];
    let p = preview(&input(&[0], pgs, &[0.5; 6]));
    let r: Vec<(u32, usize, usize, u64, u64)> =
        p.receivers.iter().map(|r| (r.osd, r.pgs_in, r.pgs_out, r.bytes_in, r.bytes_out)).collect();
    assert_eq!(r, [(1, 2, 1, 30 * MIB, 5 * MIB), (3, 2, 0, 6 * MIB, 0)]);
}

#[test]
fn a_malformed_tree_with_a_cycle_or_an_unknown_child_still_answers() {
    let mut crush = crush();
    // host1 lists itself and an item that does not exist beside its OSDs.
    let host1 = crush.iter_mut().find(|n| n.name == "host1").unwrap();
    host1.children = vec![-3, 2, 3, 99];
    assert_eq!(domains_left(&crush, &pool(2), &[2, 3]), ["host0", "host2"]);
    assert_eq!(domains_left(&crush, &pool(2), &[0]), ["host0", "host1", "host2"]);
}
