//! `host drain`, `host drain stop` and `host rm` on the simulated field-report cluster.

use std::sync::Arc;

use super::{rounds_until, sim_daemon};
use crate::config::{Config, FileConfig, Overrides};
use crate::daemon::Daemon;
use crate::daemon::DaemonError;
use crate::store::Store;

#[tokio::test]
async fn a_host_drain_removes_every_osd_of_the_host_and_stops_cleanly() {
    use crate::domain::removal::Phase;
    use crate::wire::api::hosts::HostDrainBody;
    let (_dir, d, sim) = sim_daemon(1.0).await;
    let weight = |id: u32| sim.osds().iter().find(|o| o.id == id).map(|o| o.crush_weight);
    let before = (weight(8), weight(15));
    let body = HostDrainBody { zap_osd_devices: true, ..Default::default() };
    let s = d.removals.drain_host("f5-422-03", &body).await.unwrap();
    assert!(s.no_schedule, "the host is _no_schedule before its removals are queued");
    let mut ids: Vec<u32> = s.removals.iter().map(|r| r.osd_id).collect();
    ids.sort_unstable();
    assert_eq!(ids, [8, 15]);
    assert!(s.removals.iter().all(|r| r.zap));
    // Asked again: nothing is queued twice.
    let again = d.removals.drain_host("f5-422-03", &body).await.unwrap();
    assert_eq!(again.removals.len(), 2);
    // A host with OSDs is not forgotten unless asked.
    let refused = d.inventory.remove_host("f5-422-03", false).await;
    assert!(matches!(&refused, Err(DaemonError::Conflict(m)) if m.contains("osd.8, osd.15")), "{refused:?}");
    rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Draining).await;
    // Stopped in the middle: weights come back and the host is schedulable again.
    let stop = d.removals.stop_host_drain("f5-422-03").await.unwrap();
    assert_eq!((stop.stopped.len(), stop.continuing.len(), stop.no_schedule_removed), (2, 0, true), "{stop:?}");
    rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Cancelled).await;
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Cancelled).await;
    assert_eq!((weight(8), weight(15)), before);
    assert!(!d.removals.host_drain_status("f5-422-03").await.unwrap().no_schedule);
    // Drained to the end: no OSD left there, and then the host may go.
    d.removals.drain_host("f5-422-03", &HostDrainBody::default()).await.unwrap();
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Done).await;
    rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Done).await;
    let s = d.removals.host_drain_status("f5-422-03").await.unwrap();
    assert!(s.osds_in_cluster.is_empty() && s.removals.is_empty(), "{s:?}");
    d.inventory.remove_host("f5-422-03", false).await.unwrap();
}

/// `host drain --fast`: recovery raised while the host drains, put back by
/// `host drain stop`; `--fast` asked again on a host draining without it
/// speeds it up; a daemon started again over the same database (a crash)
/// puts the boost back once the drain ends.
#[tokio::test]
async fn a_fast_host_drain_raises_recovery_until_stopped_or_done_also_across_a_restart() {
    use crate::domain::removal::Phase;
    use crate::wire::api::hosts::HostDrainBody;
    let (dir, d, sim) = sim_daemon(0.5).await;
    let osd_section = |sim: &crate::sim::SimCluster| {
        let mut c: Vec<(String, String)> =
            sim.config().into_iter().filter(|(s, _, _)| s == "osd").map(|(_, n, v)| (n, v)).collect();
        c.sort();
        c
    };
    // Pacific's defaults: 1 backfill, recovery by device class (10 for ssd): twice those, at least 4.
    let boosted = [("osd_max_backfills".to_string(), "4".to_string()), ("osd_recovery_max_active".into(), "20".into())];
    let fast = HostDrainBody { fast: true, ..Default::default() };
    let s = d.removals.drain_host("f5-422-03", &fast).await.unwrap();
    assert!(s.removals.iter().all(|r| r.fast), "{s:?}");
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Draining).await;
    assert_eq!(osd_section(&sim), boosted);
    d.removals.stop_host_drain("f5-422-03").await.unwrap();
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Cancelled).await;
    rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Cancelled).await;
    assert_eq!(osd_section(&sim), [], "nothing was set before the boost: nothing is left");
    assert_eq!(d.store.boost().await.unwrap(), None);

    // Without --fast, then --fast asked again: the running drain speeds up.
    d.removals.drain_host("f5-422-03", &HostDrainBody::default()).await.unwrap();
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Draining).await;
    assert_eq!(osd_section(&sim), [], "not fast yet");
    let s = d.removals.drain_host("f5-422-03", &fast).await.unwrap();
    assert_eq!(s.removals.len(), 2, "nothing queued twice");
    assert!(s.removals.iter().all(|r| r.fast), "{s:?}");
    d.removals.round().await.unwrap();
    assert_eq!(osd_section(&sim), boosted);

    // The daemon goes away mid-drain; another one over its database finishes it.
    drop(d);
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let d = Daemon::new(store, Arc::new(sim.clone()), Arc::new(sim.clone()), config);
    rounds_until(&d, &sim, 8, |r| r.state.phase == Phase::Done).await;
    rounds_until(&d, &sim, 15, |r| r.state.phase == Phase::Done).await;
    assert_eq!(osd_section(&sim), []);
    assert_eq!(d.store.boost().await.unwrap(), None);
}

/// A host's OSDs begin draining in one round even when `ok-to-stop` times
/// out: one begun alone would first send the others some of its PGs.
#[tokio::test]
async fn a_host_whose_ok_to_stop_times_out_begins_its_drains_together_later() {
    use crate::domain::removal::Phase;
    use crate::wire::api::hosts::HostDrainBody;
    let (_dir, d, sim) = sim_daemon(1.0).await;
    d.removals.drain_host("f5-422-03", &HostDrainBody::default()).await.unwrap();
    sim.time_out_ok_to_stop(2);
    let mut phases_seen = Vec::new();
    for _ in 0..10 {
        d.removals.round().await.unwrap();
        let all = d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap();
        let mut phases: Vec<(u32, Phase)> = all.iter().map(|r| (r.state.osd_id, r.state.phase)).collect();
        phases.sort_unstable_by_key(|(id, _)| *id);
        phases_seen.push(phases.clone());
        if phases.iter().all(|(_, p)| *p != Phase::Queued) {
            break;
        }
    }
    assert_eq!(phases_seen[0], [(8, Phase::Queued), (15, Phase::Queued)], "{phases_seen:?}");
    let last = phases_seen.last().unwrap();
    assert_eq!(last, &[(8, Phase::Draining), (15, Phase::Draining)], "{phases_seen:?}");
    assert!(
        phases_seen.iter().all(|p| p.iter().all(|(_, ph)| *ph == Phase::Queued) || p == last),
        "never one of the host's OSDs draining while the other waits: {phases_seen:?}"
    );
}
