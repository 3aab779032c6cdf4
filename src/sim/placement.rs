//! The simulated cluster's removal preview: one pool `rbd` of size 2, one
//! copy per host (per OSD on a single host), its PGs placed by weighted rendezvous hashing (what
//! CRUSH's straw2 buckets do), first a host, then an OSD in it; 4 MiB per
//! PG, 1 TiB per OSD. Coherent with the simulator (zeroing an OSD moves
//! only its PGs), not a model of any real cluster. The same pool and tree
//! feed the drain pacing, and a draining OSD's PGs its progress.

use std::collections::{BTreeMap, HashMap};

use super::cluster::{SimOsd, SimState};
use crate::domain::cluster::Verdict;
use crate::domain::drain_preview::{CrushItem, OsdUsage, PgPlacement, PoolRule, PreviewInput, Ratios};
use crate::domain::removal::{PacingFacts, PgOnOsd};

pub(super) const POOL: i64 = 1;
pub(super) const PG_BYTES: u64 = 4 << 20;
const OSD_KB: u64 = 1 << 30;

pub(super) fn preview_input(s: &SimState, ids: &[u32], ok_to_stop: Verdict) -> PreviewInput {
    let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let weight_now = |o: &SimOsd| if o.is_in { o.crush_weight } else { 0.0 };
    let weight_after = |o: &SimOsd| if ids.contains(&o.id) { 0.0 } else { weight_now(o) };
    let pg_num = pg_num(&live);
    let (now, after) = (weighted(&live, weight_now), weighted(&live, weight_after));
    let pgs = (0..pg_num)
        .map(|n| {
            let (up_now, up_after) = (place(&now, n), place(&after, n));
            // The simulator's OSDs are never down while in: CRUSH's sets are the up sets.
            let (placed_now, placed_after) = (up_now.len(), up_after.len());
            PgPlacement {
                pgid: format!("{POOL}.{n:x}"),
                pool: POOL,
                up_now,
                up_after,
                placed_now,
                placed_after,
                bytes: PG_BYTES,
            }
        })
        .collect();
    let (pools, crush) = topology(&live);
    PreviewInput {
        osds: ids.to_vec(),
        pgs,
        pools,
        crush,
        usage: live
            .iter()
            .map(|o| OsdUsage { id: o.id, kb: OSD_KB, kb_used: (o.pgs.ceil() as u64) * (PG_BYTES / 1024) })
            .collect(),
        ratios: Ratios { nearfull: 0.85, backfillfull: 0.90, full: 0.95 },
        ok_to_stop,
        recovery_now: None,
        recent_drains: Vec::new(),
    }
}

/// The pool's PG count: the OSDs' PGs at two copies each.
pub(super) fn pg_num(live: &[&SimOsd]) -> u32 {
    ((live.iter().map(|o| o.pgs).sum::<f64>() / 2.0).round() as u32).clamp(1, 1024)
}

/// The pool and the CRUSH tree: a root over the hosts over their OSDs.
pub(super) fn topology(live: &[&SimOsd]) -> (Vec<PoolRule>, Vec<CrushItem>) {
    let mut hosts: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for o in live {
        hosts.entry(o.host.as_str()).or_default().push(i64::from(o.id));
    }
    let mut crush = vec![CrushItem {
        id: -1,
        name: "default".into(),
        kind: "root".into(),
        children: (0..hosts.len() as i64).map(|i| -2 - i).collect(),
        crush_weight: None,
        device_class: None,
    }];
    for (i, (h, osds)) in hosts.iter().enumerate() {
        crush.push(CrushItem {
            id: -2 - i as i64,
            name: h.to_string(),
            kind: "host".into(),
            children: osds.clone(),
            crush_weight: None,
            device_class: None,
        });
    }
    crush.extend(live.iter().map(|o| CrushItem {
        id: i64::from(o.id),
        name: format!("osd.{}", o.id),
        kind: "osd".into(),
        children: vec![],
        crush_weight: Some(o.crush_weight),
        device_class: Some(o.device_class.clone()),
    }));
    let pool = PoolRule {
        id: POOL,
        name: "rbd".into(),
        size: 2,
        min_size: 1,
        data_shards: 1,
        root: Some("default".into()),
        device_class: None,
        failure_domain: if hosts.len() < 2 { "osd" } else { "host" }.into(),
    };
    (vec![pool], crush)
}

/// What the pacing weighs; the simulator's OSDs take one backfill each.
pub(super) fn pacing_facts(s: &SimState) -> PacingFacts {
    let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let (pools, crush) = topology(&live);
    PacingFacts { max_backfills: 1, pools, crush }
}

/// The PGs an OSD holds, 4 MiB each; a draining OSD's are remapped away
/// from it, the one it is moving part way there (the fraction of a PG the
/// simulator keeps).
pub(super) fn pgs_on_osd(s: &SimState, id: u32) -> Vec<PgOnOsd> {
    let Some(o) = s.osds.iter().find(|o| o.id == id) else { return Vec::new() };
    let draining = o.crush_weight == 0.0 || !o.is_in;
    let objects = PG_BYTES / 4096;
    let whole = o.pgs.floor() as u64;
    let part = o.pgs - o.pgs.floor();
    let pg = |n: u64, misplaced: u64| PgOnOsd {
        pgid: format!("{POOL}.{n:x}"),
        state: if draining { "active+remapped+backfilling" } else { "active+clean" }.into(),
        up: if draining { vec![] } else { vec![id] },
        acting: vec![id],
        bytes: PG_BYTES,
        objects,
        misplaced: if draining { misplaced } else { 0 },
    };
    let mut out: Vec<PgOnOsd> = (0..whole).map(|n| pg(n, objects)).collect();
    if part > 0.0 {
        out.push(pg(whole, (part * objects as f64).round() as u64));
    }
    out
}

/// The OSDs `place` draws from under one set of weights, grouped once per
/// preview: ranking the hosts for each PG by scanning every OSD for its
/// host took minutes at 2000 hosts.
pub(super) struct Weighted {
    /// Hosts holding weight, in the order their first weighted OSD comes
    /// (the order ties keep), with their weighted OSDs.
    hosts: Vec<WeightedHost>,
    /// Every weighted OSD, for a cluster of one host.
    all: Vec<(u32, f64)>,
}

struct WeightedHost {
    /// The host's item in the draws: its name's hash, kept apart from OSD ids.
    item: u64,
    weight: f64,
    osds: Vec<(u32, f64)>,
}

pub(super) fn weighted(osds: &[&SimOsd], weight: impl Fn(&SimOsd) -> f64) -> Weighted {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut hosts: Vec<WeightedHost> = Vec::new();
    let mut all = Vec::new();
    for o in osds {
        let w = weight(o);
        if w.is_nan() || w <= 0.0 {
            continue;
        }
        all.push((o.id, w));
        let i = *at.entry(o.host.as_str()).or_insert_with(|| {
            hosts.push(WeightedHost { item: fnv(o.host.as_bytes()) | 1 << 63, weight: 0.0, osds: Vec::new() });
            hosts.len() - 1
        });
        hosts[i].weight += w;
        hosts[i].osds.push((o.id, w));
    }
    Weighted { hosts, all }
}

/// Two copies: on two hosts by the highest weighted draw, then on the
/// OSD of each host with the highest draw; on one host, two of its OSDs.
pub(super) fn place(w: &Weighted, pg: u32) -> Vec<u32> {
    let best_osds = |osds: &[(u32, f64)], n: usize| {
        best(osds.iter().map(|&(id, weight)| (draw(key(pg, u64::from(id)), weight), id)), n)
    };
    if w.hosts.len() < 2 {
        return best_osds(&w.all, 2);
    }
    best(w.hosts.iter().map(|h| (draw(key(pg, h.item), h.weight), h)), 2)
        .into_iter()
        .flat_map(|h| best_osds(&h.osds, 1))
        .collect()
}

/// The `n` items of highest score, highest first; of equal scores the
/// earlier first (what a stable sort by score, then the first `n`, gives).
fn best<T>(items: impl Iterator<Item = (f64, T)>, n: usize) -> Vec<T> {
    let mut top: Vec<(f64, T)> = Vec::with_capacity(n + 1);
    for (score, item) in items {
        let at = top.iter().position(|(s, _)| score.total_cmp(s).is_gt()).unwrap_or(top.len());
        if at < n {
            top.insert(at, (score, item));
            top.truncate(n);
        }
    }
    top.into_iter().map(|(_, item)| item).collect()
}

/// FNV-1a of the PG number and the item, both as 8 little-endian bytes.
fn key(pg: u32, item: u64) -> u64 {
    fnv_on(fnv_on(FNV_OFFSET, &u64::from(pg).to_le_bytes()), &item.to_le_bytes())
}

const FNV_OFFSET: u64 = 0xcbf29ce484222325;

fn fnv(bytes: &[u8]) -> u64 {
    fnv_on(FNV_OFFSET, bytes)
}

fn fnv_on(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

/// straw2's draw: ln(u) / w for a uniform u in (0, 1] from the hash.
fn draw(hash: u64, w: f64) -> f64 {
    let u = ((hash >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    u.ln() / w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(hosts: usize) -> crate::sim::SimCluster {
        crate::sim::generated_cluster(hosts, 10, 120.0, 1.0, 1.0).manual_clock()
    }

    fn input(sim: &crate::sim::SimCluster, ids: &[u32]) -> PreviewInput {
        preview_input(&sim.inner.lock().unwrap(), ids, Verdict::yes())
    }

    #[test]
    fn each_pg_is_on_two_hosts_and_zeroing_an_osd_moves_data_only_off_its_host() {
        let sim = cluster(40);
        let osds = sim.osds();
        let host_of = |id: &u32| osds.iter().find(|o| o.id == *id).map(|o| o.host.clone()).unwrap();
        let drained = osds.iter().find(|o| o.host == "sim-0003").unwrap().clone();
        let input = input(&sim, &[drained.id]);
        assert_eq!(input.pgs.len(), 1024);
        for pg in &input.pgs {
            for set in [&pg.up_now, &pg.up_after] {
                assert_eq!(set.len(), 2, "{pg:?}");
                assert_ne!(host_of(&set[0]), host_of(&set[1]), "{pg:?}");
            }
            assert!(!pg.up_after.contains(&drained.id), "{pg:?}");
            if pg.up_now.iter().all(|o| host_of(o) != drained.host) {
                assert_eq!(pg.up_now, pg.up_after, "only PGs on the drained host move");
            }
        }
        assert!(input.pgs.iter().any(|pg| pg.up_now.contains(&drained.id)));
        let mut holding: Vec<String> = input.pgs.iter().flat_map(|pg| pg.up_now.iter().map(host_of)).collect();
        holding.sort();
        holding.dedup();
        assert_eq!(holding.len(), 40, "every host holds PGs");
    }

    /// The rule said as plainly as it can be: every weighted host ranked
    /// by its draw, the first two, and in each the OSD of highest draw.
    fn placed_plainly(osds: &[SimOsd], pg: u32, weight: &dyn Fn(&SimOsd) -> f64) -> Vec<u32> {
        let weighted: Vec<&SimOsd> = osds.iter().filter(|o| weight(o) > 0.0).collect();
        let mut hosts: Vec<&str> = weighted.iter().map(|o| o.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let on = |h: &str| -> Vec<&SimOsd> { weighted.iter().copied().filter(|o| o.host == h).collect() };
        let mut ranked: Vec<(f64, &str)> = hosts
            .iter()
            .map(|h| (draw(key(pg, fnv(h.as_bytes()) | 1 << 63), on(h).into_iter().map(weight).sum::<f64>()), *h))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let osd_draw = |o: &SimOsd| draw(key(pg, u64::from(o.id)), weight(o));
        ranked[..2]
            .iter()
            .map(|(_, h)| on(h).into_iter().max_by(|a, b| osd_draw(a).total_cmp(&osd_draw(b))).unwrap().id)
            .collect()
    }

    #[test]
    fn placement_is_the_plain_ranking_of_every_host_then_of_its_osds() {
        let sim = cluster(30);
        // One OSD out, to weigh 0 now as well.
        sim.inner.lock().unwrap().osds[7].is_in = false;
        let osds = sim.osds();
        let ids = [osds[0].id, osds[20].id, osds[21].id];
        let input = input(&sim, &ids);
        let now = |o: &SimOsd| if o.is_in { o.crush_weight } else { 0.0 };
        let after = |o: &SimOsd| if ids.contains(&o.id) { 0.0 } else { now(o) };
        for (n, pg) in input.pgs.iter().enumerate() {
            assert_eq!(pg.up_now, placed_plainly(&osds, n as u32, &now), "{pg:?}");
            assert_eq!(pg.up_after, placed_plainly(&osds, n as u32, &after), "{pg:?}");
        }
    }

    #[test]
    fn on_one_host_both_copies_go_to_two_of_its_osds() {
        let sim = cluster(1);
        let input = input(&sim, &[]);
        assert_eq!(input.pools[0].failure_domain, "osd");
        assert!(input.pgs.iter().all(|pg| pg.up_now.len() == 2 && pg.up_now[0] != pg.up_now[1]), "{:?}", input.pgs);
    }

    #[test]
    fn best_takes_the_highest_scores_and_keeps_the_earlier_of_equal_ones() {
        let items = || [(1.0, 'a'), (2.0, 'b'), (2.0, 'c'), (0.5, 'd')].into_iter();
        assert_eq!(best(items(), 2), ['b', 'c']);
        assert_eq!(best(items(), 1), ['b']);
        assert_eq!(best(items(), 9), ['b', 'c', 'a', 'd']);
        assert!(best(std::iter::empty::<(f64, char)>(), 2).is_empty());
    }
}
