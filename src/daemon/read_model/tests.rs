//! The read model against the answers it replaced: after every change of a
//! removal's life and around it, the status, the summary and the OSD list
//! from memory equal what the daemon computed per request before, from the
//! store and the cluster at that moment. On the simulated field-report
//! cluster, its clock moved by hand (tokio's paused time cannot be used:
//! the store's pool would time out while SQLite works on its own threads).

use std::collections::HashMap;

use crate::daemon::removal::RemoveRequest;
use crate::daemon::tests::sim_daemon;
use crate::daemon::Daemon;
use crate::domain::bench::osd::OsdBenchResult;
use crate::domain::removal::Phase;
use crate::store::{BenchTarget, Topic};
use crate::wire::api::osds::{OsdQuery, RemovalStatus, StatusQuery};
use crate::wire::api::specs::ApplyQuery;
use crate::wire::api::summary::Summary;

use super::osds::OsdRows;

/// `osd rm status` as it was computed per request: the store's removals
/// and each one's recent samples.
async fn removals_from_store(d: &Daemon, history: Option<i64>) -> Vec<RemovalStatus> {
    let records =
        d.store.ops::<crate::store::RemovalCodec>().with_finished(history.unwrap_or(20).clamp(0, 1000)).await.unwrap();
    d.read_model.removal_statuses(&records).await.unwrap()
}

/// The summary as it was computed per request, its OSD counts from a read
/// of the cluster now.
async fn summary_from_store_and_cluster(d: &Daemon) -> Summary {
    let (mut s, _) = d.read_model.host_counts().await.unwrap();
    s.active_removals = d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap().len();
    let (n, up, is_in) = d.ceph().state().await.unwrap().osd_counts();
    (s.osds, s.osds_up, s.osds_in) = (Some(n), Some(up), Some(is_in));
    s
}

fn without_osd_counts(s: &Summary) -> Summary {
    Summary { osds: None, osds_up: None, osds_in: None, cluster_error: None, ..s.clone() }
}

async fn phases_in_store(d: &Daemon) -> HashMap<u32, Phase> {
    d.store
        .ops::<crate::store::RemovalCodec>()
        .active()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.state.osd_id, r.state.phase))
        .collect()
}

/// The OSD list as it was computed per request: the cluster, its OSD
/// metadata, the store's removals and bench results, read now.
async fn osds_from_store_and_cluster(d: &Daemon) -> OsdRows {
    let state = d.ceph().state().await.unwrap();
    let meta = d.ceph().all_osd_devices().await.unwrap().into_iter().collect();
    OsdRows::build(
        &state,
        &meta,
        &phases_in_store(d).await,
        &crate::daemon::bench::bench_brief(&d.store).await.unwrap(),
    )
}

fn queries() -> Vec<OsdQuery> {
    let q = |q: &str| OsdQuery { q: Some(q.into()), ..OsdQuery::default() };
    vec![
        OsdQuery::default(),
        q("osd.8"),
        q("F5-422-03"),
        q("/dev/sdd"),
        OsdQuery { host: Some("f5-422-02".into()), ..OsdQuery::default() },
        OsdQuery { offset: Some(3), limit: Some(4), ..OsdQuery::default() },
        OsdQuery { q: Some("f5-422".into()), offset: Some(100), ..OsdQuery::default() },
    ]
}

/// What comes from the store: the status at several lengths of history,
/// the summary but its OSD counts, and each OSD row's removal.
async fn same_as_the_store(d: &Daemon, when: &str) {
    for history in [None, Some(0), Some(1), Some(1000)] {
        let q = StatusQuery { history };
        assert_eq!(
            d.read_model.removals(&q).await.unwrap(),
            removals_from_store(d, history).await,
            "{when}: history {history:?}"
        );
    }
    let from_store = without_osd_counts(&summary_from_store_and_cluster(d).await);
    assert_eq!(without_osd_counts(&d.read_model.summary().await.unwrap()), from_store, "{when}: summary");
    let phases = phases_in_store(d).await;
    for row in d.read_model.osds(&OsdQuery::default()).await.unwrap().items {
        assert_eq!(row.removal, phases.get(&row.id).copied(), "{when}: osd.{}'s removal", row.id);
    }
}

/// Everything, after the model's worker read the cluster (it does every
/// `CLUSTER_TTL`).
async fn same_as_store_and_cluster(d: &Daemon, when: &str) {
    d.read_model.refresh_from_cluster().await.unwrap();
    same_as_the_store(d, when).await;
    assert_eq!(d.read_model.summary().await.unwrap(), summary_from_store_and_cluster(d).await, "{when}: summary");
    let rows = osds_from_store_and_cluster(d).await;
    for q in queries() {
        assert_eq!(d.read_model.osds(&q).await.unwrap(), rows.page(&q), "{when}: {q:?}");
    }
}

#[tokio::test]
async fn the_read_model_answers_as_the_store_and_the_cluster_do_after_every_change() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    same_as_store_and_cluster(&d, "at start").await;

    // osd rm: the API refreshes the model before it answers.
    d.removals.schedule_removals(&RemoveRequest { ids: vec![8, 15], zap: true, ..Default::default() }).await.unwrap();
    d.removals.schedule_removals(&RemoveRequest { ids: vec![3], ..Default::default() }).await.unwrap();
    d.read_model.refresh().await.unwrap();
    same_as_store_and_cluster(&d, "osd rm").await;

    // The removal worker's rounds refresh it themselves; a stop on the way.
    // A round goes from an empty OSD to done at once, so osd.8's first zap
    // is lost to hold a removal in Zapping between two rounds.
    let host_of_8 = sim.osds().into_iter().find(|o| o.id == 8).unwrap().host;
    sim.lose_next_zap(&host_of_8);
    let mut phases_seen = Vec::new();
    for round in 0..400 {
        d.removals.round().await.unwrap();
        same_as_the_store(&d, &format!("round {round}")).await;
        if round % 7 == 0 {
            same_as_store_and_cluster(&d, &format!("round {round}, cluster read")).await;
        }
        let phases = phases_in_store(&d).await;
        if phases.get(&3) == Some(&Phase::Draining)
            && !d
                .store
                .ops::<crate::store::RemovalCodec>()
                .active_on("osd.3")
                .await
                .unwrap()
                .unwrap()
                .state
                .stop_requested
        {
            d.removals.stop_removals(&[3]).await.unwrap();
            d.read_model.refresh().await.unwrap();
            same_as_the_store(&d, "rm stop").await;
        }
        phases_seen.extend(phases.into_values());
        if d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap().is_empty() {
            break;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    assert!(d.store.ops::<crate::store::RemovalCodec>().active().await.unwrap().is_empty(), "every removal finished");
    for phase in [Phase::Draining, Phase::Zapping] {
        assert!(phases_seen.contains(&phase), "{phase:?} was compared: {phases_seen:?}");
    }
    let finished = d.read_model.removals(&StatusQuery::default()).await.unwrap();
    assert_eq!(finished.len(), 3, "{finished:?}");
    same_as_store_and_cluster(&d, "all finished").await;

    // Holds: an operator's zap holds a disk; a release frees it.
    d.inventory.zap_device("f5-422-01", "/dev/sdf", true).await.unwrap();
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "zap").await;
    d.inventory.release_device("f5-422-01", "/dev/sdf").await.unwrap();
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "release").await;

    // New inventories: a disk taken as an OSD's DB; a host that stops answering.
    let on_01 = sim.osds().into_iter().find(|o| o.host == "f5-422-01").unwrap().id;
    sim.add_db_disk("f5-422-01", "/dev/sdf", vec![on_01]);
    let before = d.store.changes().count(Topic::Inventories);
    d.inventory.poll_host(&d.store.host("f5-422-01").await.unwrap()).await.unwrap();
    assert!(d.store.changes().count(Topic::Inventories) > before, "the inventory changed");
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "new inventory").await;
    sim.set_unreachable("f5-422-02", true);
    assert!(d.inventory.poll_host(&d.store.host("f5-422-02").await.unwrap()).await.is_err());
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "unreachable").await;
    assert_eq!(d.read_model.summary().await.unwrap().unreachable_hosts, ["f5-422-02"]);
    sim.set_unreachable("f5-422-02", false);
    d.inventory.poll_host(&d.store.host("f5-422-02").await.unwrap()).await.unwrap();
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "reachable again").await;

    // Benches (the simulator has none: stored as the bench worker stores them).
    let target = |osd_id: u32| BenchTarget {
        osd_id,
        host: "f5-422-04".into(),
        device_class: Some("hdd".into()),
        size_bytes: Some(1 << 40),
        model: Some("m".into()),
        bytes: 1 << 30,
        block_size: 4 << 20,
    };
    let on_04: Vec<u32> = sim.osds().into_iter().filter(|o| o.host == "f5-422-04").map(|o| o.id).take(3).collect();
    let benches =
        d.store.add_osd_benches(&on_04.iter().map(|&id| target(id)).collect::<Vec<_>>(), None, 1).await.unwrap();
    for (b, rate) in benches.iter().zip([100e6, 100e6, 10e6]) {
        assert!(d.store.start_osd_bench(b.bench_id, 2).await.unwrap());
        let result = OsdBenchResult { bytes_per_sec: rate, iops: 25.0, elapsed_s: 1.0 };
        d.store.finish_osd_bench(b.bench_id, Ok(result), 3).await.unwrap();
    }
    d.read_model.refresh().await.unwrap();
    same_as_store_and_cluster(&d, "benches").await;
    let rows = d.read_model.osds(&OsdQuery::default()).await.unwrap().items;
    assert!(rows.iter().any(|r| r.bench_outlier.is_some()), "the slow one is named: {rows:?}");

    // Specs.
    let spec =
        "service_type: osd\nservice_id: ssds\nplacement:\n  host_pattern: 'f5-422-*'\ndata_devices:\n  rotational: 0\n";
    assert!(d.specs.apply(spec, &ApplyQuery::default()).await.is_ok());
    d.read_model.refresh().await.unwrap();
    same_as_the_store(&d, "spec applied").await;
    assert_eq!(d.read_model.summary().await.unwrap().specs, 1);
}

/// A rebuild that fails keeps the last snapshot and says why; the
/// answers do not fail.
#[tokio::test]
async fn a_failed_rebuild_keeps_the_last_snapshot_and_says_why() {
    let (_dir, d, _sim) = sim_daemon(50.0).await;
    let before = d.read_model.summary_view().await.unwrap();
    assert!(before.failure.is_none());
    d.store.hold("f5-422-01", "/dev/sdf", None, "test", 1).await.unwrap();
    d.store.close().await;
    assert!(d.read_model.refresh().await.is_err());
    let after = d.read_model.summary_view().await.unwrap();
    assert_eq!(after.snapshot.value, before.snapshot.value, "the last good summary");
    let failure = after.failure.expect("and why it is not newer");
    assert!(failure.error.contains("closed"), "{failure:?}");
    assert!(d.read_model.removals_view().await.unwrap().failure.is_none(), "the removals had nothing to rebuild");
}

async fn weight_of(d: &Daemon, id: u32) -> Option<f64> {
    let q = OsdQuery { q: Some(format!("osd.{id}")), ..OsdQuery::default() };
    d.read_model.osds(&q).await.unwrap().items[0].crush_weight
}

/// Without any explicit refresh: the model's worker follows the store's
/// writes and reads the cluster on its own.
#[tokio::test]
async fn the_model_worker_follows_writes_and_the_cluster() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let worker = {
        let (d, c) = (d.clone(), cancel.clone());
        tokio::spawn(async move { d.workers.model.run(c, || d.read_model.round()).await })
    };
    let waker = {
        let (d, c) = (d.clone(), cancel.clone());
        tokio::spawn(async move { d.read_model.wake_on_writes(c).await })
    };
    assert_eq!(d.read_model.summary().await.unwrap().held_devices, 0);
    d.store.hold("f5-422-01", "/dev/sdf", None, "test", 1).await.unwrap();
    // The published snapshot itself: a request would refresh it first.
    let held_now = || d.read_model.summary_now().map_or(0, |s| s.value.held_devices);
    let mut held = 0;
    for _ in 0..50 {
        tokio::time::sleep(super::refresh::SETTLE).await;
        held = held_now();
        if held == 1 {
            break;
        }
    }
    assert_eq!(held, 1, "a write shows within moments");
    // The cluster changes behind the daemon's back: no request reads it, the
    // worker's next read (within `CLUSTER_TTL`) shows it.
    let was = weight_of(&d, 3).await;
    crate::ceph::CephCluster::reweight(&sim, 3, 0.5).await.unwrap();
    d.read_model.refresh().await.unwrap();
    assert_eq!(weight_of(&d, 3).await, was, "a refresh does not read the cluster");
    let mut now = was;
    for _ in 0..100 {
        now = weight_of(&d, 3).await;
        if now != was {
            break;
        }
        tokio::time::sleep(crate::daemon::cluster::CLUSTER_TTL / 20).await;
    }
    assert_eq!(now, Some(0.5), "was {was:?}");
    cancel.cancel();
    worker.await.unwrap();
    waker.await.unwrap();
}

/// A write nobody refreshed the model after (no worker runs here) is in
/// the next answer: a hold in the summary and the hosts' rows.
#[tokio::test]
async fn a_write_to_the_store_is_in_the_next_answer_without_a_refresh() {
    let (_dir, d, _sim) = sim_daemon(50.0).await;
    assert_eq!(d.read_model.summary().await.unwrap().held_devices, 0);
    let before = d.read_model.summary_now().unwrap().version;
    d.store.hold("f5-422-01", "/dev/sdf", None, "test", 1).await.unwrap();
    assert_eq!(d.read_model.summary_now().unwrap().version, before, "nothing refreshed the model yet");
    assert_eq!(d.read_model.summary().await.unwrap().held_devices, 1);
    assert_eq!(d.read_model.summary().await.unwrap(), summary_from_store_and_cluster(&d).await);
}

/// A script waits for its benches through the store's results, then lists
/// the OSDs: the list has them though no refresh ran in between (CI's
/// sandbox_bench once listed the OSDs within the model worker's settle time).
#[tokio::test]
async fn a_finished_bench_is_in_the_next_osd_list_without_a_refresh() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let id = sim.osds()[0].id;
    let bench_of = |rows: Vec<crate::wire::api::osds::OsdRow>| rows.into_iter().find(|r| r.id == id).unwrap();
    assert_eq!(bench_of(d.read_model.osds(&OsdQuery::default()).await.unwrap().items).bench_bytes_per_sec, None);
    let target = BenchTarget {
        osd_id: id,
        host: sim.osds()[0].host.clone(),
        device_class: Some("hdd".into()),
        size_bytes: Some(1 << 40),
        model: None,
        bytes: 1 << 30,
        block_size: 4 << 20,
    };
    let bench = d.store.add_osd_benches(&[target], None, 1).await.unwrap().remove(0);
    assert!(d.store.start_osd_bench(bench.bench_id, 2).await.unwrap());
    let result = OsdBenchResult { bytes_per_sec: 42e6, iops: 10.0, elapsed_s: 1.0 };
    d.store.finish_osd_bench(bench.bench_id, Ok(result), 3).await.unwrap();
    assert_eq!(bench_of(d.read_model.osds(&OsdQuery::default()).await.unwrap().items).bench_bytes_per_sec, Some(42e6));
}
