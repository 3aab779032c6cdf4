//! The daemon's operations with in-process fake agents (the integration
//! tests in tests/daemon_*.rs use real agent processes).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::*;
use crate::agent_client::AgentError;
use crate::config::{Config, FileConfig, Overrides};
use crate::domain::event::EventKind;
use crate::wire::agent::{
    ActivateRequest, CephVolumeRequest, CommandResult, HostOsds, InventoryReport, InventorySource, OsdDaemonStatus,
    ZapRequest, ZapResult,
};
use crate::wire::api::hosts::Host;
use crate::wire::api::specs::ApplyQuery;

mod boost;
mod preview;

/// Serves one fixed device list per host and records ceph-volume calls.
#[derive(Default)]
pub(super) struct FakeAgents {
    devices: Mutex<std::collections::HashMap<String, Vec<serde_json::Value>>>,
    calls: Mutex<Vec<(String, CephVolumeRequest)>>,
    down: Mutex<Vec<String>>,
    /// What a zap answers instead of success; it records the holds it saw.
    zap_error: Mutex<Option<AgentError>>,
    zaps: Mutex<Vec<String>>,
}

impl HostAgents for FakeAgents {
    fn inventory<'a>(&'a self, host: &'a Host) -> BoxFuture<'a, Result<InventoryReport, AgentError>> {
        Box::pin(async move {
            if self.down.lock().unwrap().contains(&host.name) {
                return Err(AgentError::Unreachable { addr: host.addr.clone(), message: "connection refused".into() });
            }
            let devices = self.devices.lock().unwrap().get(&host.name).cloned().unwrap_or_default();
            Ok(InventoryReport {
                host: host.name.clone(),
                source: InventorySource::Kernel,
                taken_at_ms: crate::clock::now_ms(),
                devices,
                can_create_osds: true,
                note: None,
            })
        })
    }

    fn ceph_volume<'a>(
        &'a self,
        host: &'a Host,
        request: &'a CephVolumeRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(async move {
            self.calls.lock().unwrap().push((host.name.clone(), request.clone()));
            Ok(CommandResult {
                command: request.args.join(" "),
                exit_code: 0,
                stdout: String::new(),
                stderr: String::new(),
            })
        })
    }

    fn osd_status<'a>(&'a self, _host: &'a Host, osd_id: u32) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        Box::pin(async move { Ok(OsdDaemonStatus { osd_id, running: false, pids: vec![], detail: String::new() }) })
    }

    fn stop_osd<'a>(&'a self, host: &'a Host, osd_id: u32) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        self.osd_status(host, osd_id)
    }

    fn zap<'a>(&'a self, _host: &'a Host, request: &'a ZapRequest) -> BoxFuture<'a, Result<ZapResult, AgentError>> {
        Box::pin(async move {
            self.zaps.lock().unwrap().push(request.path.clone());
            match self.zap_error.lock().unwrap().clone() {
                Some(e) => Err(e),
                None => Ok(ZapResult { path: request.path.clone(), steps: vec![] }),
            }
        })
    }

    fn list_osds<'a>(&'a self, _host: &'a Host) -> BoxFuture<'a, Result<HostOsds, AgentError>> {
        Box::pin(async move { Ok(HostOsds { osds: vec![], notes: vec![] }) })
    }

    fn activate_osd<'a>(
        &'a self,
        _host: &'a Host,
        osd_id: u32,
        _request: &'a ActivateRequest,
    ) -> BoxFuture<'a, Result<CommandResult, AgentError>> {
        Box::pin(async move {
            Ok(CommandResult {
                command: format!("activate {osd_id}"),
                exit_code: 0,
                stdout: String::new(),
                stderr: String::new(),
            })
        })
    }

    fn start_osd<'a>(&'a self, host: &'a Host, osd_id: u32) -> BoxFuture<'a, Result<OsdDaemonStatus, AgentError>> {
        self.osd_status(host, osd_id)
    }
}

fn fixture_hosts() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/f5-422-inventory.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["hosts"].clone()
}

async fn daemon_with(agents: Arc<FakeAgents>) -> (tempfile::TempDir, Arc<Daemon>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let ceph = Arc::new(crate::sim::SimCluster::new(vec![], vec![], 1.0, 1.0));
    (dir, Daemon::new(store, agents, ceph, config))
}

pub(super) async fn with_cluster() -> (tempfile::TempDir, Arc<Daemon>, Arc<FakeAgents>) {
    let agents = Arc::new(FakeAgents::default());
    let hosts = fixture_hosts();
    for (name, devs) in hosts.as_object().unwrap() {
        agents.devices.lock().unwrap().insert(name.clone(), devs.as_array().unwrap().clone());
    }
    let (dir, d) = daemon_with(agents.clone()).await;
    for name in hosts.as_object().unwrap().keys() {
        let h = d.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
        d.poll_host(&h).await.unwrap();
    }
    (dir, d, agents)
}

#[tokio::test]
async fn labels_are_added_and_removed_idempotently() {
    let (_dir, d, _agents) = with_cluster().await;
    let host = d.store.hosts().await.unwrap()[0].name.clone();
    for _ in 0..2 {
        assert_eq!(d.label(&host, "osd", true).await.unwrap().labels, ["osd"]);
    }
    assert_eq!(d.label(&host, "never-there", false).await.unwrap().labels, ["osd"], "nothing to remove is success");
    let added = d.store.events(None, 100).await.unwrap().iter().filter(|e| e.kind == EventKind::HostLabelAdded).count();
    assert_eq!(added, 1, "a label already there changes nothing and records nothing");
    assert!(matches!(d.label("nohost", "osd", true).await, Err(DaemonError::NotFound(_))));
}

#[tokio::test]
async fn polled_hosts_go_out_together_in_one_message() {
    let (_dir, d, _agents) = with_cluster().await;
    d.polled.take();
    let mut rx = d.live.subscribe();
    let cancel = tokio_util::sync::CancellationToken::new();
    let announcer = tokio::spawn(super::live::announce_polled_hosts(d.clone(), cancel.clone()));
    for h in d.store.hosts().await.unwrap() {
        d.poll_host(&h).await.unwrap();
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
    assert!(d.polled.take().is_empty(), "nothing is left unsent at shutdown");
}

const SPEC: &str = "service_type: osd\nservice_id: osd_spec_F5-422_SSDs\nplacement:\n  host_pattern: 'f5-422-*'\nencrypted: true\ndata_devices:\n  rotational: 0\n";

#[tokio::test]
async fn reconcile_runs_each_planned_command_once_per_inventory() {
    let (_dir, d, agents) = with_cluster().await;
    match d.apply(SPEC, &ApplyQuery::default()).await {
        Ok(o) => assert_eq!(o.stored.map(|s| s.len()), Some(1)),
        Err(_) => panic!("valid spec refused"),
    }
    // The reconciler starts a deployment per host; the deployment worker runs its command.
    d.reconcile_once().await.unwrap();
    assert_eq!(d.store.active_deployments().await.unwrap().len(), 3);
    d.deployment_round().await.unwrap();
    let calls = agents.calls.lock().unwrap().clone();
    // f5-422-01..03 have free SSDs; on 04 the spec's disks are all used.
    let hosts: Vec<&str> = calls.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(hosts, ["f5-422-01", "f5-422-02", "f5-422-03"]);
    assert_eq!(calls[0].1.osdspec_affinity.as_deref(), Some("osd_spec_F5-422_SSDs"));
    assert!(calls[0].1.args.starts_with(&["lvm".to_string(), "batch".into()]));
    assert!(calls[0].1.args.contains(&"--dmcrypt".to_string()));
    d.reconcile_once().await.unwrap();
    d.deployment_round().await.unwrap();
    assert_eq!(agents.calls.lock().unwrap().len(), 3, "nothing changed, nothing runs again");
}

#[tokio::test]
async fn held_devices_are_not_planned_until_released() {
    let (_dir, d, agents) = with_cluster().await;
    d.store.hold("f5-422-01", "/dev/sdf", None, "zapped by osdkeeper", 1).await.unwrap();
    let out = match d.apply(SPEC, &ApplyQuery { dry_run: true, ..ApplyQuery::default() }).await {
        Ok(o) => serde_json::to_value(o).unwrap(),
        Err(_) => panic!("dry-run failed"),
    };
    let row = out["preview"].as_array().unwrap().iter().find(|r| r["host"] == "f5-422-01").unwrap();
    assert!(!row["data"].as_array().unwrap().iter().any(|p| p == "/dev/sdf"), "{row}");
    let skipped = row["skipped"].as_array().unwrap().iter().find(|s| s["path"] == "/dev/sdf").unwrap();
    assert!(skipped["reasons"][0].as_str().unwrap().contains("held by osdkeeper"), "{skipped}");
    assert!(agents.calls.lock().unwrap().is_empty(), "a dry-run runs nothing");
    d.store.release("f5-422-01", "/dev/sdf").await.unwrap();
    let out =
        serde_json::to_value(d.apply(SPEC, &ApplyQuery { dry_run: true, ..ApplyQuery::default() }).await.ok().unwrap())
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
    d.poll_host(&host).await.unwrap();
    let events = d.store.events(None, 50).await.unwrap();
    let changed = events.iter().find(|e| e.kind == EventKind::DevicesChanged).expect("a devices-changed event");
    assert!(changed.message.contains("Detected new or changed devices on f5-422-04"), "{}", changed.message);
    assert!(changed.message.contains("added /dev/sdc"), "{}", changed.message);

    agents.down.lock().unwrap().push("f5-422-04".into());
    assert!(d.poll_host(&host).await.is_err());
    let h = d.store.host("f5-422-04").await.unwrap();
    assert!(h.unreachable_since.is_some() && h.last_error.unwrap().contains("connection refused"));
    assert!(d.store.events(None, 50).await.unwrap().iter().any(|e| e.kind == EventKind::HostUnreachable));
}

#[tokio::test]
async fn invalid_documents_store_nothing() {
    let (_dir, d, _agents) = with_cluster().await;
    let bad = format!("{SPEC}---\nservice_type: osd\nservice_id: x\nplacement: {{host_pattern: '*'}}\ndata_devices: {{rotational: '0'}}\n");
    match d.apply(&bad, &ApplyQuery::default()).await {
        Err(DaemonError::InvalidSpecs(errors)) => assert_eq!(errors[0].doc, 1),
        _ => panic!("an invalid document must refuse the whole apply"),
    }
    assert!(d.store.specs().await.unwrap().is_empty());
}

// Removals on the simulated cluster (the same object serves as Ceph and as the agents).

async fn sim_daemon(pace: f64) -> (tempfile::TempDir, Arc<Daemon>, crate::sim::SimCluster) {
    let sim = crate::sim::field_report_cluster(20.0, 10.0, pace).manual_clock();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("d.db")).await.unwrap();
    let config = Config::resolve(FileConfig::default(), Overrides::default()).unwrap();
    let d = Daemon::new(store, Arc::new(sim.clone()), Arc::new(sim.clone()), config);
    for name in ["f5-422-01", "f5-422-02", "f5-422-03", "f5-422-04"] {
        let h = d.add_host(name, &format!("{name}:8741"), &[], true).await.unwrap();
        d.poll_host(&h).await.unwrap();
    }
    (dir, d, sim)
}

/// Removal rounds, with 20 ms of the simulated cluster's time between them.
async fn rounds_until(
    d: &Daemon,
    sim: &crate::sim::SimCluster,
    osd: u32,
    done: impl Fn(&crate::domain::removal::RemovalRecord) -> bool,
) -> crate::domain::removal::RemovalRecord {
    for _ in 0..200 {
        d.removal_round().await.unwrap();
        let all = d.store.removals(50).await.unwrap();
        let rec = all.into_iter().rfind(|r| r.removal.osd_id == osd).expect("a removal");
        if done(&rec) {
            return rec;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    panic!("removal of osd.{osd} did not get there");
}

#[tokio::test]
async fn removal_drains_purges_zaps_and_holds_the_disk() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    let req = removal::RemoveRequest { ids: vec![8, 15], zap: true, ..Default::default() };
    let recs = d.schedule_removals(&req).await.unwrap();
    assert_eq!(recs[0].removal.host, "f5-422-03");
    assert_eq!(recs[0].removal.devices, ["/dev/sdd"]);
    let rec = rounds_until(&d, &sim, 15, |r| r.removal.phase == crate::domain::removal::Phase::Done).await;
    assert_eq!(rec.removal.zapped, ["/dev/sde"]);
    assert!(sim.osds().iter().all(|o| o.id != 15), "purged");
    let actions = d.store.actions(rec.id).await.unwrap();
    let purges = actions.iter().filter(|a| a.effect.contains("purge")).count();
    let zaps = actions.iter().filter(|a| a.effect.contains("zap")).count();
    assert_eq!((purges, zaps), (1, 1), "{actions:?}");
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
}

// The worker looks again soon only where a gate is about to open: right
// after each action, and while the last PGs leave; not during the drain.
#[tokio::test]
async fn the_removal_worker_watches_gates_closely_and_long_drains_at_its_interval() {
    use crate::daemon::Pace;
    use crate::domain::removal::{cadence, Phase};
    let (_dir, d, sim) = sim_daemon(1.0).await;
    d.schedule_removals(&removal::RemoveRequest { ids: vec![15], zap: true, ..Default::default() }).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..2000 {
        let pace = d.removal_round().await.unwrap();
        let rec = d.store.removals(50).await.unwrap().into_iter().rfind(|r| r.removal.osd_id == 15).unwrap();
        seen.push((rec.removal.phase, rec.pgs_now, pace));
        if rec.removal.phase == Phase::Done {
            break;
        }
        sim.advance(std::time::Duration::from_millis(20));
    }
    assert_eq!(seen.last().unwrap().0, Phase::Done, "{seen:?}");
    let after_action = Pace::Within(cadence::AFTER_ACTION);
    let acted = seen.iter().filter(|s| s.2 == after_action).count();
    assert!(acted >= 3, "reweight, stop, purge and zap are each followed by a quick look: {seen:?}");
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
    d.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await.unwrap();
    rounds_until(&d, &sim, 3, |r| r.removal.phase == crate::domain::removal::Phase::Draining).await;
    assert_eq!(sim.osds().iter().find(|o| o.id == 3).unwrap().crush_weight, 0.0);
    // Errors: unknown, duplicate, already queued; none of them queues anything.
    assert!(matches!(
        d.schedule_removals(&removal::RemoveRequest { ids: vec![2, 99], ..Default::default() }).await,
        Err(DaemonError::NotFound(_))
    ));
    assert!(matches!(
        d.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await,
        Err(DaemonError::Conflict(_))
    ));
    assert!(d.store.active_removal_of(2).await.unwrap().is_none());
    d.stop_removals(&[3]).await.unwrap();
    let rec = rounds_until(&d, &sim, 3, |r| r.removal.phase == crate::domain::removal::Phase::Cancelled).await;
    assert_eq!(sim.osds().iter().find(|o| o.id == 3).unwrap().crush_weight, before, "{rec:?}");
    assert!(matches!(d.stop_removals(&[3]).await, Err(DaemonError::NotFound(_))));
}

#[tokio::test]
async fn replace_keeps_the_id_as_destroyed() {
    let (_dir, d, sim) = sim_daemon(50.0).await;
    d.schedule_removals(&removal::RemoveRequest { ids: vec![11], replace: true, ..Default::default() }).await.unwrap();
    rounds_until(&d, &sim, 11, |r| r.removal.phase == crate::domain::removal::Phase::Done).await;
    let osd = sim.osds().into_iter().find(|o| o.id == 11).expect("the id is kept");
    assert!(osd.destroyed);
}

/// An operator's zap holds the disk (and says so) before the agent wipes
/// it; a refusal lifts the hold again; no answer keeps it (it may be wiped).
#[tokio::test]
async fn a_zap_writes_its_intent_first() {
    let (_dir, d, agents) = with_cluster().await;
    // /dev/sdf on f5-422-01 is a free SSD in the fixture.
    let steps = d.zap_device("f5-422-01", "/dev/sdf", true).await.unwrap();
    assert!(steps.is_empty());
    assert!(d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "held after the zap");
    let events = d.store.events(None, 100).await.unwrap();
    let zap = events.iter().position(|e| e.kind == EventKind::Zap).expect("the intent is announced");
    let done = events.iter().position(|e| e.kind == EventKind::Zapped).expect("and the outcome");
    assert!(zap < done);
    d.release_device("f5-422-01", "/dev/sdf").await.unwrap();

    *agents.zap_error.lock().unwrap() =
        Some(AgentError::Refused { addr: "x".into(), status: 409, message: "/dev/sdf is busy".into() });
    assert!(matches!(d.zap_device("f5-422-01", "/dev/sdf", true).await, Err(DaemonError::RefusedUnsafe(_))));
    assert!(!d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "a refused zap wiped nothing");

    *agents.zap_error.lock().unwrap() = Some(AgentError::Timeout { addr: "x".into(), seconds: 30 });
    assert!(matches!(d.zap_device("f5-422-01", "/dev/sdf", true).await, Err(DaemonError::CannotAct(_))));
    assert!(d.store.holds().await.unwrap().iter().any(|h| h.path == "/dev/sdf"), "it may be wiped: still held");
}

/// Concurrent `osd rm stop` of one removal: each answers (stopped, or a
/// conflict/not found), none fails with "database is locked".
#[tokio::test]
async fn concurrent_rm_stop_never_fails_on_the_database() {
    let (_dir, d, sim) = sim_daemon(0.01).await;
    d.schedule_removals(&removal::RemoveRequest { ids: vec![3], ..Default::default() }).await.unwrap();
    rounds_until(&d, &sim, 3, |r| r.removal.phase == crate::domain::removal::Phase::Draining).await;
    let stops = (0..40).map(|_| {
        let d = d.clone();
        tokio::spawn(async move { d.stop_removals(&[3]).await })
    });
    let results = futures::future::join_all(stops).await;
    for r in results {
        match r.unwrap() {
            Ok(_) | Err(DaemonError::NotFound(_) | DaemonError::Conflict(_)) => {}
            Err(e) => panic!("a concurrent stop failed: {e:?}"),
        }
    }
}
