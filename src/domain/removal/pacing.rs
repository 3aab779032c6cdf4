//! When a new drain may start, by the cluster's health rather than a fixed
//! count alone (cephadm drains 10 at a time, a number chosen without data):
//!
//! 1. not while any PG is degraded, undersized or inactive, or held by a
//!    full OSD: another drain would move data away from copies that are
//!    needed where they are;
//! 2. not beyond `removal.max_draining` drains, the operator's own cap;
//! 3. an OSD whose host is draining already joins it at once: data leaves
//!    the host in one move, instead of the first drain filling the host's
//!    other OSDs with PGs the next drain moves again;
//! 4. not while the PGs backfilling or waiting to backfill reach what the
//!    OSDs can run at once: each backfill holds a reservation on the OSDs
//!    it writes to, at most `osd_max_backfills` per OSD, so that many per
//!    OSD that can receive data is the cluster's concurrency; beyond it a
//!    new drain only lengthens the queue (and adds degraded windows);
//! 5. not on a second host when both drains together would leave a pool
//!    with fewer failure domains holding weight than copies: its PGs would
//!    stay undersized until one of them ends.
//!
//! The reasons are the cluster's terms ("12 PGs in backfill_wait", "3 PGs
//! degraded"); `advance` shows them as "waiting: ...".

use super::Verdict;
use crate::domain::cluster::{same_host, ClusterState};
use crate::domain::drain_preview::{domains_left, CrushItem, PoolRule};

/// What the pacing reads beyond the round's cluster state, when a drain
/// could start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PacingFacts {
    /// `osd_max_backfills` as the OSDs run with it (`ceph config show`).
    pub max_backfills: u32,
    pub pools: Vec<PoolRule>,
    /// The CRUSH hierarchy with its weights now (`osd tree`).
    pub crush: Vec<CrushItem>,
}

/// A drain under way, or about to start.
#[derive(Debug, Clone, PartialEq)]
pub struct Drain {
    pub osd: u32,
    pub host: String,
}

/// Whether `candidate` may begin draining now: `queued` are the removals
/// waiting to drain (the candidate among them), `draining` the drains under
/// way (those begun earlier in this round included).
pub fn may_start_drain(
    candidate: &Drain,
    queued: &[Drain],
    draining: &[Drain],
    max_draining: usize,
    cluster: &ClusterState,
    facts: &PacingFacts,
) -> Verdict {
    if let Some(why) = unhealthy(cluster) {
        return Verdict::no(why);
    }
    if draining.len() >= max_draining {
        let n = draining.len();
        let (osds, are) = if n == 1 { ("OSD", "is") } else { ("OSDs", "are") };
        return Verdict::no(format!("{n} {osds} {are} draining (limit {max_draining})"));
    }
    // The host's drains are one: its queued OSDs count as draining with it.
    let group: Vec<u32> = queued.iter().filter(|d| same_host(&d.host, &candidate.host)).map(|d| d.osd).collect();
    if let Some(why) = failure_domains_short(candidate, &group, draining, facts) {
        return Verdict::no(why);
    }
    if draining.iter().any(|d| same_host(&d.host, &candidate.host)) {
        return Verdict::yes();
    }
    if let Some(why) = backfill_queue_full(cluster, facts) {
        return Verdict::no(why);
    }
    Verdict::yes()
}

fn has_flag(state: &str, flag: &str) -> bool {
    state.split('+').any(|s| s == flag)
}

/// PGs counted by a test of their state.
fn count(cluster: &ClusterState, test: impl Fn(&str) -> bool) -> i64 {
    cluster.pg_states.iter().filter(|(s, _)| test(s)).map(|(_, n)| n).sum()
}

fn pgs(n: i64) -> String {
    format!("{n} PG{}", if n == 1 { "" } else { "s" })
}

/// "3 PGs degraded, 3 PGs undersized", as `ceph health` counts them: why
/// no new move of data may start now (a swap's hand-over waits on it too).
pub fn unhealthy(cluster: &ClusterState) -> Option<String> {
    let mut parts = Vec::new();
    for flag in ["degraded", "undersized", "backfill_toofull", "recovery_toofull"] {
        let n = count(cluster, |s| has_flag(s, flag));
        if n > 0 {
            parts.push(format!("{} {flag}", pgs(n)));
        }
    }
    let inactive = count(cluster, |s| !has_flag(s, "active"));
    if inactive > 0 {
        parts.push(format!("{} inactive", pgs(inactive)));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn backfill_queue_full(cluster: &ClusterState, facts: &PacingFacts) -> Option<String> {
    let receivers = cluster
        .osds
        .iter()
        .filter(|o| o.up && o.is_in && !o.destroyed && o.crush_weight.is_some_and(|w| w > 0.0))
        .count() as i64;
    let limit = i64::from(facts.max_backfills) * receivers;
    let waiting = count(cluster, |s| has_flag(s, "backfill_wait"));
    let running = count(cluster, |s| has_flag(s, "backfilling"));
    if waiting + running < limit.max(1) {
        return None;
    }
    let mut what = Vec::new();
    if waiting > 0 {
        what.push(format!("{} in backfill_wait", pgs(waiting)));
    }
    if running > 0 {
        what.push(format!("{} backfilling", pgs(running)));
    }
    Some(format!(
        "{} (a new drain starts below {limit}: osd_max_backfills {} × {receivers} OSDs taking data)",
        what.join(", "),
        facts.max_backfills
    ))
}

/// The first pool that draining the candidate's host (`group`: its OSDs
/// queued for removal) beside another host's drain would leave with fewer
/// failure domains holding weight than copies.
fn failure_domains_short(candidate: &Drain, group: &[u32], draining: &[Drain], facts: &PacingFacts) -> Option<String> {
    let others: Vec<&Drain> = draining.iter().filter(|d| !same_host(&d.host, &candidate.host)).collect();
    if others.is_empty() {
        return None;
    }
    let without: Vec<u32> = draining.iter().map(|d| d.osd).collect();
    let with: Vec<u32> = without.iter().chain(group).chain([&candidate.osd]).copied().collect();
    facts.pools.iter().find_map(|pool| {
        let left = domains_left(&facts.crush, pool, &with);
        let before = domains_left(&facts.crush, pool, &without);
        if left.len() >= pool.size as usize || left.len() >= before.len() {
            return None;
        }
        let mut hosts: Vec<&str> = others.iter().map(|d| d.host.as_str()).collect();
        hosts.sort_unstable();
        hosts.dedup();
        Some(format!(
            "{} would drain while {} drains: pool '{}' (size {}) would keep {} {}{} with weight ({})",
            candidate.host,
            hosts.join(", "),
            pool.name,
            pool.size,
            left.len(),
            pool.failure_domain,
            if left.len() == 1 { "" } else { "s" },
            if left.is_empty() { "none".into() } else { left.join(", ") }
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::cluster::OsdState;
    use crate::domain::drain_preview::fixtures::{crush, pool};

    const HOSTS: [&str; 3] = ["host0", "host1", "host2"];

    /// The sandbox's layout (three hosts of two OSDs, a size-2 pool with
    /// one copy per host) and PGs in these states.
    fn sandbox(states: &[(&str, i64)]) -> (ClusterState, PacingFacts) {
        let osds = (0..6)
            .map(|id| OsdState {
                id,
                up: true,
                is_in: true,
                destroyed: false,
                noout: false,
                crush_weight: Some(1.0),
                pgs: Some(22),
                kb_used: None,
                crush_host: Some(HOSTS[id as usize / 2].into()),
                device_class: Some("hdd".into()),
                uuid: None,
            })
            .collect();
        let cluster = ClusterState {
            osds,
            pg_states: states.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
            ..Default::default()
        };
        (cluster, PacingFacts { max_backfills: 4, pools: vec![pool(2)], crush: crush() })
    }

    fn drain(osd: u32) -> Drain {
        Drain { osd, host: HOSTS[osd as usize / 2].into() }
    }

    #[test]
    fn sick_pgs_hold_every_new_drain_in_the_clusters_words() {
        let (c, f) = sandbox(&[("active+undersized+degraded", 3), ("active+clean", 61)]);
        assert_eq!(
            may_start_drain(&drain(1), &[drain(1)], &[], 10, &c, &f).message,
            "3 PGs degraded, 3 PGs undersized"
        );
        assert_eq!(
            may_start_drain(&drain(1), &[drain(1)], &[drain(0)], 10, &c, &f).message,
            "3 PGs degraded, 3 PGs undersized",
            "not even a drain of the same host"
        );
        let (c, _) = sandbox(&[("peering", 1), ("active+remapped+backfill_toofull", 2)]);
        assert_eq!(
            may_start_drain(&drain(1), &[drain(1)], &[], 10, &c, &f).message,
            "2 PGs backfill_toofull, 1 PG inactive"
        );
        let (c, _) = sandbox(&[("active+clean", 64)]);
        assert!(may_start_drain(&drain(1), &[drain(1)], &[], 10, &c, &f).ok);
    }

    #[test]
    fn the_backfill_queue_is_held_to_what_the_osds_can_reserve() {
        // osd_max_backfills 4 on the six OSDs: 24 at once.
        let (c, f) = sandbox(&[("active+remapped+backfill_wait", 12), ("active+remapped+backfilling", 12)]);
        let v = may_start_drain(&drain(3), &[drain(3)], &[drain(1)], 10, &c, &f);
        assert_eq!(
            v.message,
            "12 PGs in backfill_wait, 12 PGs backfilling (a new drain starts below 24: osd_max_backfills 4 × 6 OSDs \
             taking data)"
        );
        // One fewer: a drain may start.
        let (c, f) = sandbox(&[("active+remapped+backfill_wait", 11), ("active+remapped+backfilling", 12)]);
        assert!(may_start_drain(&drain(4), &[drain(4)], &[], 10, &c, &f).ok);
        // A drained OSD takes no data: 5 OSDs, 20 at once.
        let (mut c, f) = sandbox(&[("active+remapped+backfill_wait", 8), ("active+remapped+backfilling", 12)]);
        c.osds[1].crush_weight = Some(0.0);
        assert!(!may_start_drain(&drain(4), &[drain(4)], &[drain(1)], 10, &c, &f).ok);
    }

    #[test]
    fn an_osd_of_a_draining_host_joins_it_whatever_the_queue() {
        let (c, f) = sandbox(&[("active+remapped+backfill_wait", 30)]);
        assert!(may_start_drain(&drain(1), &[drain(1)], &[drain(0)], 10, &c, &f).ok);
        assert!(!may_start_drain(&drain(2), &[drain(2)], &[drain(0)], 10, &c, &f).ok, "another host waits");
        assert_eq!(
            may_start_drain(&drain(1), &[drain(1)], &[drain(0)], 1, &c, &f).message,
            "1 OSD is draining (limit 1)"
        );
    }

    #[test]
    fn a_second_host_waits_when_a_pool_would_run_out_of_hosts() {
        let (mut c, mut f) = sandbox(&[("active+clean", 64)]);
        // Host host0 is draining: its OSDs are at weight 0.
        for id in [0, 1] {
            c.osds[id].crush_weight = Some(0.0);
            f.crush.iter_mut().find(|n| n.id == id as i64).unwrap().crush_weight = Some(0.0);
        }
        let draining = [drain(0), drain(1)];
        // Both OSDs of host1 queued: the host would go, not just osd.2.
        let v = may_start_drain(&drain(2), &[drain(2), drain(3)], &draining, 10, &c, &f);
        assert_eq!(
            v.message,
            "host1 would drain while host0 drains: pool 'sandbox' (size 2) would keep 1 host with weight (host2)"
        );
        assert!(!may_start_drain(&drain(3), &[drain(2), drain(3)], &draining, 10, &c, &f).ok, "nor the other one");
        // One OSD of the host keeps it in the pool.
        assert!(may_start_drain(&drain(2), &[drain(2)], &draining, 10, &c, &f).ok);
        // Once osd.2 drains, osd.3 does not join it while host0 drains.
        let mut three = draining.to_vec();
        three.push(drain(2));
        f.crush.iter_mut().find(|n| n.id == 2).unwrap().crush_weight = Some(0.0);
        assert!(!may_start_drain(&drain(3), &[drain(3)], &three, 10, &c, &f).ok);
        // With a size-1 pool one host is enough.
        f.pools[0].size = 1;
        assert!(may_start_drain(&drain(3), &[drain(3)], &three, 10, &c, &f).ok);
        // Alone, the drain is the preview's business (it was refused or forced there).
        f.pools[0].size = 3;
        assert!(may_start_drain(&drain(3), &[drain(3)], &[drain(2)], 10, &c, &f).ok);
    }
}
