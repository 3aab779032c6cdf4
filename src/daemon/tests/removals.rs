//! A removal's whole life on the simulated field-report cluster: drain,
//! purge, zap and hold; the worker's pace; `rm stop`; `--replace`.

use super::*;

#[tokio::test]
async fn removal_drains_purges_zaps_and_holds_the_disk() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let req = removal::RemoveRequest { ids: vec![8, 15], zap: true, ..Default::default() };
    let recs = d.removals.schedule_removals(&req).await.unwrap();
    assert_eq!(recs[0].state.host, "f5-422-03");
    assert_eq!(recs[0].state.devices, ["/dev/sdd"]);
    let rec = rounds_until(&d, &sim, 15, |r| r.state.phase == crate::domain::removal::Phase::Done).await;
    assert_eq!(rec.state.zapped, ["/dev/sde"]);
    assert!(sim.osds().iter().all(|o| o.id != 15), "purged");
    let actions = d.store.actions(rec.id).await.unwrap();
    let purges = actions.iter().filter(|a| a.effect.contains("purge")).count();
    let zaps = actions.iter().filter(|a| a.effect == "zap").count();
    let lv_zaps = actions.iter().filter(|a| a.effect == "zap-lvs").count();
    assert_eq!((purges, lv_zaps, zaps), (1, 1, 1), "{actions:?}");
    assert!(rec.state.lvs_zapped && rec.state.lvm_fsid.is_some(), "{:?}", rec.state);
    let samples = d.store.samples(rec.id).await.unwrap();
    assert!(samples.first().unwrap().pgs > samples.last().unwrap().pgs, "progress was sampled: {samples:?}");
    // Each sample read the PGs still on the OSD: the bytes left fall with them, to none.
    let bytes: Vec<i64> = samples.iter().map(|s| s.bytes_left.expect("bytes read")).collect();
    assert!(bytes.windows(2).all(|w| w[1] <= w[0]) && bytes[0] > 0, "{samples:?}");
    assert_eq!((samples.last().unwrap().pgs, bytes.last()), (0, Some(&0)), "{samples:?}");
    let holds = d.store.holds().await.unwrap();
    assert!(holds.iter().any(|h| h.host == "f5-422-03" && h.path == "/dev/sde"), "{holds:?}");
    let events: Vec<String> = d.store.events(None, 200).await.unwrap().into_iter().map(|e| e.message).collect();
    assert!(events.iter().any(|e| e == "Successfully purged osd.15 on f5-422-03"), "{events:?}");
    assert!(events.iter().any(|e| e == "Zapping devices for osd.15 on f5-422-03"), "{events:?}");
    assert!(events.iter().any(|e| e.starts_with("Zapping the LVs of osd.15 (fsid ")), "{events:?}");
}

// The worker acts on each gate in the round it opens: after each action
// but the drain's it reads the cluster again and goes on (the simulator
// shows every effect at once), so the drain's end, the stop, the purge and
// the zap take one round. It looks again soon only while the last PGs
// leave, not during the drain.
#[tokio::test]
async fn the_removal_worker_acts_on_each_gate_in_the_round_it_opens_and_drains_at_its_interval() {
    use crate::daemon::Pace;
    use crate::domain::removal::{cadence, Phase};
    let (_dir, d, sim) = sim_daemon(1.0).await;
    d.removals
        .schedule_removals(&removal::RemoveRequest { ids: vec![15], zap: true, ..Default::default() })
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut id = 0;
    for _ in 0..2000 {
        let pace = d.removals.round().await.unwrap();
        let rec = d
            .store
            .ops::<crate::store::RemovalCodec>()
            .with_finished(50)
            .await
            .unwrap()
            .into_iter()
            .rfind(|r| r.state.osd_id == 15)
            .unwrap();
        id = rec.id;
        seen.push((rec.state.phase, rec.state.pgs_now, pace));
        if rec.state.phase == Phase::Done {
            break;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    assert_eq!(seen.last().unwrap().0, Phase::Done, "{seen:?}");
    assert!(
        matches!(seen[0], (Phase::Draining, Some(n), p) if n > 8 && p == Pace::Within(cadence::AFTER_ACTION)),
        "the reweight ends its round (the drain's end is far), looked at again soon: {seen:?}"
    );
    let before_end = &seen[seen.len() - 2];
    assert!(
        before_end.0 == Phase::Draining && before_end.1.is_some_and(|n| n > 0),
        "from PGs still on the OSD to done in one round: {seen:?}"
    );
    let actions = d.store.actions(id).await.unwrap();
    let effects: Vec<&str> = actions
        .iter()
        .map(|a| <crate::store::RemovalCodec as crate::store::Codec>::decode_effect(&a.args).unwrap().name())
        .collect();
    // An LVM OSD: its LVs by its fsid, then its own disk wiped at both ends.
    assert_eq!(effects, ["reweight", "stop-daemon", "purge", "zap-lvs", "zap"], "{actions:?}");
    assert!(actions.iter().all(|a| a.succeeded()), "{actions:?}");
    assert!(
        seen.iter().any(|(p, pgs, pace)| *p == Phase::Draining && pgs.unwrap_or(0) > 8 && *pace == Pace::Interval),
        "a drain with many PGs left waits the interval: {seen:?}"
    );
    assert!(
        seen.iter().any(|(p, pgs, pace)| *p == Phase::Draining
            && pgs.is_some_and(|n| n <= 8)
            && *pace == Pace::Within(cadence::WATCH)),
        "the last PGs are watched: {seen:?}"
    );
}

#[tokio::test]
async fn rm_stop_restores_weight_and_bad_requests_change_nothing() {
    let (_dir, d, sim) = sim_daemon(0.01).await;
    let before = sim.osds().iter().find(|o| o.id == 3).unwrap().crush_weight;
    d.removals.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await.unwrap();
    rounds_until(&d, &sim, 3, |r| r.state.phase == crate::domain::removal::Phase::Draining).await;
    assert_eq!(sim.osds().iter().find(|o| o.id == 3).unwrap().crush_weight, 0.0);
    // Errors: unknown, duplicate, already queued; none of them queues anything.
    assert!(matches!(
        d.removals.schedule_removals(&removal::RemoveRequest { ids: vec![2, 99], ..Default::default() }).await,
        Err(DaemonError::NotFound(_))
    ));
    assert!(matches!(
        d.removals.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await,
        Err(DaemonError::Conflict(_))
    ));
    assert!(d.store.ops::<crate::store::RemovalCodec>().active_on("osd.2").await.unwrap().is_none());
    d.removals.stop_removals(&[3]).await.unwrap();
    let rec = rounds_until(&d, &sim, 3, |r| r.state.phase == crate::domain::removal::Phase::Cancelled).await;
    assert_eq!(sim.osds().iter().find(|o| o.id == 3).unwrap().crush_weight, before, "{rec:?}");
    assert!(matches!(d.removals.stop_removals(&[3]).await, Err(DaemonError::NotFound(_))));
}

#[tokio::test]
async fn replace_keeps_the_id_as_destroyed() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    d.removals
        .schedule_removals(&removal::RemoveRequest { ids: vec![11], replace: true, ..Default::default() })
        .await
        .unwrap();
    rounds_until(&d, &sim, 11, |r| r.state.phase == crate::domain::removal::Phase::Done).await;
    let osd = sim.osds().into_iter().find(|o| o.id == 11).expect("the id is kept");
    assert!(osd.destroyed);
}

/// `--replace` of an HDD OSD, then the field report's SSD spec on its
/// host: the new SSD takes the destroyed id, and its class is the SSD's,
/// not the HDD's the id had (Ceph keeps a bound class at boot).
#[tokio::test]
async fn a_replaced_hdd_s_id_taken_by_an_ssd_gets_the_ssd_s_class() {
    use crate::domain::deploy::DeployPhase;
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let old = sim.osds().into_iter().find(|o| o.id == 8).unwrap();
    assert_eq!((old.host.as_str(), old.device_class.as_str()), ("f5-422-03", "hdd"));
    d.removals
        .schedule_removals(&removal::RemoveRequest { ids: vec![8], replace: true, zap: true, ..Default::default() })
        .await
        .unwrap();
    rounds_until(&d, &sim, 8, |r| r.state.phase == crate::domain::removal::Phase::Done).await;
    let spec = "service_type: osd\nservice_id: ssds\nplacement:\n  hosts: [f5-422-03]\nspec:\n  data_devices:\n    rotational: 0\n";
    assert!(d.specs.apply(spec, &ApplyQuery::default()).await.is_ok(), "the spec is stored");
    d.specs.reconcile_once().await.unwrap();
    let mut rec = None;
    for _ in 0..20 {
        d.deployments.round().await.unwrap();
        let all = d.store.ops::<crate::store::DeploymentCodec>().with_finished(10).await.unwrap();
        rec = all.into_iter().find(|r| r.state.host == "f5-422-03");
        if rec.as_ref().is_some_and(|r| r.state.phase.is_finished()) {
            break;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    let rec = rec.expect("a deployment on f5-422-03");
    assert_eq!(rec.state.phase, DeployPhase::Done, "{rec:?}");
    assert!(rec.state.steps[0].claimed_ids().contains(&8), "the command claims osd.8: {:?}", rec.state.steps);
    let new = sim.osds().into_iter().find(|o| o.id == 8).expect("osd.8 again");
    assert!(!new.destroyed && new.device != old.device, "{new:?}");
    assert_eq!(new.device_class, "ssd", "{new:?}");
    let actions = d.store.actions(rec.id).await.unwrap();
    let order: Vec<&str> = actions.iter().map(|a| a.effect.as_str()).collect();
    assert_eq!(&order[..2], ["clear-device-class", "prepare"], "{actions:?}");
}

// The kernel asks the leader's lease (`store::lease`) after an effect's
// intent is written and right before the effect: past its bound (here 0:
// any time since the intent's commit began is too long), the fence is
// called and the effect is not carried out; its action stays open, for the
// next leader to close as unknown.
#[tokio::test]
async fn no_effect_goes_out_once_the_leaders_lease_has_lapsed() {
    let sim = crate::sim::field_report_cluster(20.0, 10.0, 50.0).manual_clock();
    let dir = tempfile::tempdir().unwrap();
    let fenced: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = fenced.clone();
    let store = Store::open(&dir.path().join("d.db"))
        .await
        .unwrap()
        .with_lease(std::time::Duration::ZERO, Arc::new(move |why: &str| seen.lock().unwrap().push(why.into())));
    let d = daemon_on_sim_with(store, &sim).await;
    let weight = |sim: &crate::sim::SimCluster| sim.osds().iter().find(|o| o.id == 15).unwrap().crush_weight;
    let before = weight(&sim);
    let req = removal::RemoveRequest { ids: vec![15], zap: true, ..Default::default() };
    let rec = d.removals.schedule_removals(&req).await.unwrap().remove(0);
    d.removals.round().await.unwrap();
    let said = fenced.lock().unwrap().clone();
    assert!(
        said.len() == 1
            && said[0].starts_with("no commit went through for ")
            && said[0].ends_with("past the lease of 0 s"),
        "fenced once, before the first effect: {said:?}"
    );
    let actions = d.store.actions(rec.id).await.unwrap();
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert!(said[0].contains(&format!("before {} of ", actions[0].effect)), "{said:?} {actions:?}");
    assert_eq!(actions[0].outcome, None, "written down, never carried out: {actions:?}");
    assert_eq!(weight(&sim), before, "the drain's reweight did not go out");
}
