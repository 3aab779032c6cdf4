//! Ceph's `pg_upmap_items` as values, as `OSDMap` applies and cleans them
//! (Ceph's `_apply_upmap` and `check_pg_upmaps`, read from its code):
//!
//! * an entry is a list of pairs (from, to) applied in order to the PG's
//!   raw CRUSH set: each replaces `from` where it is in the set, unless
//!   `to` is already there;
//! * on each new map the monitors drop a pair whose `from` is no longer in
//!   the raw set (a no-op), and the entry once no pair is left.
//!
//! The swap builds its entries here and checks them twice before issuing
//! one: on the raw set now, and on the final map's raw set with the pairs
//! the monitors will drop left out (`handover.rs`).

/// An entry applied to a raw set.
pub fn apply(raw: &[u32], pairs: &[(u32, u32)]) -> Vec<u32> {
    let mut set = raw.to_vec();
    for &(from, to) in pairs {
        if set.contains(&to) {
            continue;
        }
        if let Some(slot) = set.iter_mut().find(|o| **o == from) {
            *slot = to;
        }
    }
    set
}

/// The pairs the monitors keep of an entry on a map with this raw set.
pub fn kept(raw: &[u32], pairs: &[(u32, u32)]) -> Vec<(u32, u32)> {
    pairs.iter().filter(|(from, _)| raw.contains(from)).copied().collect()
}

/// Whether removing the entry would leave the PG where it is.
pub fn is_noop(raw: &[u32], pairs: &[(u32, u32)]) -> bool {
    same_osds(&apply(raw, pairs), raw)
}

/// The same OSDs, in whatever order (a new primary among them copies nothing).
pub fn same_osds(a: &[u32], b: &[u32]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// The entry that maps `raw` onto `target`. An erasure-coded pool's
/// shards keep their positions, so its pairs go position by position; a
/// replicated pool's pair the OSDs leaving with the ones arriving, those
/// at the same position together first (the order the final map keeps).
pub fn entry(raw: &[u32], target: &[u32], erasure: bool) -> Vec<(u32, u32)> {
    if erasure {
        return raw.iter().zip(target).filter(|(r, t)| r != t).map(|(r, t)| (*r, *t)).collect();
    }
    let leaving: Vec<u32> = raw.iter().filter(|o| !target.contains(o)).copied().collect();
    let arriving: Vec<u32> = target.iter().filter(|o| !raw.contains(o)).copied().collect();
    let mut pairs = Vec::with_capacity(leaving.len());
    let mut rest_from = Vec::new();
    let mut rest_to = arriving.clone();
    for from in &leaving {
        let at = raw.iter().position(|o| o == from);
        match at.and_then(|i| target.get(i)).filter(|t| rest_to.contains(t)) {
            Some(to) => {
                rest_to.retain(|o| o != to);
                pairs.push((*from, *to));
            }
            None => rest_from.push(*from),
        }
    }
    pairs.extend(rest_from.into_iter().zip(rest_to));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_apply_in_order_and_skip_a_target_already_there() {
        assert_eq!(apply(&[8, 3], &[(8, 20)]), [20, 3]);
        assert_eq!(apply(&[8, 3], &[(8, 3)]), [8, 3], "3 is already in the set");
        assert_eq!(apply(&[8, 3], &[(5, 20)]), [8, 3], "5 is not in the set");
        assert_eq!(apply(&[8, 3, 1], &[(8, 20), (1, 4)]), [20, 3, 4]);
    }

    #[test]
    fn the_monitors_keep_only_pairs_whose_source_is_in_the_raw_set() {
        let pairs = [(8, 20), (3, 4)];
        assert_eq!(kept(&[20, 3], &pairs), [(3, 4)]);
        assert!(kept(&[20, 5], &pairs).is_empty());
        assert!(is_noop(&[20, 5], &[(8, 20)]), "its source left: removing it moves nothing");
        assert!(!is_noop(&[8, 5], &[(8, 20)]));
    }

    #[test]
    fn an_entry_maps_the_raw_set_onto_the_target() {
        // Replicated: the OSD at the same position first.
        assert_eq!(entry(&[8, 3], &[20, 3], false), [(8, 20)]);
        assert_eq!(entry(&[3, 8], &[20, 3], false), [(8, 20)], "order does not matter for a replica");
        assert_eq!(entry(&[8, 15, 3], &[20, 16, 3], false), [(8, 20), (15, 16)]);
        assert_eq!(entry(&[8, 15, 3], &[16, 20, 3], false), [(8, 16), (15, 20)]);
        assert!(entry(&[3, 8], &[8, 3], false).is_empty(), "a new primary is no move");
        // Erasure coded: shard by shard.
        assert_eq!(entry(&[8, 3, 5], &[20, 3, 5], true), [(8, 20)]);
        assert_eq!(
            apply(&[3, 8], &entry(&[3, 8], &[8, 3], true)),
            [3, 8],
            "items cannot swap two shards: the planner's check refuses such an entry"
        );
        for (raw, target) in [(vec![8, 3], vec![20, 3]), (vec![8, 15, 3], vec![16, 20, 3])] {
            assert!(same_osds(&apply(&raw, &entry(&raw, &target, false)), &target));
        }
    }
}
