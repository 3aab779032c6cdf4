//! Disk probes through the daemon with in-process fake agents: the intent
//! and the probe stored before the agent is asked, refusals that ask the
//! agent nothing, a gated spec that waits for its disks' probes and refuses
//! a slow one, a probe a restart cut off, outliers.

use super::*;
use crate::domain::probe::ProbeMode;
use crate::wire::api::probes::{ProbeQuery, ProbeState};

/// What the fake agents answer to a probe: every job at 200 MB/s and
/// 9000 IOPS, the 4k sync writes at `sync_iops`.
pub(super) fn answer(request: &ProbeRequest, sync_iops: f64) -> ProbeResult {
    let jobs = crate::wire::agent::ProbeJob::ALL
        .into_iter()
        .map(|job| crate::wire::agent::JobFigures {
            job,
            bytes_per_sec: 200.0 * 1_048_576.0,
            iops: if job == crate::wire::agent::ProbeJob::SyncWrite4k { sync_iops } else { 9000.0 },
            mean_latency_us: 100.0,
            p99_latency_us: None,
            io_bytes: 1 << 20,
            runtime_ms: 5000,
        })
        .collect();
    ProbeResult {
        path: request.path.clone(),
        mode: request.mode,
        device_bytes: 1 << 40,
        region_bytes: 256 << 20,
        command: "fio".into(),
        fio_version: "fio-3.33".into(),
        jobs,
        fio_json: "{}".into(),
        steps: vec!["fake".into()],
        elapsed_ms: 20_000,
    }
}

const GATED: &str = "service_type: osd\nservice_id: gated\nplacement:\n  host_pattern: 'f5-422-0[12]'\ndata_devices:\n  rotational: 0\nosdkeeper:\n  probe:\n    min_sync_write_iops: 1000\n";

async fn dry(d: &Daemon) -> serde_json::Value {
    let q = ApplyQuery { dry_run: true, ..ApplyQuery::default() };
    serde_json::to_value(d.specs.apply(GATED, &q).await.expect("a dry-run")).unwrap()
}

fn row<'a>(dry: &'a serde_json::Value, host: &str) -> &'a serde_json::Value {
    dry["preview"].as_array().unwrap().iter().find(|r| r["host"] == host).unwrap()
}

fn reason(row: &serde_json::Value, path: &str) -> String {
    let s = row["skipped"].as_array().unwrap().iter().find(|s| s["path"] == path).unwrap_or_else(|| panic!("{row}"));
    s["reasons"][0].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_probe_needs_intent_and_a_blank_disk_and_asks_the_agent_only_then() {
    let (_dir, d, agents) = with_cluster().await;
    let e = d.benchmarks.schedule_probe("f5-422-01", "/dev/sdf", None, false).await.unwrap_err();
    assert!(matches!(&e, DaemonError::Invalid(m) if m.starts_with("must pass --yes-i-really-mean-it")), "{e:?}");
    let e = d.benchmarks.schedule_probe("f5-422-01", "/dev/sdb", None, true).await.unwrap_err();
    assert!(
        matches!(&e, DaemonError::RefusedUnsafe(m) if m.contains("its inventory says it is not blank")
            && m.contains("1 logical volume(s) on it")),
        "a disk with an OSD volume: {e:?}"
    );
    assert!(matches!(
        d.benchmarks.schedule_probe("f5-422-01", "/dev/sdz", None, true).await,
        Err(DaemonError::NotFound(_))
    ));
    assert!(matches!(
        d.benchmarks.schedule_probe("f5-422-99", "/dev/sdf", None, true).await,
        Err(DaemonError::NotFound(_))
    ));
    assert!(d.store.ops::<crate::store::ProbeCodec>().latest(10).await.unwrap().is_empty(), "a refusal stores nothing");

    let queued = d.benchmarks.schedule_probe("f5-422-01", "/dev/sdf", Some(ProbeMode::Full), true).await.unwrap();
    assert_eq!((queued.state, queued.mode), (ProbeState::Queued, ProbeMode::Full));
    assert_eq!(queued.disk, "Samsung_SSD_870_S1006", "kept for the disk's id, not its slot");
    assert!(!queued.by_slot);
    let e = d.benchmarks.schedule_probe("f5-422-01", "/dev/sdf", None, true).await.unwrap_err();
    assert!(matches!(&e, DaemonError::Conflict(m) if m.contains("already has a probe queued or running")), "{e:?}");
    assert!(agents.probes.lock().unwrap().is_empty(), "nothing is asked of the agent when it is queued");

    *agents.store.lock().unwrap() = Some(d.store.clone());
    d.benchmarks.round().await.unwrap();
    let asked = agents.probes.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    let (req, state_then) = &asked[0];
    assert_eq!(state_then.as_deref(), Some("running"), "marked running before the agent was asked");
    assert!(req.yes_i_really_mean_it);
    assert_eq!(req.device_id.as_deref(), Some("Samsung_SSD_870_S1006"), "the agent checks it is the same disk");
    let done = d.benchmarks.disk_probe(queued.probe_id).await.unwrap();
    assert_eq!(done.state, ProbeState::Done);
    assert_eq!(done.figures.unwrap().sync_write_iops, 5000.0);
    assert_eq!(done.jobs.len(), 4);
    assert_eq!(done.fio_json.as_deref(), Some("{}"), "fio's report is kept");
    let kinds: Vec<EventKind> = d.store.events(None, 50).await.unwrap().iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EventKind::ProbeRequested) && kinds.contains(&EventKind::ProbeFinished), "{kinds:?}");
}

#[tokio::test]
async fn a_gated_spec_waits_for_its_disks_probes_and_refuses_a_slow_disk() {
    let (_dir, d, agents) = with_cluster().await;
    let before = dry(&d).await;
    let r1 = row(&before, "f5-422-01");
    // sdd holds an OSD already (cephadm names it again; ceph-volume skips it): not a new disk.
    assert_eq!(r1["data"], serde_json::json!(["/dev/sdd"]), "{r1}");
    assert_eq!(
        reason(r1, "/dev/sdf"),
        "data_devices: waits for a disk probe (osdkeeper.probe): \
         `osdkeeper device probe HOST /dev/sdf --yes-i-really-mean-it`"
    );
    d.specs.apply(GATED, &ApplyQuery::default()).await.expect("applied");
    d.specs.reconcile_once().await.unwrap();
    assert!(
        d.store.ops::<crate::store::DeploymentCodec>().active().await.unwrap().is_empty(),
        "nothing is made before a probe"
    );

    // f5-422-01's disk is fast enough; one of f5-422-02's is not.
    agents.probe_iops.lock().unwrap().insert("/dev/sde".into(), 300.0);
    for (host, path) in [("f5-422-01", "/dev/sdf"), ("f5-422-02", "/dev/sdd"), ("f5-422-02", "/dev/sde")] {
        d.benchmarks.schedule_probe(host, path, None, true).await.unwrap();
    }
    let during = dry(&d).await;
    assert_eq!(
        reason(row(&during, "f5-422-01"), "/dev/sdf"),
        "data_devices: waits for its disk probe, queued or running (osdkeeper.probe)"
    );
    d.benchmarks.round().await.unwrap();

    let after = dry(&d).await;
    let r1 = row(&after, "f5-422-01");
    assert_eq!(r1["data"], serde_json::json!(["/dev/sdd", "/dev/sdf"]));
    assert_eq!(r1["probes"][0]["path"], "/dev/sdf", "the dry-run shows the disk's probe: {r1}");
    let r2 = row(&after, "f5-422-02");
    assert_eq!(r2["data"], serde_json::json!(["/dev/sdc", "/dev/sdd"]), "sdc holds an OSD already");
    let slow = d
        .benchmarks
        .disk_probes(&ProbeQuery::default())
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.path == "/dev/sde")
        .unwrap();
    assert_eq!(
        reason(r2, "/dev/sde"),
        format!(
            "data_devices: refused by osdkeeper.probe.min_sync_write_iops 1000: its 4k sync writes do 300 IOPS (probe {})",
            slow.probe_id
        )
    );
    // The finished probes make the reconciler plan again: one deployment per host, without the slow disk.
    d.specs.reconcile_once().await.unwrap();
    let active = d.store.ops::<crate::store::DeploymentCodec>().active().await.unwrap();
    let mut made: Vec<(String, Vec<String>)> =
        active.iter().map(|r| (r.state.host.clone(), r.state.disks().map(str::to_string).collect())).collect();
    made.sort();
    assert_eq!(made.len(), 2, "{made:?}");
    assert_eq!(made[0].0, "f5-422-01");
    assert!(made[0].1.contains(&"/dev/sdf".to_string()), "{made:?}");
    assert_eq!(made[1].0, "f5-422-02");
    assert!(made[1].1.contains(&"/dev/sdd".to_string()) && !made[1].1.contains(&"/dev/sde".to_string()), "{made:?}");
}

#[tokio::test]
async fn a_probe_cut_off_by_a_restart_is_failed_not_run_again_and_refusals_are_kept() {
    let (_dir, d, agents) = with_cluster().await;
    let p = d.benchmarks.schedule_probe("f5-422-03", "/dev/sdb", None, true).await.unwrap();
    // As if the daemon stopped right after it asked the agent: running, its action without an outcome.
    let probes = d.store.ops::<crate::store::ProbeCodec>();
    let op = probes.get(p.probe_id).await.unwrap();
    let running = |s: &mut crate::domain::probe::run::Probe| {
        s.phase = crate::domain::probe::run::ProbePhase::Running;
        Ok(true)
    };
    probes.update_active(std::slice::from_ref(&op.subject), 1, |_| None, running).await.unwrap();
    let intent = crate::domain::operation::Intent {
        effect: "probe",
        args: r#"{"effect":"probe"}"#.into(),
        detail: String::new(),
        destructive: true,
    };
    d.store.log_action(op.id, &intent, 1).await.unwrap();
    d.benchmarks.round().await.unwrap();
    let cut = d.benchmarks.disk_probe(p.probe_id).await.unwrap();
    assert_eq!(cut.state, ProbeState::Failed);
    assert!(cut.error.unwrap().starts_with("the daemon stopped while this probe ran; it is not run again"));
    assert!(agents.probes.lock().unwrap().is_empty(), "never run twice");

    // A busy agent ran nothing: the probe waits in the queue for the next round.
    *agents.probe_error.lock().unwrap() = Some(AgentError::Busy {
        addr: "f5-422-03:8741".into(),
        message: "another command that changes this host's disks or daemons is still running on this host".into(),
    });
    let waiting = d.benchmarks.schedule_probe("f5-422-03", "/dev/sdb", None, true).await.unwrap();
    d.benchmarks.round().await.unwrap();
    assert_eq!(d.benchmarks.disk_probe(waiting.probe_id).await.unwrap().state, ProbeState::Queued);
    *agents.probe_error.lock().unwrap() = None;
    d.benchmarks.round().await.unwrap();
    assert_eq!(
        d.benchmarks.disk_probe(waiting.probe_id).await.unwrap().state,
        ProbeState::Done,
        "run once the agent is free"
    );

    *agents.probe_error.lock().unwrap() = Some(AgentError::Refused {
        addr: "f5-422-03:8741".into(),
        status: 409,
        message: "refusing to probe /dev/sdc: it is not blank: it has a BlueStore label (osd.3); nothing was written"
            .into(),
    });
    let p = d.benchmarks.schedule_probe("f5-422-03", "/dev/sdc", None, true).await.unwrap();
    d.benchmarks.round().await.unwrap();
    let refused = d.benchmarks.disk_probe(p.probe_id).await.unwrap();
    assert_eq!(refused.state, ProbeState::Failed);
    assert!(refused.error.unwrap().contains("the agent on f5-422-03 refused: refusing to probe /dev/sdc"));
    // A gated spec then says why the disk still waits.
    let spec = GATED.replace("f5-422-0[12]", "f5-422-03");
    let q = ApplyQuery { dry_run: true, ..ApplyQuery::default() };
    let out = serde_json::to_value(d.specs.apply(&spec, &q).await.ok().unwrap()).unwrap();
    let why = reason(row(&out, "f5-422-03"), "/dev/sdc");
    assert!(why.starts_with("data_devices: waits for a disk probe (osdkeeper.probe): the last one failed (the agent on f5-422-03 refused"), "{why}");
}

#[tokio::test]
async fn a_disk_far_below_its_kind_is_marked() {
    let (_dir, d, agents) = with_cluster().await;
    agents.probe_iops.lock().unwrap().insert("/dev/sdc".into(), 150.0);
    let disks = [
        ("f5-422-01", "/dev/sdf"),
        ("f5-422-02", "/dev/sdd"),
        ("f5-422-02", "/dev/sde"),
        ("f5-422-03", "/dev/sdb"),
        ("f5-422-03", "/dev/sdc"),
    ];
    for (host, path) in disks {
        d.benchmarks.schedule_probe(host, path, None, true).await.unwrap();
    }
    d.benchmarks.round().await.unwrap();
    let rows = d.benchmarks.disk_probes(&ProbeQuery::default()).await.unwrap();
    let marked: Vec<(&str, &str)> =
        rows.iter().filter(|p| p.outlier.is_some()).map(|p| (p.host.as_str(), p.path.as_str())).collect();
    let sizes: Vec<Option<u64>> = rows.iter().map(|p| p.size_bytes).collect();
    assert_eq!(marked, [("f5-422-03", "/dev/sdc")], "sizes {sizes:?}: {rows:#?}");
    let o = rows.iter().find_map(|p| p.outlier.clone()).unwrap();
    assert!(o.starts_with("f5-422-03:/dev/sdc: 4k sync writes 150 IOPS, the other "), "{o}");
    let events = d.store.events(None, 100).await.unwrap();
    let e = events.iter().find(|e| e.kind == EventKind::ProbeOutlier).expect("an outlier event");
    assert_eq!(e.message, o);
    let listed = d.inventory.devices(&Default::default()).await.unwrap();
    let dev = listed
        .items
        .iter()
        .find(|h| h.host == "f5-422-03")
        .unwrap()
        .devices
        .iter()
        .find(|x| x.path == "/dev/sdc")
        .unwrap();
    assert_eq!(dev.probe.as_ref().unwrap().outlier.as_deref(), Some(o.as_str()), "device ls shows it");
}
