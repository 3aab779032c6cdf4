//! The part of CRUSH the preview reasons about itself: how many failure
//! domains of a pool's rule keep any weight once the drained OSDs are at
//! 0. Placement itself is CRUSH's (the adapter runs Ceph's osdmaptool);
//! this only explains why a pool cannot place all its copies.

use std::collections::{HashMap, HashSet};

/// A node of `ceph osd tree`: a bucket (host, rack, root...) or an OSD (id >= 0).
#[derive(Debug, Clone, PartialEq)]
pub struct CrushItem {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub children: Vec<i64>,
    pub crush_weight: Option<f64>,
    pub device_class: Option<String>,
}

/// A pool and what its CRUSH rule asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolRule {
    pub id: i64,
    pub name: String,
    pub size: u32,
    pub min_size: u32,
    /// The copies a PG needs to be read: 1 replicated, k erasure-coded
    /// (its profile's).
    pub data_shards: u32,
    /// The rule's `take` bucket, without a `~class` suffix; None when it has none.
    pub root: Option<String>,
    /// From `take ROOT~CLASS`.
    pub device_class: Option<String>,
    /// The type one copy goes to per bucket (`chooseleaf ... type host`), `osd` for none.
    pub failure_domain: String,
}

/// Names of the pool's failure domains that still hold weight once the
/// `zeroed` OSDs are at CRUSH weight 0.
pub fn domains_left(crush: &[CrushItem], rule: &PoolRule, zeroed: &[u32]) -> Vec<String> {
    // Children are looked up by id once each: through an index, since a
    // scan per child was quadratic in the tree (seconds per call at 2000
    // hosts, called per queued drain by the pacing). The first item of an
    // id wins, as a scan would have found it.
    let mut index: HashMap<i64, &CrushItem> = HashMap::with_capacity(crush.len());
    for n in crush {
        index.entry(n.id).or_insert(n);
    }
    let by_id = |id: i64| index.get(&id).copied();
    let roots: Vec<&CrushItem> = match &rule.root {
        Some(name) => crush.iter().filter(|n| &n.name == name).collect(),
        None => crush.iter().filter(|n| n.kind == "root").collect(),
    };
    let weighted_osd = |n: &CrushItem| {
        n.id >= 0
            && !zeroed.contains(&(n.id as u32))
            && n.crush_weight.unwrap_or(0.0) > 0.0
            && rule.device_class.as_ref().is_none_or(|c| n.device_class.as_ref() == Some(c))
    };
    // Depth-first over the hierarchy; `seen` guards against a malformed tree.
    let mut seen = HashSet::new();
    let mut domains = Vec::new();
    let mut stack: Vec<&CrushItem> = roots;
    while let Some(n) = stack.pop() {
        if !seen.insert(n.id) {
            continue;
        }
        let is_domain = n.kind == rule.failure_domain || (rule.failure_domain == "osd" && n.id >= 0);
        if is_domain {
            if has_weight(crush, n, &weighted_osd, &by_id) {
                domains.push(n.name.clone());
            }
            continue;
        }
        stack.extend(n.children.iter().filter_map(|c| by_id(*c)));
    }
    domains.sort();
    domains.dedup();
    domains
}

fn has_weight<'a>(
    crush: &'a [CrushItem],
    n: &'a CrushItem,
    weighted_osd: &dyn Fn(&CrushItem) -> bool,
    by_id: &dyn Fn(i64) -> Option<&'a CrushItem>,
) -> bool {
    let mut stack = vec![n];
    let mut visited = 0usize;
    while let Some(n) = stack.pop() {
        visited += 1;
        if visited > crush.len() {
            return false;
        }
        if n.id >= 0 {
            if weighted_osd(n) {
                return true;
            }
            continue;
        }
        stack.extend(n.children.iter().filter_map(|c| by_id(*c)));
    }
    false
}
