//! `osd rm --fast` on the simulated cluster: the recovery boost set while
//! the drain runs, put back after, and after a crash.

use super::*;

/// `--fast`: the recovery settings are raised while the drain runs and put
/// back (a value set before comes back, one that was not is removed) when
/// it ends; a boost a crash left behind is put back with no removal left.
#[tokio::test]
async fn a_fast_drain_raises_recovery_and_puts_it_back() {
    use crate::ceph::CephCluster;
    use crate::domain::removal::Phase;
    let (_dir, d, sim) = sim_daemon(0.5).await;
    sim.config_set("osd", "osd_recovery_max_active", "3").await.unwrap();
    let osd_section = |sim: &crate::sim::SimCluster| {
        let mut c: Vec<(String, String)> =
            sim.config().into_iter().filter(|(s, _, _)| s == "osd").map(|(_, n, v)| (n, v)).collect();
        c.sort();
        c
    };
    let req = removal::RemoveRequest { ids: vec![8], fast: true, ..Default::default() };
    d.removals.schedule_removals(&req).await.unwrap();
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Draining).await;
    let boosted = [("osd_max_backfills".to_string(), "4".to_string()), ("osd_recovery_max_active".into(), "8".into())];
    assert_eq!(osd_section(&sim), boosted, "twice what the OSDs ran with, at least 4 and 8");
    assert!(d.store.boost().await.unwrap().is_some_and(|b| b.applied));
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Done).await;
    assert_eq!(osd_section(&sim), [("osd_recovery_max_active".to_string(), "3".to_string())]);
    assert_eq!(d.store.boost().await.unwrap(), None);
    let kinds: Vec<EventKind> = d.store.events(None, 200).await.unwrap().into_iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::RecoveryBoosted) && kinds.contains(&EventKind::RecoveryRestored));

    // A crash between storing the boost and setting it, the drain gone since.
    let mut left = crate::domain::removal::boost::plan(&sim.recovery_config(0).await.unwrap());
    left.applied = false;
    d.store.save_boost(&left, 0).await.unwrap();
    sim.config_set("osd", "osd_max_backfills", "4").await.unwrap();
    d.removals.round().await.unwrap();
    assert_eq!(d.store.boost().await.unwrap(), None);
    assert_eq!(osd_section(&sim), [("osd_recovery_max_active".to_string(), "3".to_string())]);
}
