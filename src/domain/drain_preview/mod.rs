//! What removing a set of OSDs will do, decided before anything changes:
//! which placement groups move and where (CRUSH's own answer, computed by
//! the Ceph adapter on a copy of the osdmap with the drained OSDs at CRUSH
//! weight 0), how full each receiving OSD ends up against the cluster's
//! ratios, which pools cannot place all their copies any more and why, and
//! how long the move takes at the throughput the cluster was seen to reach
//! (`throughput.rs`: its recovery now, else the recent drains; which one
//! the answer says).
//!
//! `preview` reads values and returns a value; `osd rm` refuses a removal
//! whose preview has blockers unless told to ignore them.

mod crush;
#[cfg(test)]
pub(crate) mod fixtures;
mod fullness;
mod moves;
mod pools;
#[cfg(test)]
mod tests;
mod throughput;

pub use crush::{domains_left, CrushItem, PoolRule};
pub use fullness::{OsdUsage, Ratios, Receiver};
pub use moves::{PgMove, PgPlacement};
pub use pools::PoolImpact;
pub use throughput::{observed, DrainTrace, EtaSource, Throughput};

use super::cluster::Verdict;

/// Everything the preview reads, gathered by the Ceph adapter in one go.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewInput {
    /// The OSDs to remove together.
    pub osds: Vec<u32>,
    /// Every PG with its up set now and after the drain's weights.
    pub pgs: Vec<PgPlacement>,
    pub pools: Vec<PoolRule>,
    /// The CRUSH hierarchy (`osd tree`), weights as they are now.
    pub crush: Vec<CrushItem>,
    pub usage: Vec<OsdUsage>,
    pub ratios: Ratios,
    /// `ok-to-stop` for the OSDs, asked now.
    pub ok_to_stop: Verdict,
    /// The cluster's recovery in bytes per second (`ceph status`), when
    /// recovery is under way.
    pub recovery_now: Option<f64>,
    /// The drains osdkeeper watched lately, with their samples.
    pub recent_drains: Vec<DrainTrace>,
}

/// The answer. `blockers` empty means the removal can finish.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub osds: Vec<u32>,
    pub pgs_to_move: usize,
    /// Bytes written to new places: a PG's bytes once per OSD it gains.
    pub bytes_to_move: u64,
    /// None when no recovery throughput was observed: no guess is made.
    pub eta_s: Option<f64>,
    /// What the ETA was computed from, and the throughput it used.
    pub eta_source: EtaSource,
    pub eta_bytes_per_s: Option<f64>,
    /// The same in words, with where the throughput was observed.
    pub eta_basis: String,
    pub moves: Vec<PgMove>,
    pub receivers: Vec<Receiver>,
    pub pools: Vec<PoolImpact>,
    pub blockers: Vec<String>,
    /// Worth knowing, not a reason to refuse (an OSD passing nearfull).
    pub warnings: Vec<String>,
    pub ok_to_stop: Verdict,
    pub ratios: Ratios,
}

pub fn preview(input: &PreviewInput) -> Preview {
    let moves = moves::moves(&input.pgs);
    let bytes_to_move = moves.iter().map(|m| m.bytes * m.to.len() as u64).sum();
    let receivers = fullness::receivers(&input.osds, &moves, &input.usage);
    let pools = pools::impact(input);
    let mut blockers: Vec<String> = pools.iter().filter_map(PoolImpact::blocker).collect();
    let mut warnings = Vec::new();
    for r in &receivers {
        match fullness::verdict(r, &input.ratios) {
            fullness::Level::Fine => {}
            fullness::Level::Nearfull(text) => warnings.push(text),
            fullness::Level::Blocks(text) => blockers.push(text),
        }
    }
    let (eta_s, eta_source, eta_bytes_per_s, eta_basis) =
        eta(bytes_to_move, observed(input.recovery_now, &input.recent_drains));
    Preview {
        osds: input.osds.clone(),
        pgs_to_move: moves.len(),
        bytes_to_move,
        eta_s,
        eta_source,
        eta_bytes_per_s,
        eta_basis,
        moves,
        receivers,
        pools,
        blockers,
        warnings,
        ok_to_stop: input.ok_to_stop.clone(),
        ratios: input.ratios,
    }
}

/// Seconds at the observed throughput; nothing to move takes no time, and
/// without an observation there is no estimate.
fn eta(bytes: u64, throughput: Option<Throughput>) -> (Option<f64>, EtaSource, Option<f64>, String) {
    if bytes == 0 {
        return (Some(0.0), EtaSource::NothingToMove, None, "nothing to move".into());
    }
    match throughput {
        Some(t) => (Some(bytes as f64 / t.bytes_per_s), t.source, Some(t.bytes_per_s), t.basis),
        None => (None, EtaSource::None, None, "no recovery under way and no drain watched yet".into()),
    }
}
