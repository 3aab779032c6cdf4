//! The daemon's operations with in-process fake agents (the integration
//! tests in tests/daemon_*.rs use real agent processes).

use std::sync::Arc;

use super::*;
use crate::agent_client::AgentError;
use crate::config::{Config, FileConfig, Overrides};
use crate::domain::event::EventKind;
use crate::wire::agent::{ActivateRequest, CephVolumeRequest, ProbeRequest, ProbeResult};
use crate::wire::api::specs::ApplyQuery;

mod boost;
mod device_replace;
mod fake_agents;
mod host_drain;
mod identity;
mod last_copy;
mod metrics;
mod polling;
mod preview;
mod probes;
mod releases;
mod removals;
mod swaps;

pub(in crate::daemon) use fake_agents::FakeAgents;

fn fixture_hosts() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/f5-422-inventory.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["hosts"].clone()
}

async fn daemon_with(agents: Arc<FakeAgents>) -> (tempfile::TempDir, Arc<Daemon>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    (dir, daemon_on(store, agents))
}

/// A daemon on this store, with the default settings and no cluster.
pub(super) fn daemon_on(store: Store, agents: Arc<FakeAgents>) -> Arc<Daemon> {
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let ceph = Arc::new(crate::sim::SimCluster::new(vec![], vec![], 1.0, 1.0));
    Daemon::new(store, agents, ceph, config)
}

pub(super) async fn with_cluster() -> (tempfile::TempDir, Arc<Daemon>, Arc<FakeAgents>) {
    let agents = Arc::new(FakeAgents::default());
    let hosts = fixture_hosts();
    for (name, devs) in hosts.as_object().unwrap() {
        agents.devices.lock().unwrap().insert(name.clone(), devs.as_array().unwrap().clone());
    }
    let (dir, d) = daemon_with(agents.clone()).await;
    for name in hosts.as_object().unwrap().keys() {
        let h = d.inventory.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
        d.inventory.poll_host(&h).await.unwrap();
    }
    (dir, d, agents)
}

#[tokio::test]
async fn labels_are_added_and_removed_idempotently() {
    let (_dir, d, _agents) = with_cluster().await;
    let host = d.store.hosts().await.unwrap()[0].name.clone();
    for _ in 0..2 {
        assert_eq!(d.inventory.label(&host, "osd", true).await.unwrap().labels, ["osd"]);
    }
    assert_eq!(
        d.inventory.label(&host, "never-there", false).await.unwrap().labels,
        ["osd"],
        "nothing to remove is success"
    );
    let added = d.store.events(None, 100).await.unwrap().iter().filter(|e| e.kind == EventKind::HostLabelAdded).count();
    assert_eq!(added, 1, "a label already there changes nothing and records nothing");
    assert!(matches!(d.inventory.label("nohost", "osd", true).await, Err(DaemonError::NotFound(_))));
}

#[tokio::test]
async fn polled_hosts_go_out_together_in_one_message() {
    let (_dir, d, _agents) = with_cluster().await;
    d.inventory.take_polled();
    let mut rx = d.events.subscribe().0;
    let cancel = tokio_util::sync::CancellationToken::new();
    let announcer = tokio::spawn({
        let (inventory, cancel) = (d.inventory.clone(), cancel.clone());
        async move { inventory.announce_polled_hosts(cancel).await }
    });
    for h in d.store.hosts().await.unwrap() {
        d.inventory.poll_host(&h).await.unwrap();
    }
    cancel.cancel();
    announcer.await.unwrap();
    let mut messages = vec![];
    while let Ok(m) = rx.try_recv() {
        if let super::live::Live::Hosts { hosts } = m {
            messages.push(hosts);
        }
    }
    let all: Vec<String> = messages.concat();
    assert_eq!(all.len(), 4, "each polled host is named once: {messages:?}");
    assert!(messages.len() < 4, "polls close together share a message: {messages:?}");
    assert!(d.inventory.take_polled().is_empty(), "nothing is left unsent at shutdown");
}

const SPEC: &str = "service_type: osd\nservice_id: osd_spec_F5-422_SSDs\nplacement:\n  host_pattern: 'f5-422-*'\nencrypted: true\ndata_devices:\n  rotational: 0\n";

#[tokio::test]
async fn reconcile_runs_each_planned_command_once_per_inventory() {
    let (_dir, d, agents) = with_cluster().await;
    match d.specs.apply(SPEC, &ApplyQuery::default()).await {
        Ok(o) => assert_eq!(o.stored.map(|s| s.len()), Some(1)),
        Err(_) => panic!("valid spec refused"),
    }
    // The reconciler starts a deployment per host; the deployment worker runs its command.
    d.specs.reconcile_once().await.unwrap();
    assert_eq!(d.store.ops::<crate::store::DeploymentCodec>().active().await.unwrap().len(), 3);
    d.deployments.round().await.unwrap();
    let calls = agents.calls.lock().unwrap().clone();
    // f5-422-01..03 have free SSDs; on 04 the spec's disks are all used.
    // Hosts run in parallel lanes: their order is the scheduler's.
    let mut hosts: Vec<&str> = calls.iter().map(|(h, _)| h.as_str()).collect();
    hosts.sort_unstable();
    assert_eq!(hosts, ["f5-422-01", "f5-422-02", "f5-422-03"]);
    assert_eq!(calls[0].1.osdspec_affinity.as_deref(), Some("osd_spec_F5-422_SSDs"));
    assert!(calls[0].1.args.starts_with(&["lvm".to_string(), "batch".into()]));
    assert!(calls[0].1.args.contains(&"--dmcrypt".to_string()));
    d.specs.reconcile_once().await.unwrap();
    d.deployments.round().await.unwrap();
    assert_eq!(agents.calls.lock().unwrap().len(), 3, "nothing changed, nothing runs again");
}

#[tokio::test]
async fn held_devices_are_not_planned_until_released() {
    let (_dir, d, agents) = with_cluster().await;
    d.store.hold("f5-422-01", "/dev/sdf", None, "zapped by osdkeeper", 1).await.unwrap();
    let out = match d.specs.apply(SPEC, &ApplyQuery { dry_run: true, ..ApplyQuery::default() }).await {
        Ok(o) => serde_json::to_value(o).unwrap(),
        Err(_) => panic!("dry-run failed"),
    };
    let row = out["preview"].as_array().unwrap().iter().find(|r| r["host"] == "f5-422-01").unwrap();
    assert!(!row["data"].as_array().unwrap().iter().any(|p| p == "/dev/sdf"), "{row}");
    let skipped = row["skipped"].as_array().unwrap().iter().find(|s| s["path"] == "/dev/sdf").unwrap();
    assert!(skipped["reasons"][0].as_str().unwrap().contains("held by osdkeeper"), "{skipped}");
    assert!(agents.calls.lock().unwrap().is_empty(), "a dry-run runs nothing");
    d.store.release("f5-422-01", "/dev/sdf").await.unwrap();
    let out = serde_json::to_value(
        d.specs.apply(SPEC, &ApplyQuery { dry_run: true, ..ApplyQuery::default() }).await.ok().unwrap(),
    )
    .unwrap();
    let row = out["preview"].as_array().unwrap().iter().find(|r| r["host"] == "f5-422-01").unwrap();
    assert!(row["data"].as_array().unwrap().iter().any(|p| p == "/dev/sdf"));
}

#[tokio::test]
async fn changed_devices_raise_an_event_and_unreachable_hosts_are_marked() {
    let (_dir, d, agents) = with_cluster().await;
    let host = d.store.host("f5-422-04").await.unwrap();
    // A disk swap: bay 5 gets a new SSD.
    let mut devs = agents.devices.lock().unwrap()["f5-422-01"].clone();
    let mut fresh = devs.last().unwrap().clone();
    fresh["path"] = "/dev/sdc".into();
    devs = vec![devs[0].clone(), fresh];
    agents.devices.lock().unwrap().insert("f5-422-04".into(), devs);
    d.inventory.poll_host(&host).await.unwrap();
    let events = d.store.events(None, 50).await.unwrap();
    let changed = events.iter().find(|e| e.kind == EventKind::DevicesChanged).expect("a devices-changed event");
    assert!(changed.message.contains("Detected new or changed devices on f5-422-04"), "{}", changed.message);
    assert!(changed.message.contains("added /dev/sdc"), "{}", changed.message);

    agents.down.lock().unwrap().push("f5-422-04".into());
    assert!(d.inventory.poll_host(&host).await.is_err());
    let h = d.store.host("f5-422-04").await.unwrap();
    assert!(h.unreachable_since.is_some() && h.last_error.unwrap().contains("connection refused"));
    assert!(d.store.events(None, 50).await.unwrap().iter().any(|e| e.kind == EventKind::HostUnreachable));
}

#[tokio::test]
async fn invalid_documents_store_nothing() {
    let (_dir, d, _agents) = with_cluster().await;
    let bad = format!("{SPEC}---\nservice_type: osd\nservice_id: x\nplacement: {{host_pattern: '*'}}\ndata_devices: {{rotational: '0'}}\n");
    match d.specs.apply(&bad, &ApplyQuery::default()).await {
        Err(DaemonError::InvalidSpecs(errors)) => assert_eq!(errors[0].doc, 1),
        _ => panic!("an invalid document must refuse the whole apply"),
    }
    assert!(d.store.specs().await.unwrap().is_empty());
}

// Removals on the simulated cluster (the same object serves as Ceph and as the agents).

pub(super) async fn sim_daemon(pace: f64) -> (tempfile::TempDir, Arc<Daemon>, crate::sim::SimCluster) {
    daemon_on_sim(crate::sim::field_report_cluster(20.0, 10.0, pace).manual_clock()).await
}

/// A daemon on this simulated cluster with the field report's four hosts added and polled.
pub(super) async fn daemon_on_sim(
    sim: crate::sim::SimCluster,
) -> (tempfile::TempDir, Arc<Daemon>, crate::sim::SimCluster) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    let d = daemon_on_sim_with(store, &sim).await;
    (dir, d, sim)
}

/// The same on a store of the caller's.
pub(super) async fn daemon_on_sim_with(store: Store, sim: &crate::sim::SimCluster) -> Arc<Daemon> {
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let d = Daemon::new(store, Arc::new(sim.clone()), Arc::new(sim.clone()), config);
    for name in ["f5-422-01", "f5-422-02", "f5-422-03", "f5-422-04"] {
        let h = d.inventory.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
        d.inventory.poll_host(&h).await.unwrap();
    }
    d
}

/// Removal rounds, with 20 ms of the simulated cluster's time between them.
async fn rounds_until(
    d: &Arc<Daemon>,
    sim: &crate::sim::SimCluster,
    osd: u32,
    done: impl Fn(&crate::domain::removal::RemovalRecord) -> bool,
) -> crate::domain::removal::RemovalRecord {
    for _ in 0..200 {
        d.removals.round().await.unwrap();
        let all = d.store.ops::<crate::store::RemovalCodec>().with_finished(50).await.unwrap();
        let rec = all.into_iter().rfind(|r| r.state.osd_id == osd).expect("a removal");
        if done(&rec) {
            return rec;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    panic!("removal of osd.{osd} did not get there");
}

/// An operator's zap holds the disk (and says so) before the agent wipes
/// it; a refusal lifts the hold again; no answer keeps it (it may be wiped).
#[tokio::test]
async fn a_zap_writes_its_intent_first() {
    let (_dir, d, agents) = with_cluster().await;
    // /dev/sdf on f5-422-01 is a free SSD in the fixture.
    let steps = d.inventory.zap_device("f5-422-01", "/dev/sdf", true).await.unwrap();
    assert!(steps.is_empty());
    assert!(d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "held after the zap");
    let events = d.store.events(None, 100).await.unwrap();
    let zap = events.iter().position(|e| e.kind == EventKind::Zap).expect("the intent is announced");
    let done = events.iter().position(|e| e.kind == EventKind::Zapped).expect("and the outcome");
    assert!(zap < done);
    d.inventory.release_device("f5-422-01", "/dev/sdf").await.unwrap();

    *agents.zap_error.lock().unwrap() =
        Some(AgentError::Refused { addr: "x".into(), status: 409, message: "/dev/sdf is busy".into() });
    assert!(matches!(d.inventory.zap_device("f5-422-01", "/dev/sdf", true).await, Err(DaemonError::RefusedUnsafe(_))));
    assert!(!d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "a refused zap wiped nothing");

    *agents.zap_error.lock().unwrap() = Some(AgentError::Timeout { addr: "x".into(), seconds: 30 });
    assert!(matches!(d.inventory.zap_device("f5-422-01", "/dev/sdf", true).await, Err(DaemonError::CannotAct(_))));
    assert!(d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "it may be wiped: still held");
}

/// Concurrent `osd rm stop` of one removal: each answers (stopped, or a
/// conflict/not found), none fails with "database is locked".
#[tokio::test]
async fn concurrent_rm_stop_never_fails_on_the_database() {
    let (_dir, d, sim) = sim_daemon(0.01).await;
    d.removals.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await.unwrap();
    rounds_until(&d, &sim, 3, |r| r.state.phase == crate::domain::removal::Phase::Draining).await;
    let stops = (0..40).map(|_| {
        let d = d.clone();
        tokio::spawn(async move { d.removals.stop_removals(&[3]).await })
    });
    let results = futures::future::join_all(stops).await;
    for r in results {
        match r.unwrap() {
            Ok(_) | Err(DaemonError::NotFound(_) | DaemonError::Conflict(_)) => {}
            Err(e) => panic!("a concurrent stop failed: {e:?}"),
        }
    }
}
