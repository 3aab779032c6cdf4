//! The simulated cluster's removal preview: one pool `rbd` of size 2, one
//! copy per host (per OSD on a single host), its PGs placed by weighted rendezvous hashing (what
//! CRUSH's straw2 buckets do), first a host, then an OSD in it; 4 MiB per
//! PG, 1 TiB per OSD. Coherent with the simulator (zeroing an OSD moves
//! only its PGs), not a model of any real cluster. The same pool and tree
//! feed the drain pacing, and a draining OSD's PGs its progress.

use super::cluster::{SimOsd, SimState};
use crate::domain::cluster::Verdict;
use crate::domain::drain_preview::{CrushItem, OsdUsage, PgPlacement, PoolRule, PreviewInput, Ratios};
use crate::domain::removal::{PacingFacts, PgOnOsd};

const POOL: i64 = 1;
pub(super) const PG_BYTES: u64 = 4 << 20;
const OSD_KB: u64 = 1 << 30;

pub(super) fn preview_input(s: &SimState, ids: &[u32], ok_to_stop: Verdict) -> PreviewInput {
    let live: Vec<&SimOsd> = s.osds.iter().filter(|o| !o.destroyed).collect();
    let weight_now = |o: &SimOsd| if o.is_in { o.crush_weight } else { 0.0 };
    let weight_after = |o: &SimOsd| if ids.contains(&o.id) { 0.0 } else { weight_now(o) };
    let pg_num = ((live.iter().map(|o| o.pgs).sum::<f64>() / 2.0).round() as u32).clamp(1, 1024);
    let pgs = (0..pg_num)
        .map(|n| {
            let (up_now, up_after) = (place(&live, n, &weight_now), place(&live, n, &weight_after));
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

/// The pool and the CRUSH tree: a root over the hosts over their OSDs.
fn topology(live: &[&SimOsd]) -> (Vec<PoolRule>, Vec<CrushItem>) {
    let mut hosts: Vec<&str> = live.iter().map(|o| o.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut crush = vec![CrushItem {
        id: -1,
        name: "default".into(),
        kind: "root".into(),
        children: (0..hosts.len() as i64).map(|i| -2 - i).collect(),
        crush_weight: None,
        device_class: None,
    }];
    for (i, h) in hosts.iter().enumerate() {
        crush.push(CrushItem {
            id: -2 - i as i64,
            name: h.to_string(),
            kind: "host".into(),
            children: live.iter().filter(|o| o.host == *h).map(|o| i64::from(o.id)).collect(),
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

/// Two copies: on two hosts by the highest weighted draw, then on the
/// OSD of each host with the highest draw; on one host, two of its OSDs.
fn place(osds: &[&SimOsd], pg: u32, weight: &dyn Fn(&SimOsd) -> f64) -> Vec<u32> {
    let mut hosts: Vec<(&str, f64)> = Vec::new();
    for o in osds.iter().filter(|o| weight(o) > 0.0) {
        match hosts.iter_mut().find(|(h, _)| *h == o.host) {
            Some((_, w)) => *w += weight(o),
            None => hosts.push((&o.host, weight(o))),
        }
    }
    let best_osds = |host: Option<&str>, n: usize| {
        let mut ranked: Vec<(f64, u32)> = osds
            .iter()
            .filter(|o| host.is_none_or(|h| o.host == h) && weight(o) > 0.0)
            .map(|o| (draw(key(pg, u64::from(o.id)), weight(o)), o.id))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        ranked.into_iter().take(n).map(|(_, id)| id).collect::<Vec<u32>>()
    };
    if hosts.len() < 2 {
        return best_osds(None, 2);
    }
    let mut ranked: Vec<(f64, &str)> =
        hosts.iter().map(|(h, w)| (draw(key(pg, fnv(h.as_bytes()) | 1 << 63), *w), *h)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    ranked.iter().take(2).flat_map(|(_, h)| best_osds(Some(h), 1)).collect()
}

fn key(pg: u32, item: u64) -> u64 {
    fnv(&[u64::from(pg).to_le_bytes(), item.to_le_bytes()].concat())
}

fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
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
