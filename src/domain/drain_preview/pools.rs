//! Per pool: how many of its PGs move, how many would be left with fewer
//! copies than the pool's size, and why (failure domains left vs size).

use super::crush::{domains_left, PoolRule};
use super::PreviewInput;

#[derive(Debug, Clone, PartialEq)]
pub struct PoolImpact {
    pub pool: i64,
    pub name: String,
    pub size: u32,
    pub min_size: u32,
    pub failure_domain: String,
    /// Failure domains with weight left after the drain.
    pub domains_left: Vec<String>,
    pub pgs: usize,
    pub pgs_moving: usize,
    /// PGs CRUSH places on fewer OSDs than `size` afterwards, and on fewer
    /// than now (down OSDs counted as places).
    pub pgs_short: usize,
    /// Of those, the ones below `min_size`: they would stop serving I/O.
    pub pgs_below_min: usize,
}

impl PoolImpact {
    /// A plain reason when the pool cannot be fully placed afterwards.
    pub fn blocker(&self) -> Option<String> {
        let left = self.domains_left.len();
        if self.pgs_short == 0 && left >= self.size as usize {
            return None;
        }
        let why = if left < self.size as usize {
            let names = if self.domains_left.is_empty() { "none".into() } else { self.domains_left.join(", ") };
            format!(
                "its rule puts each copy in a different {} and only {left} would keep weight ({names})",
                self.failure_domain
            )
        } else {
            format!("CRUSH finds no place for them although {left} {}s keep weight", self.failure_domain)
        };
        let stop = if self.pgs_below_min > 0 {
            format!("; {} would be below min_size {} and stop serving I/O", self.pgs_below_min, self.min_size)
        } else {
            String::new()
        };
        Some(format!(
            "pool '{}' (size {}): {} of its {} PGs would have fewer than {} copies and stay undersized, \
             so the drain would never end: {why}{stop}",
            self.name, self.size, self.pgs_short, self.pgs, self.size
        ))
    }
}

pub(super) fn impact(input: &PreviewInput) -> Vec<PoolImpact> {
    input
        .pools
        .iter()
        .map(|rule: &PoolRule| {
            let pgs: Vec<_> = input.pgs.iter().filter(|p| p.pool == rule.id).collect();
            // Short by the drain's doing: CRUSH places fewer copies than `n`
            // afterwards, and fewer than now. Counted on CRUSH's own sets, down
            // OSDs included: an OSD down for a while leaves its PGs' up sets
            // short now and after, which is not the removal's doing (or no
            // removal could be made while any OSD is down).
            let short = |n: usize| pgs.iter().filter(|p| p.placed_after < n && p.placed_after < p.placed_now).count();
            PoolImpact {
                pool: rule.id,
                name: rule.name.clone(),
                size: rule.size,
                min_size: rule.min_size,
                failure_domain: rule.failure_domain.clone(),
                domains_left: domains_left(&input.crush, rule, &input.osds),
                pgs: pgs.len(),
                pgs_moving: pgs.iter().filter(|p| !same_osds(&p.up_now, &p.up_after)).count(),
                pgs_short: short(rule.size as usize),
                pgs_below_min: short(rule.min_size as usize),
            }
        })
        .collect()
}

fn same_osds(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().all(|o| b.contains(o))
}
