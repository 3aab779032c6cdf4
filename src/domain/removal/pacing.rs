//! When a new drain may start: not while `max_draining` OSDs drain already,
//! and not while the cluster has placement groups in a state that another
//! drain would make worse.

use super::Verdict;
use crate::domain::cluster::ClusterState;

pub fn may_start_drain(draining: usize, max_draining: usize, cluster: &ClusterState) -> Verdict {
    if draining >= max_draining {
        return Verdict::no(format!("{draining} OSDs are draining (limit {max_draining})"));
    }
    let unhealthy = cluster.unhealthy_pgs();
    if !unhealthy.is_empty() {
        let what: Vec<String> = unhealthy.iter().map(|(s, n)| format!("{n} {s}")).collect();
        return Verdict::no(format!("the cluster has unhealthy placement groups: {}", what.join(", ")));
    }
    Verdict::yes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_comes_first_then_health() {
        let sick = ClusterState { pg_states: vec![("active+undersized+degraded".into(), 4)], ..Default::default() };
        assert_eq!(may_start_drain(10, 10, &sick).message, "10 OSDs are draining (limit 10)");
        let v = may_start_drain(1, 10, &sick);
        assert!(!v.ok);
        assert_eq!(v.message, "the cluster has unhealthy placement groups: 4 active+undersized+degraded");
        let healthy = ClusterState { pg_states: vec![("active+clean".into(), 64)], ..Default::default() };
        assert!(may_start_drain(9, 10, &healthy).ok);
    }
}
