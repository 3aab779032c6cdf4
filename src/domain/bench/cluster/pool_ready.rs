//! Whether a benchmark's pool is ready for its write pass: every PG of
//! the pool listed, active and clean, and none degraded in the cluster.
//! A pass started before that measures the pool's PGs being created and
//! peered (`rados bench` waits for them inside its seconds), and on a
//! loaded cluster may outlast its bound.

/// Why the pool is not ready yet; None once it is. `states` are the
/// pool's PGs' states (`pg ls-by-pool`), `pg_num` what the pool has,
/// `unhealthy` the cluster's degraded or undersized PGs by state.
pub fn pool_not_ready(states: &[String], pg_num: u32, unhealthy: &[(String, i64)]) -> Option<String> {
    let mut why = Vec::new();
    if states.len() < pg_num as usize {
        why.push(format!("{} of its {pg_num} PGs listed", states.len()));
    }
    let mut waiting: Vec<(&str, usize)> = Vec::new();
    for s in states.iter().filter(|s| !active_and_clean(s)) {
        match waiting.iter_mut().find(|(name, _)| *name == s.as_str()) {
            Some((_, n)) => *n += 1,
            None => waiting.push((s, 1)),
        }
    }
    why.extend(waiting.iter().map(|(s, n)| format!("{n} {s}")));
    why.extend(unhealthy.iter().map(|(s, n)| format!("{n} {s} in the cluster")));
    (!why.is_empty()).then(|| why.join(", "))
}

/// `active+clean`, with or without flags that do not hold writes back
/// (`scrubbing`, `deep`, `snaptrim`, ...), but nothing that says the PG
/// is still being made or found.
fn active_and_clean(state: &str) -> bool {
    let parts: Vec<&str> = state.split('+').collect();
    parts.contains(&"active")
        && parts.contains(&"clean")
        && !parts.iter().any(|p| matches!(*p, "creating" | "peering" | "activating" | "unknown" | "stale" | "down"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_pool_whose_pgs_are_all_active_and_clean_is_ready() {
        assert_eq!(pool_not_ready(&states(&["active+clean"; 4]), 4, &[]), None);
        let scrubbing = states(&["active+clean", "active+clean+scrubbing+deep"]);
        assert_eq!(pool_not_ready(&scrubbing, 2, &[]), None, "a scrub does not hold writes back");
    }

    #[test]
    fn a_pool_just_made_waits_for_its_pgs_to_be_listed_created_and_peered() {
        assert_eq!(pool_not_ready(&[], 8, &[]).as_deref(), Some("0 of its 8 PGs listed"));
        let made = states(&["creating+peering", "peering", "peering", "active+clean"]);
        assert_eq!(pool_not_ready(&made, 4, &[]).as_deref(), Some("1 creating+peering, 2 peering"));
        let unknown = states(&["unknown", "active+clean"]);
        assert_eq!(pool_not_ready(&unknown, 2, &[]).as_deref(), Some("1 unknown"));
        assert_eq!(pool_not_ready(&states(&["active"]), 1, &[]).as_deref(), Some("1 active"), "not clean yet");
    }

    #[test]
    fn degraded_pgs_elsewhere_in_the_cluster_hold_it_back_too() {
        let unhealthy = vec![("active+undersized+degraded".to_string(), 3)];
        assert_eq!(
            pool_not_ready(&states(&["active+clean"]), 1, &unhealthy).as_deref(),
            Some("3 active+undersized+degraded in the cluster")
        );
    }
}
