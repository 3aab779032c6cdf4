//! How full each OSD that receives data ends up, against the cluster's
//! `nearfull`, `backfillfull` and `full` ratios (`ceph osd dump`).
//! Backfill onto an OSD past backfillfull stops (`backfill_toofull`), so
//! a drain that needs it never ends: that blocks; nearfull only warns.

use std::collections::HashMap;

use super::moves::PgMove;

/// An OSD's size and use (`ceph osd df`).
#[derive(Debug, Clone, PartialEq)]
pub struct OsdUsage {
    pub id: u32,
    pub kb: u64,
    pub kb_used: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratios {
    pub nearfull: f64,
    pub backfillfull: f64,
    pub full: f64,
}

/// An OSD that gains placement groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Receiver {
    pub osd: u32,
    pub pgs_in: usize,
    pub pgs_out: usize,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Used over size, 0..1; None when Ceph reports no size for it.
    pub fullness_before: Option<f64>,
    pub fullness_after: Option<f64>,
}

pub fn receivers(removed: &[u32], moves: &[PgMove], usage: &[OsdUsage]) -> Vec<Receiver> {
    // What each OSD gains and loses, in one pass over the moves: a pass per
    // receiving OSD, and a scan of the usage for each, were quadratic on a
    // cluster of thousands of OSDs. An OSD listed twice in a set counts once.
    let mut gained: HashMap<u32, (usize, u64)> = HashMap::new();
    let mut lost: HashMap<u32, (usize, u64)> = HashMap::new();
    for m in moves {
        for (side, osds) in [(&mut gained, &m.to), (&mut lost, &m.from)] {
            for (i, osd) in osds.iter().enumerate() {
                if !osds[..i].contains(osd) {
                    let e = side.entry(*osd).or_default();
                    e.0 += 1;
                    e.1 += m.bytes;
                }
            }
        }
    }
    let mut sizes: HashMap<u32, &OsdUsage> = HashMap::with_capacity(usage.len());
    for u in usage {
        sizes.entry(u.id).or_insert(u);
    }
    let mut ids: Vec<u32> = gained.keys().copied().filter(|o| !removed.contains(o)).collect();
    ids.sort_unstable();
    ids.into_iter()
        .map(|osd| {
            let (pgs_in, bytes_in) = gained[&osd];
            let (pgs_out, bytes_out) = lost.get(&osd).copied().unwrap_or_default();
            let u = sizes.get(&osd).filter(|u| u.kb > 0);
            let before = u.map(|u| u.kb_used as f64 / u.kb as f64);
            let after = u.map(|u| {
                let used = u.kb_used as f64 * 1024.0 + bytes_in as f64 - bytes_out as f64;
                used.max(0.0) / (u.kb as f64 * 1024.0)
            });
            Receiver { osd, pgs_in, pgs_out, bytes_in, bytes_out, fullness_before: before, fullness_after: after }
        })
        .collect()
}

pub(super) enum Level {
    Fine,
    Nearfull(String),
    Blocks(String),
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

pub(super) fn verdict(r: &Receiver, ratios: &Ratios) -> Level {
    let Some(after) = r.fullness_after else { return Level::Fine };
    let before = r.fullness_before.unwrap_or(0.0);
    if after >= ratios.full {
        Level::Blocks(format!(
            "osd.{} would be {} full, past the full ratio {}: writes to its PGs would stop",
            r.osd,
            pct(after),
            pct(ratios.full)
        ))
    } else if after >= ratios.backfillfull {
        Level::Blocks(format!(
            "osd.{} would be {} full, past the backfillfull ratio {}: backfill onto it stops \
             (backfill_toofull) and the drain would not finish",
            r.osd,
            pct(after),
            pct(ratios.backfillfull)
        ))
    } else if after >= ratios.nearfull && before < ratios.nearfull {
        Level::Nearfull(format!(
            "osd.{} would pass the nearfull ratio {} ({} -> {})",
            r.osd,
            pct(ratios.nearfull),
            pct(before),
            pct(after)
        ))
    } else {
        Level::Fine
    }
}
